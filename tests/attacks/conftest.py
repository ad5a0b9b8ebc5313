"""The attack corpus's fixtures and hooks live in attack_harness.py; this file wires them in."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from attack_harness import (  # noqa: E402
    arena,
    attack_base,
    frozen_arena,
    frozen_base,
    gate_cache,
    hypothesis_arena,
    hypothesis_base,
    inplace_arena,
    inplace_base,
    mixed_arena,
    mixed_base,
    pytest_sessionfinish,
    pytest_terminal_summary,
    shared_arena,
    shared_base,
    text_arena,
    text_base,
)

__all__ = ["arena", "attack_base", "text_arena", "text_base", "frozen_arena", "frozen_base", "gate_cache",
           "hypothesis_arena", "hypothesis_base", "inplace_arena", "inplace_base", "mixed_arena", "mixed_base",
           "pytest_sessionfinish", "pytest_terminal_summary", "shared_arena", "shared_base"]

# pytest must never collect the patches, the base project's oracle, the bugs or the kit as tests.
collect_ignore = ["base", "base_inplace", "base_frozen", "base_text", "base_mixed", "base_shared", "base_hypothesis",
                  "broken",
                  "broken_prop", "kit", "cases", "controls", "limits"]
