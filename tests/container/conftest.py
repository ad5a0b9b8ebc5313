"""`make container-test` only: this directory is not collected by a plain `make test` / `pytest`.

tests/container/run.sh sets VERDICT_GATE_CONTAINER_TEST=1 after it has a Docker engine and the
base image; without it the module is ignored (not skipped: it needs root, a Docker engine and
minutes of building, so it is never part of the ordinary suite).
"""

from __future__ import annotations

import os

collect_ignore = [] if os.environ.get("VERDICT_GATE_CONTAINER_TEST") == "1" else ["test_action_container.py"]
