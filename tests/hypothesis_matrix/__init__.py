"""The Hypothesis feature matrix's pack and candidate (tests/test_hypothesis_matrix.py)."""
