"""A stack checked against a list by a state machine: rule, invariant, precondition, initialize, Bundle,
consumes and multiple (the stateful tests of the matrix share it)."""
import feat
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
)

SETTINGS = settings(max_examples=30, stateful_step_count=8)


class StackMachine(RuleBasedStateMachine):
    make = feat.Stack
    pushed = Bundle("pushed")

    def __init__(self):
        super().__init__()
        self.stack = self.make()
        self.model = []

    @initialize(target=pushed, values=st.lists(st.integers(0, 9), min_size=1, max_size=2))
    def start(self, values):
        for value in values:
            self.stack.push(value)
            self.model.append(value)
        return multiple(*values)

    @rule(target=pushed, value=st.integers(0, 9))
    def push(self, value):
        self.stack.push(value)
        self.model.append(value)
        return value

    @rule(value=consumes(pushed))
    def forget(self, value):
        assert value in range(10)

    @precondition(lambda self: self.model)
    @rule()
    def pop(self):
        assert self.stack.pop() == self.model.pop()

    @invariant()
    def sizes_agree(self):
        assert self.stack.size() == len(self.model)


class BadStackMachine(StackMachine):
    make = feat.BadStack
