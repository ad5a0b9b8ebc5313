"""The oracle's own reference implementations (imported by the properties, never by the candidate)."""


def tax_reference(amount_cents: int, rate_bp: int) -> int:
    return (amount_cents * rate_bp + 5_000) // 10_000
