"""``python -m verdict_gate``: the ``verdict-gate`` command line."""

import sys

from verdict_gate.cli import main

if __name__ == "__main__":
    sys.exit(main())
