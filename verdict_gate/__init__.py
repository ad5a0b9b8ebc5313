"""verdict-gate: score a patch against a protected oracle with pass, fail or inconclusive."""

__version__ = "0.1.0"
