"""Catalog and ledger input refused cleanly and cheaply; flags and --out blamed correctly;
a catalog node that does not exist is a configuration error; the package metadata is complete."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from conftest import ROOT
from verdict_gate.core import catalog as catalog_mod
from verdict_gate.core.catalog import CATALOG_MAX_BYTES
from verdict_gate.core.errors import GateError, VoidError
from verdict_gate.core.ledger import parse_date
from verdict_gate.host.files import parse_catalog, parse_ledger, read_utf8
from verdict_gate.report.writer import check_out_dir, check_out_file
from verdict_gate.run.collected import check_collected

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)

FREEZE = json.loads((ROOT / "examples" / "orders" / "freeze_ledger.json").read_text())["freezes"][0]
PROPS = "properties:\n  - {id: a, oracle: properties/a.py, timeout: TIMEOUT}\n"


@pytest.mark.parametrize("value", [".nan", ".NaN", ".inf", "-.inf", ".Inf"])
def test_non_finite_timeout_is_refused(value: str) -> None:
    with pytest.raises(GateError, match=r"\$\.properties\[0\]\.timeout: is not a finite number"):
        parse_catalog("version: 1\n" + PROPS.replace("TIMEOUT", value), "c.yaml")


def test_non_finite_is_void_in_a_pack() -> None:
    with pytest.raises(VoidError):
        parse_catalog("version: 1\n" + PROPS.replace("TIMEOUT", ".nan"), "c.yaml", void=True)


def test_the_schema_caps_the_timeout_too() -> None:
    with pytest.raises(GateError, match="timeout"):
        parse_catalog("version: 1\n" + PROPS.replace("TIMEOUT", "1e400"), "c.yaml")  # YAML reads inf


@pytest.fixture
def yaml_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The YAML work a test's parse did: each call of PyYAML's parser (events only) and of its loader
    (which would build, and expand, the document). Counted, not timed: the tests hold on a busy machine."""
    calls: list[str] = []

    def counted(name: str):  # type: ignore[no-untyped-def]
        real = getattr(yaml, name)

        def call(*args, **kwargs):  # type: ignore[no-untyped-def]
            calls.append(name)
            return real(*args, **kwargs)
        return call

    for name in ("parse", "load"):
        monkeypatch.setattr(yaml, name, counted(name))
    return calls


def test_billion_laughs_is_refused_before_anything_is_built(yaml_calls: list[str]) -> None:
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 10):
        lines.append(f"{chr(97 + i)}: &{chr(97 + i)} [" + ", ".join([f"*{chr(96 + i)}"] * 9) + "]")
    with pytest.raises(GateError, match="anchor or alias"):
        parse_catalog("\n".join(lines) + "\nversion: 1\n", "c.yaml")
    assert yaml_calls == ["parse"]  # parser events only: the loader never expanded an alias


def test_size_is_capped_before_parsing(tmp_path: Path, yaml_calls: list[str]) -> None:
    big = "version: 1\n" + "# x\n" * (CATALOG_MAX_BYTES // 4 + 10)
    with pytest.raises(GateError, match="limit"):
        parse_catalog(big, "c.yaml")
    assert yaml_calls == []  # refused by its size alone
    path = tmp_path / "catalog.yaml"
    path.write_text(big)
    with pytest.raises(GateError, match="limit"):
        read_utf8(path, "catalog", "fix it")


def test_libyaml_loader_is_used_where_present() -> None:
    if getattr(yaml, "__with_libyaml__", False):
        assert catalog_mod._SafeLoader is yaml.CSafeLoader
    assert issubclass(catalog_mod._SafeLoader, (yaml.SafeLoader, getattr(yaml, "CSafeLoader", yaml.SafeLoader)))


def test_python_objects_stay_refused() -> None:
    with pytest.raises(GateError, match="YAML"):
        parse_catalog("version: 1\nx: !!python/object/apply:os.system ['true']\n" + PROPS.replace("TIMEOUT", "1"),
                      "c.yaml")


def test_duplicate_freezes_are_refused_on_load() -> None:
    text = json.dumps({"version": 1, "freezes": [FREEZE, dict(FREEZE, reason="again")]})
    with pytest.raises(GateError, match=r"same failure .* as \$\.freezes\[0\]"):
        parse_ledger(text, "l.json")


def test_ledger_of_ten_thousand_freezes_loads() -> None:
    freezes = [dict(FREEZE, base_revision=f"{i:040x}") for i in range(10_000)]
    text = json.dumps({"version": 1, "freezes": freezes})
    assert len(text) < 32 * 1024 * 1024
    assert len(parse_ledger(text, "l.json").freezes) == 10_000


@pytest.mark.parametrize("value", ["2026-W01-1", "20260101", "2026-1-1", "2026-01-01T00:00", " 2026-01-01",
                                   "2026-01-01\n", "2026-02-30", "", "soon"])
def test_dates_are_yyyy_mm_dd_only(value: str) -> None:
    with pytest.raises(GateError) as info:
        parse_date(value, "--today", repr(value))
    assert "YYYY-MM-DD" in str(info.value)


def test_good_date() -> None:
    assert parse_date("2026-02-28", "--today", "x").isoformat() == "2026-02-28"


def test_out_checks(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(GateError, match="not a directory"):
        check_out_dir(tmp_path / "file")
    with pytest.raises(GateError, match="is a file"):
        check_out_dir(tmp_path / "file" / "sub")
    with pytest.raises(GateError, match="kernel file system"):
        check_out_dir(Path("/proc/self/x"))
    with pytest.raises(GateError, match="kernel file system"):
        check_out_file(Path("/sys/x.json"), "base.sig.json")
    (tmp_path / "link").symlink_to(tmp_path)
    with pytest.raises(GateError, match="symbolic link"):
        check_out_dir(tmp_path / "link")
    check_out_dir(tmp_path / "new" / "deeper")  # not created, but creatable
    assert not (tmp_path / "new").exists()


def test_unwritable_out(tmp_path: Path) -> None:
    import os

    if os.geteuid() == 0:
        pytest.skip("root writes anywhere a mode allows nothing")
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    with pytest.raises(GateError, match="not writable"):
        check_out_dir(ro / "evidence")


def test_uncollected_node_is_a_configuration_error() -> None:
    prop = SimpleNamespace(id="prop.a", oracle="properties/test_a.py", node="test_typo")
    p = SimpleNamespace(catalog=SimpleNamespace(properties=[prop], source="git:main:oracle/catalog.yaml"))
    check_collected(p, SimpleNamespace(uncollected=[]))
    with pytest.raises(GateError) as info:
        check_collected(p, SimpleNamespace(uncollected=["prop.a"]))
    assert info.value.exit_code == 2
    text = str(info.value)
    assert "$.properties[0] 'prop.a'" in text and "test_typo" in text and "properties/test_a.py" in text
    assert "node:" in text


def test_package_metadata() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = meta["project"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert project["authors"] and project["urls"]["Source"].startswith("https://")
    assert any(c.startswith("License") for c in project["classifiers"]) is False  # PEP 639: no licence classifier
    assert "Programming Language :: Python :: 3.11" in project["classifiers"]
    # setuptools 77 is the first with PEP 639 `license = "MIT"`; the bound was built with 77.0.3
    assert meta["build-system"]["requires"] == ["setuptools>=77"]
    runtime = {line.split("==")[0].lower() for line in (ROOT / "requirements" / "runtime.txt").read_text().splitlines()
               if "==" in line}
    for dep in project["dependencies"]:
        name = dep.split(">")[0].split("=")[0].strip().lower()
        assert name in runtime, f"{name} is a dependency but not pinned in requirements/runtime.txt"


def test_make_test_builds_and_checks_the_package() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "test: lint package unit" in makefile
    assert "python -m build" in makefile and "twine check --strict" in makefile
    dev_in = (ROOT / "requirements" / "dev.in").read_text().split()
    assert "build" in dev_in and "twine" in dev_in
    dev = (ROOT / "requirements" / "dev.txt").read_text()
    assert "\nbuild==" in dev and "\ntwine==" in dev
