"""prop.order_total: reviewed orders total to the reviewed amounts."""

import json

from orders.total import order_total_cents


def test_order_total(oracle_fixtures):
    for order in json.loads((oracle_fixtures / "orders.json").read_text()):
        lines = [tuple(line) for line in order["lines"]]
        assert order_total_cents(lines, order["region"]) == order["total"], order
