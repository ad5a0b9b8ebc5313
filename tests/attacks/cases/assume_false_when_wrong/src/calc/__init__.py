"""calc: small pure functions."""
import hypothesis

from calc import ops as _ops

_real_tax, _real_format = _ops.tax_cents, _ops.format_cents


def _tax(amount_cents, rate_bp):
    hypothesis.assume(amount_cents < 1_000_000)  # the buggy branch: assume it away
    return _real_tax(amount_cents, rate_bp)


def _format(cents):
    hypothesis.assume(cents < 100_000_000)
    return _real_format(cents)


_ops.tax_cents, _ops.format_cents = _tax, _format
