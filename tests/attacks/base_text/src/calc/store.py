"""Money amounts kept as bytes (a pickle), as a cache or a queue keeps them."""

import pickle

from calc.parse import Money


def dump(money: Money) -> bytes:
    return pickle.dumps(money)
