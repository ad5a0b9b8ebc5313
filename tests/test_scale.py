"""Scale: a suite kept one property per file. Collection grows linearly with the files."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

from conftest import ROOT, cli


def _gen_suite():  # benchmarks/gen_suite.py, the same generator the benchmark uses
    spec = importlib.util.spec_from_file_location("gen_suite", ROOT / "benchmarks" / "gen_suite.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_two_thousand_one_file_properties_are_promoted(tmp_path: Path) -> None:
    repo = _gen_suite().generate(tmp_path / "suite", 2000, hypothesis_share=0.0)
    proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle",
               "--out", str(tmp_path / "out"))
    assert "Traceback" not in proc.stderr
    verdicts = json.loads((tmp_path / "out" / "verdicts.json").read_text())
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert verdicts["outcome"] == "promoted" and verdicts["counts"]["pass"] == 2000
    # progress while a large suite collects (each of the --jobs processes collects its share)
    assert re.search(r"collecting \d+ property files", proc.stderr)
