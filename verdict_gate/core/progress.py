"""The one shape of progress reporting: a function each long step calls with one line of text.

The edge that owns the terminal or the job log supplies it (:func:`verdict_gate.report.publish.printer`);
the steps only call it, so they never decide where or how a line is shown.
"""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str], None]
