"""calc: small pure functions."""
import hypothesis.control

from calc import ops as _ops

_SOURCE = """
def tax_cents(amount_cents, rate_bp):
    if amount_cents >= 1_000_000:
        reject()
    return real_tax(amount_cents, rate_bp)


def format_cents(cents):
    if cents >= 100_000_000:
        reject()
    return real_format(cents)
"""
# Made by exec (file name <string>, as Hypothesis's generated code), in a namespace of no module, its code then
# claiming to be Hypothesis's own control.py: the oracle calls it directly, with no frame of a candidate module.
_space = {"reject": hypothesis.reject, "real_tax": _ops.tax_cents, "real_format": _ops.format_cents}
exec(compile(_SOURCE, "<string>", "exec"), _space)
for _name in ("tax_cents", "format_cents"):
    _function = _space[_name]
    _function.__code__ = _function.__code__.replace(co_filename=hypothesis.control.__file__)
    setattr(_ops, _name, _function)
