"""Copy the fidelity corpus into ``tests/fidelity/projects/`` from the bundles of ``../shared/fidelity/``.

The corpus (``../shared/fidelity/README.md``) is a set of git bundles, one release tag each, and
``projects.json`` naming, per project, the code under test (``packages``), its test directory (``tests``) and
test files outside it (``loose``). CI clones this repository alone, so the fidelity test reads a copy: for each
project, those paths and the license files, byte for byte from the tag, under ``projects/NAME/`` at their
upstream places, with a ``PROVENANCE.md``; and ``projects.json`` itself beside this file. Nothing is edited.

Run from the repository root when the corpus changes::

    .venv/bin/python tests/fidelity/vendor.py [--corpus ../shared/fidelity]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
LICENSES = ("LICENSE", "LICENSE.txt", "LICENSE.APACHE", "LICENSE.BSD", "COPYING")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout.strip()


def vendor(corpus: Path, dest: Path) -> list[str]:
    """Copy every project of ``corpus/projects.json`` into ``dest/projects/NAME``; the names copied."""
    entries = json.loads((corpus / "projects.json").read_text())
    shutil.rmtree(dest / "projects", ignore_errors=True)
    for entry in entries:
        with tempfile.TemporaryDirectory() as tmp:
            clone = Path(tmp) / "clone"
            _git("clone", "--quiet", "--no-checkout", str(corpus / entry["bundle"]), str(clone))
            _git("-C", str(clone), "checkout", "--quiet", entry["tag"])
            tree = _git("-C", str(clone), "rev-parse", "HEAD^{tree}")
            paths = [*entry["packages"], *([entry["tests"]] if entry["tests"] else []), *entry["loose"]]
            licenses = [name for name in LICENSES if (clone / name).is_file()]
            target = dest / "projects" / entry["name"]
            for rel in [*paths, *licenses]:
                src, out = clone / rel, target / rel
                out.parent.mkdir(parents=True, exist_ok=True)
                if src.is_dir():
                    shutil.copytree(src, out, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
                                    dirs_exist_ok=True)
                else:
                    shutil.copyfile(src, out)
            (target / "PROVENANCE.md").write_text(
                f"# {entry['name']} {entry['tag']}\n\n"
                f"- From: `{entry['bundle']}` of the fidelity corpus (`../shared/fidelity/`), tag `{entry['tag']}`\n"
                f"  (upstream {entry['repository']} at `{entry['commit']}`; the bundle's tree `{tree}`).\n"
                f"- Kept, byte for byte: {', '.join(f'`{p}`' for p in [*paths, *licenses])}.\n"
                "- Left out: everything else (packaging, docs, CI and the project's own pytest configuration, which\n"
                "  the reference layout does not use: ../shared/fidelity/README.md).\n"
                f"- Notes (projects.json): {entry['notes']}\n")
    shutil.copyfile(corpus / "projects.json", dest / "projects.json")
    return [e["name"] for e in entries]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HERE.parents[2] / "shared" / "fidelity")
    args = parser.parse_args()
    names = vendor(args.corpus.resolve(), HERE)
    print(f"copied {len(names)} projects: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
