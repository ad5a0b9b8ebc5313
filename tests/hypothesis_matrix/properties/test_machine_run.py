"""run_state_machine_as_test in a plain test."""
from hypothesis.stateful import run_state_machine_as_test
from machines import SETTINGS, BadStackMachine, StackMachine


def test_ok():
    run_state_machine_as_test(StackMachine, settings=SETTINGS)


def test_bad():
    run_state_machine_as_test(BadStackMachine, settings=SETTINGS)
