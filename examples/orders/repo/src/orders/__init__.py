"""A small order service: line totals and tax in integer cents."""
