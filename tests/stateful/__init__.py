"""Real suites built on Hypothesis's stateful testing (tests/test_stateful_suite.py)."""
