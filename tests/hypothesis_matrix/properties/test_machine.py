"""A RuleBasedStateMachine's TestCase."""
from machines import SETTINGS, BadStackMachine, StackMachine

TestOk = StackMachine.TestCase
TestOk.settings = SETTINGS
TestBad = BadStackMachine.TestCase
TestBad.settings = SETTINGS
