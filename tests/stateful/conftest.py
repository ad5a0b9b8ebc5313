"""The real suites here are data for tests/test_stateful_suite.py, never collected themselves."""

collect_ignore = ["pyrsistent"]
