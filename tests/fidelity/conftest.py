"""The fidelity test's real suites are data for tests/test_fidelity.py, never collected themselves."""

collect_ignore = ["projects", "recorder"]
