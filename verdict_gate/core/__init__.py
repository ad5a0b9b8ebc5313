"""The pure core: the verdict table, signatures, digests, the diff split, catalog, ledger,
promotion and scoring. It reads no environment, clock or network and imports nothing outside
``core/`` (tests/test_layout.py checks it)."""
