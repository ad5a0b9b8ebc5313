"""APIs that take the caller's objects: a notifier, an order to charge, a tally to fill, a sink a generator
posts to, a rate lookup."""


def _tax(amount, rate):
    return (amount * rate + 5_000) // 10_000


def settle(amount, rate, notify):
    """Settle ``amount``: ``notify(amount, tax)`` once."""
    notify(amount, _tax(amount, rate))


def order_tax(amounts, rate):
    """The tax of an order: the sum of each amount's tax."""
    return sum(_tax(a, rate) for a in amounts)


class memoized:  # noqa: N801 - named like functools.cached_property, which it imitates
    """A method's value computed once per instance and kept as the instance's attribute of the same name."""

    def __init__(self, func):
        self.func = func
        self.name = None

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = self.func(instance)
        setattr(instance, self.name, value)
        return value


def tally_taxes(amounts, rate, tally):
    """Add each amount's tax to ``tally`` and set its ``count``."""
    for amount in amounts:
        tally.add(_tax(amount, rate))
    tally.count = len(amounts)


def stream_taxes(amounts, rate, sink):
    """Post each amount's tax to ``sink(amount, tax)``, yielding each amount once it is posted."""
    for amount in amounts:
        sink(amount, _tax(amount, rate))
        yield amount


def convert_all(codes, rate_of):
    """``{code: rate_of(code)}``; an error of ``rate_of`` propagates."""
    return {code: rate_of(code) for code in codes}
