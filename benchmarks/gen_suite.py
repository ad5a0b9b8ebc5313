"""Generate a gateable repository with N one-file properties (for benchmarks and the scale test).

Reproduce:  .venv/bin/python benchmarks/gen_suite.py DIR --properties 2000 [--hypothesis-share 0.3]
            [--per-file 100]

The repository has `src/calc.py` (a few pure functions), `oracle/` with one property per file
under `oracle/properties/` (`test_p0000.py` …): a share of seeded Hypothesis properties at 50
examples (`kind: property`), the rest plain examples (`kind: example`), the catalog and the
manifest. With `--per-file K`, K test functions share a file (`test_f000.py` …), each its own
property (the catalog's `node:`). `main` holds it; branch `candidate` adds a harmless commit, so
`verdict-gate run --repo DIR --base main --pack git:main:oracle` promotes it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CALC = '''def add(a, b):
    return a + b


def mul(a, b):
    return a * b


def clamp(x, lo, hi):
    return max(lo, min(hi, x))
'''

EXAMPLE = '''from calc import add, mul


def test_p{i:04d}():
    assert add({i}, 1) == {i} + 1
    assert mul({i}, 2) == {i} * 2
'''

HEADER = '''from hypothesis import given, settings, strategies as st
from calc import add, clamp, mul


'''

HYPOTHESIS = '''from hypothesis import given, settings, strategies as st
from calc import clamp


@settings(max_examples=50)
@given(st.integers(-1000, 1000))
def test_p{i:04d}(x):
    assert -{i} <= clamp(x, -{i}, {i}) <= {i}
'''

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@example.invalid", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", "-C", str(repo), *args],
                   check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def generate(repo: Path, properties: int, hypothesis_share: float = 0.3, fresh_examples: int | str | None = None,
             isolation: str | None = None, per_file: int = 1) -> Path:
    """Write and commit the repository; returns ``repo``. ``fresh_examples`` and ``isolation`` set the
    catalog's (``None``: the gate's default)."""
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "calc.py").write_text(CALC)
    props_dir = repo / "oracle" / "properties"
    props_dir.mkdir(parents=True)
    (repo / "oracle" / "fixtures").mkdir()
    catalog = ["version: 1", "seed: 7", "pack_root: oracle", "python_path: [src]"]
    if fresh_examples is not None:
        catalog.append(f"fresh_examples: {json.dumps(fresh_examples)}")  # "20%" quoted, 0 as it is
    if isolation is not None:
        catalog.append(f"isolation: {isolation}")
    catalog.append("properties:")
    every = round(1 / hypothesis_share) if hypothesis_share > 0 else 0
    files: dict[str, list[str]] = {}
    for i in range(properties):
        seeded = every and i % every == 0
        text = (HYPOTHESIS if seeded else EXAMPLE).format(i=i + 1)
        name = f"test_p{i:04d}.py" if per_file == 1 else f"test_f{i // per_file:03d}.py"
        files.setdefault(name, []).append(text if per_file == 1 else text.split("\n\n\n", 1)[1])
        catalog += [f"  - id: prop.p{i:04d}", f"    oracle: properties/{name}",
                    f"    kind: {'property' if seeded else 'example'}"]
        if per_file > 1:
            catalog.append(f"    node: test_p{i + 1:04d}")
    for name, parts in files.items():
        head = "" if per_file == 1 else HEADER
        (props_dir / name).write_text(head + "\n\n".join(parts))
    (repo / "oracle" / "catalog.yaml").write_text("\n".join(catalog) + "\n")
    (repo / "oracle" / "freeze_ledger.json").write_text(json.dumps({"version": 1, "freezes": []}) + "\n")
    subprocess.run([sys.executable, "-m", "verdict_gate", "manifest", "write", str(repo / "oracle")], check=True,
                   capture_output=True)
    _git(repo, "init", "--quiet")
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", "base")
    _git(repo, "checkout", "--quiet", "-b", "candidate")
    (repo / "README.md").write_text("a harmless change\n")
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", "candidate")
    return repo


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path, help="where to create the repository (must not exist)")
    parser.add_argument("--properties", type=int, default=2000)
    parser.add_argument("--hypothesis-share", type=float, default=0.3)
    parser.add_argument("--fresh-examples", default=None, type=lambda v: int(v) if v.isdigit() else v,
                        help="the catalog's: a count or P%% (default: the gate's)")
    parser.add_argument("--isolation", choices=["sandbox", "process", "none"], default=None)
    parser.add_argument("--per-file", type=int, default=1, help="test functions per file (default 1)")
    args = parser.parse_args()
    generate(args.dir, args.properties, args.hypothesis_share, args.fresh_examples, args.isolation, args.per_file)
    print(f"{args.dir}: {args.properties} properties")
    return 0


if __name__ == "__main__":
    sys.exit(main())
