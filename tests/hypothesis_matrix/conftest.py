"""The Hypothesis feature matrix's pack and candidate are data for tests/test_hypothesis_matrix.py, never collected
themselves."""

collect_ignore = ["properties", "src"]
