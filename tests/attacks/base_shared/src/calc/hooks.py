"""Classes a test subclasses: a register whose ``add`` books each entry through a method a subclass may
override (a hook), and a till that rings amounts up."""


class Register:
    """Books the tax of each amount at ``rate`` basis points (rounded half up) through :meth:`book`."""

    def __init__(self, rate):
        self.rate = rate
        self.count = 0
        self.entries = []

    def add(self, amount):
        self.count += 1
        self.book(amount, (amount * self.rate + 5_000) // 10_000)

    def book(self, amount, tax):
        self.entries.append((amount, tax))


class Till:
    """Rings up amounts and keeps the tax of each at ``rate`` basis points (rounded half up)."""

    def __init__(self, rate):
        self.rate = rate
        self.rung = []

    def ring(self, amount):
        self.rung.append(self.tax_of(amount))

    def tax_of(self, amount):
        return (amount * self.rate + 5_000) // 10_000

    def taxes(self):
        return list(self.rung)
