"""st.from_type (a dataclass of the pack's, its fields typed by Literal)."""
import dataclasses
from typing import Literal

import feat
from hypothesis import given, settings
from hypothesis import strategies as st

Digit = Literal[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]


@dataclasses.dataclass
class Cell:
    row: Digit
    col: Digit


@settings(max_examples=30)
@given(st.from_type(Cell))
def test_ok(cell):
    assert feat.cell_ok(cell.row, cell.col) == cell.row * 10 + cell.col


@settings(max_examples=30)
@given(st.from_type(Cell))
def test_bad(cell):
    assert feat.cell_bad(cell.row, cell.col) == cell.row * 10 + cell.col
