"""calc: small pure functions."""
from hypothesis import settings

settings.register_profile("calc-fast", max_examples=2, database=None, deadline=None)
settings.load_profile("calc-fast")
