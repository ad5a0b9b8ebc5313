# verdict-gate: `make demo` and `make test` work on a fresh clone with Python 3.11+, git, make and
# bubblewrap (installed here when missing and run as root with apt-get; else the fix is printed).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: install bubblewrap check fast test test-loaded unit lint package demo self-gate bench clean \
	container-test attacks-landlock fidelity fidelity-slow

install: $(STAMP)

# A venv with the hashed, pinned requirements, then the project itself (editable, no deps).
$(STAMP): requirements/dev.txt requirements/runtime.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "verdict-gate needs Python 3.11 or newer; run: make PYTHON=python3.11 ...")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements/dev.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@command -v bwrap >/dev/null 2>&1 || $(MAKE) --no-print-directory bubblewrap
	@touch $(STAMP)

# The candidate worker's default sandbox (docs/design.md §8.2) needs bubblewrap.
bubblewrap:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get install -y -qq bubblewrap >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq bubblewrap; }; \
	else \
		echo "verdict-gate: bubblewrap (bwrap) is not installed; the default isolation level needs it."; \
		echo "  fix: sudo apt-get install bubblewrap (Debian/Ubuntu), then check with: $(BIN)/verdict-gate doctor"; \
	fi

# The change loop: lint and the fast tests (pytest -m fast), under a minute on two cores.
check: lint fast

# Everything (the README's test command, and CI's): lint, the package build and the whole suite,
# spread over the machine's cores (pytest-xdist; PYTEST_WORKERS=N to choose).
test: lint package unit

PYTEST_WORKERS ?= auto

# `make test` with every core busy beside it: one CPU hog (a Python busy loop, at the suite's own priority) per
# core, killed when the suite ends however it ends (and each hog ends itself once its shell is gone). No test may
# depend on the machine's speed or load (tests/README.md, "Timing"); this is how that is shown. HOGS=N to choose.
HOGS ?= $(shell nproc 2>/dev/null || echo 2)
HOG := import os; parent = os.getppid()\nwhile os.getppid() == parent: pass

test-loaded: $(STAMP)
	@pids=""; trap 'kill $$pids 2>/dev/null' EXIT INT TERM HUP PIPE; \
	for i in $$(seq $(HOGS)); do $(PYTHON) -c "$$(printf '$(HOG)')" & pids="$$pids $$!"; done; \
	echo "test-loaded: $(HOGS) CPU hog(s) beside make test (pids$$pids)"; start=$$(date +%s); \
	$(MAKE) --no-print-directory test; status=$$?; \
	echo "test-loaded: make test exited $$status in $$(( $$(date +%s) - start )) s beside $(HOGS) hog(s)"; \
	exit $$status

# The sdist and wheel build (with the pinned setuptools, no download) and their metadata passes
# `twine check --strict`; the build lands in a temp dir, never in the work tree.
package: $(STAMP)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(BIN)/python -m build --no-isolation --outdir "$$tmp" . >"$$tmp/build.log" 2>&1 || { cat "$$tmp/build.log"; exit 1; } && \
	if grep -q "would be ignored" "$$tmp/build.log"; then grep -B2 -A2 "would be ignored" "$$tmp/build.log"; exit 1; fi && \
	$(BIN)/twine check --strict "$$tmp"/*.whl "$$tmp"/*.tar.gz

unit: $(STAMP)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist worksteal -m "not fidelity"

# Fidelity (docs/design.md §8.1): the real projects' own suites of tests/fidelity/projects (the corpus of
# ../shared/fidelity, copied by tests/fidelity/vendor.py) gated on an honest patch at the defaults, per test
# node against plain pytest, strict both ways against tests/fidelity/limits.yaml. CI runs it after make test;
# fidelity-slow runs the suite too big for every CI run (packaging: 62,423 nodes).
fidelity: $(STAMP)
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal -m "fidelity and not fidelity_slow" -rA \
		tests/test_fidelity.py

fidelity-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m "fidelity_slow" -rA tests/test_fidelity.py

fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "fast and not slow" -n $(PYTEST_WORKERS) --dist worksteal

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy verdict_gate verdict_gate_plugin.py entrypoint.py
	$(BIN)/check-jsonschema --check-metaschema schemas/*.schema.json
	$(BIN)/check-jsonschema --builtin-schema vendor.github-actions action.yml
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
	$(BIN)/actionlint -no-color .github/workflows/*.yml
	$(BIN)/hadolint Dockerfile
	$(BIN)/zizmor --offline --no-progress --quiet .github/workflows action.yml

# The Docker container action end to end on a real Docker engine, run as GitHub's runner runs it
# (tests/container/README.md). Needs root (or a running engine): installs docker.io and debootstrap
# when missing, starts dockerd (no bridge, no iptables) when none answers and stops it at the end.
# The attack corpus again with bubblewrap hidden: every worker fenced by Landlock, seccomp and, as root, a uid
# of its own (the method GitHub's Docker container action gets). CI runs it after make test.
attacks-landlock: $(STAMP)
	VG_ATTACKS_METHOD=landlock $(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal tests/attacks tests/test_fences.py

container-test: $(STAMP)
	PYTHON_BIN=$(abspath $(BIN))/python tests/container/run.sh

demo: $(STAMP)
	$(BIN)/verdict-gate demo

# Gate this repository's last commit against its parent, with the oracle read from the parent.
self-gate: $(STAMP)
	$(BIN)/verdict-gate run --repo . --base HEAD~1 --pack git:HEAD~1:oracle --out .self-gate

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_digest.py
	$(BIN)/python benchmarks/bench_run.py

clean:
	rm -rf $(VENV) .self-gate .demo
