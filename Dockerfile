# verdict-gate GitHub Docker container action (action.yml: runs.using docker, image Dockerfile).
#
# Base image: python:3.11-slim pinned by digest (the multi-arch index digest), so a rebuild gets
# the same Debian and CPython. To refresh it (monthly, or for a CPython/Debian security fix):
#   docker buildx imagetools inspect python:3.11-slim --format '{{json .Manifest.Digest}}'
# (or: docker pull python:3.11-slim && docker inspect --format '{{index .RepoDigests 0}}' python:3.11-slim)
# and replace the digest in PYTHON_IMAGE below; both stages use it.
#
# GitHub runs the container as its default user (root, so no USER here), mounts the workspace at
# /github/workspace and sets the working directory itself (so no WORKDIR in the final stage):
# https://docs.github.com/en/actions/reference/workflows-and-actions/dockerfile-support
ARG PYTHON_IMAGE=python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7

# --- build: a virtualenv with the hashed runtime lock and the project's wheel ---------------------
FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_NO_INPUT=1
WORKDIR /src
COPY requirements/runtime.txt requirements/dev.txt requirements/
# Requirements: only the hashed lock, only wheels (nothing compiled, no compiler needed).
RUN python -m venv /opt/verdict-gate \
    && /opt/verdict-gate/bin/pip install --require-hashes --only-binary=:all: -r requirements/runtime.txt
# Build backend: setuptools, pinned with hashes in the same dev lock, in a throwaway venv.
RUN python -m venv /opt/build \
    && sed -n '/^setuptools==/,/^    # via/p' requirements/dev.txt > /tmp/build-lock.txt \
    && grep -q -- '--hash=sha256:' /tmp/build-lock.txt \
    && /opt/build/bin/pip install --require-hashes --only-binary=:all: --no-deps -r /tmp/build-lock.txt
COPY pyproject.toml README.md verdict_gate_plugin.py ./
COPY verdict_gate/ verdict_gate/
COPY schemas/ schemas/
COPY examples/ examples/
# The project itself: no dependencies (they come from the lock above), no build isolation
# (which would download an unpinned setuptools).
# The venv's own setuptools (seeded by `python -m venv` on 3.11) goes too. -P: import the
# installed package, not the sources in the working directory.
RUN /opt/build/bin/pip wheel --no-deps --no-build-isolation --wheel-dir /wheels . \
    && /opt/verdict-gate/bin/pip install --no-deps --no-index /wheels/*.whl \
    && /opt/verdict-gate/bin/pip uninstall --yes setuptools \
    && /opt/verdict-gate/bin/python -P -c "import verdict_gate.github.action, verdict_gate.demo, verdict_gate_plugin, yaml, jsonschema, hypothesis, pytest"

# --- final: CPython, git and the virtualenv; no compilers, no build backend ------------------------
FROM ${PYTHON_IMAGE}
# git: the gate reads diffs, merge bases and worktrees. bubblewrap: the candidate worker's sandbox
# (where the container runtime refuses namespaces, the gate falls back to uid 65534 and says so).
# The Debian suite is fixed by the base digest; the package versions are left to that suite's
# security updates (an exact pin breaks the build as soon as Debian replaces it), so DL3008 is
# waived here on purpose.
# The base image's own build backend (setuptools, wheel) is removed as well.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git bubblewrap \
    && rm -rf /var/lib/apt/lists/* \
    && git --version \
    && bwrap --version \
    && python -m pip uninstall --yes setuptools wheel
COPY --from=build /opt/verdict-gate /opt/verdict-gate
COPY entrypoint.py /opt/verdict-gate/entrypoint.py
ENV PATH=/opt/verdict-gate/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONNOUSERSITE=1
ENTRYPOINT ["/opt/verdict-gate/bin/python", "/opt/verdict-gate/entrypoint.py"]
