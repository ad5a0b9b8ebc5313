"""Order totals in integer cents."""

from orders.tax import region_rate_bp, tax_cents


def subtotal_cents(lines: list[tuple[int, int]]) -> int:
    """Sum of quantity × unit price (cents) over ``(quantity, unit_price_cents)`` lines."""
    return sum(quantity * unit for quantity, unit in lines)


def order_total_cents(lines: list[tuple[int, int]], region: str) -> int:
    """Subtotal plus the region's tax, in cents."""
    subtotal = subtotal_cents(lines)
    return subtotal + tax_cents(subtotal, region_rate_bp(region))
