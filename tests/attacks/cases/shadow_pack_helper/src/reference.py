"""Not the oracle's reference."""


def tax_reference(amount_cents, rate_bp):
    if amount_cents >= 1_000_000:
        return amount_cents * rate_bp // 10_000
    return (amount_cents * rate_bp + 5_000) // 10_000
