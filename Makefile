# verdict-gate: `make demo` and `make test` work on a fresh clone with Python 3.11+, git and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: install test unit lint demo self-gate bench clean

install: $(STAMP)

# A venv with the hashed, pinned requirements, then the project itself (editable, no deps).
$(STAMP): requirements/dev.txt requirements/runtime.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "verdict-gate needs Python 3.11 or newer; run: make PYTHON=python3.11 ...")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements/dev.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@touch $(STAMP)

test: lint unit

unit: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy verdict_gate verdict_gate_plugin.py entrypoint.py
	$(BIN)/check-jsonschema --check-metaschema schemas/*.schema.json
	$(BIN)/check-jsonschema --builtin-schema vendor.github-actions action.yml
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
	$(BIN)/hadolint Dockerfile
	$(BIN)/zizmor --offline --no-progress --quiet .github/workflows action.yml

demo: $(STAMP)
	$(BIN)/verdict-gate demo

# Gate this repository's last commit against its parent, with the oracle read from the parent.
# As root the gate runs properties as `nobody`; this commit is our own code, so `auto` lets it
# fall back to root where `nobody` cannot run the venv's interpreter (a Python under /root).
self-gate: $(STAMP)
	VERDICT_GATE_RUN_AS=$${VERDICT_GATE_RUN_AS:-auto} \
	$(BIN)/verdict-gate run --repo . --base HEAD~1 --pack git:HEAD~1:oracle --out .self-gate

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_digest.py
	$(BIN)/python benchmarks/bench_run.py

clean:
	rm -rf $(VENV) .self-gate .demo
