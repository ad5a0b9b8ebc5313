# verdict-gate GitHub Docker container action (action.yml: runs.using docker, image Dockerfile).
#
# Base image: Debian's own bookworm-slim with Debian's python3 (3.11), pinned by the multi-arch
# index digest, so a rebuild gets the same Debian. GitHub builds this file with no build
# arguments, so the default below is what ships. The digest is debian:bookworm-slim (= debian:12-slim,
# debian:bookworm-20260824-slim) as recorded by docker-library/repo-info,
# repos/debian/remote/12-slim.md (an OCI image index of 5 platforms). To refresh it (monthly, or for
# a Debian security fix):
#   docker buildx imagetools inspect debian:bookworm-slim --format '{{json .Manifest.Digest}}'
# (or: docker pull debian:bookworm-slim && docker inspect --format '{{index .RepoDigests 0}}' debian:bookworm-slim,
# or the digest at the top of repos/debian/remote/bookworm-slim.md in docker-library/repo-info)
# and replace the digest in BASE_IMAGE below; both stages use it. Then run `make container-test`.
# `make container-test` builds this same file with BASE_IMAGE set to a debootstrapped bookworm
# (debootstrap --variant=minbase, as debian:bookworm-slim is made), see tests/container/README.md.
#
# GitHub runs the container as its default user (root, so no USER here), mounts the workspace at
# /github/workspace and sets the working directory itself (so no WORKDIR in the final stage):
# https://docs.github.com/en/actions/reference/workflows-and-actions/dockerfile-support
ARG BASE_IMAGE=debian:bookworm-slim@sha256:88200866dfff7ea7f5cbcb6ec7c8a701889efe6fe859fe64d6990e4b07ea4171

# --- build: a virtualenv with the hashed runtime lock and the project's wheel ---------------------
FROM ${BASE_IMAGE} AS build
# The package index pip uses (a mirror or proxy of PyPI); the lock's hashes pin every file, so a
# mirror cannot change what is installed. Never put a credential in it: build arguments are kept in
# this stage's history (not in the final image).
ARG PIP_INDEX_URL=https://pypi.org/simple
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_NO_INPUT=1
# Debian's python3 and venv (ensurepip), nothing else: only wheels are installed, no compiler.
# The Debian suite is fixed by the base digest; the package versions are left to that suite's
# security updates (an exact pin breaks the build as soon as Debian replaces it), so DL3008 is
# waived here on purpose.
# hadolint ignore=DL3008
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY requirements/runtime.txt requirements/dev.txt requirements/
# Requirements: only the hashed lock, only wheels (nothing compiled, no compiler needed).
RUN python3 -m venv /opt/verdict-gate \
    && /opt/verdict-gate/bin/pip install --require-hashes --only-binary=:all: -r requirements/runtime.txt
# Build backend: setuptools, pinned with hashes in the same dev lock, in a throwaway venv.
RUN python3 -m venv /opt/build \
    && sed -n '/^setuptools==/,/^    # via/p' requirements/dev.txt > /tmp/build-lock.txt \
    && grep -q -- '--hash=sha256:' /tmp/build-lock.txt \
    && /opt/build/bin/pip install --require-hashes --only-binary=:all: --no-deps -r /tmp/build-lock.txt
COPY pyproject.toml README.md LICENSE verdict_gate_plugin.py ./
COPY verdict_gate/ verdict_gate/
COPY schemas/ schemas/
COPY examples/ examples/
# The project itself: no dependencies (they come from the lock above), no build isolation
# (which would download an unpinned setuptools).
# The venv's own setuptools (seeded by `python3 -m venv` on 3.11) goes too. -P: import the
# installed package, not the sources in the working directory.
RUN /opt/build/bin/pip wheel --no-deps --no-build-isolation --wheel-dir /wheels . \
    && /opt/verdict-gate/bin/pip install --no-deps --no-index /wheels/*.whl \
    && /opt/verdict-gate/bin/pip uninstall --yes setuptools \
    && /opt/verdict-gate/bin/python -P -c "import verdict_gate.github.action, verdict_gate.demo, verdict_gate_plugin, yaml, jsonschema, hypothesis, pytest"

# --- final: Debian's python3, git, bubblewrap and the virtualenv; no compilers, no build backend ---
FROM ${BASE_IMAGE}
# python3: the interpreter the virtualenv was made with (the same suite, the same path).
# git: the gate reads diffs, merge bases and worktrees. bubblewrap: the candidate worker's sandbox
# where namespaces are allowed (in GitHub's container Docker refuses them and the gate uses its
# other method; docs/design.md §8.2). ca-certificates: git fetches and pack downloads over HTTPS.
# No python3-venv, pip or setuptools here: the virtualenv is copied whole.
# hadolint ignore=DL3008
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 git bubblewrap ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && git --version \
    && bwrap --version \
    && python3 --version
COPY --from=build /opt/verdict-gate /opt/verdict-gate
COPY entrypoint.py /opt/verdict-gate/entrypoint.py
# VERDICT_GATE_CACHE: the oracle processes' shared bytecode cache lives in the container, not under
# HOME: the runner mounts the job's _github_home there (HOME=/github/home), where root-owned cache
# files would outlive the step, be shared with the job's later steps and block the runner's clean-up.
ENV PATH=/opt/verdict-gate/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONNOUSERSITE=1 \
    VERDICT_GATE_CACHE=/var/cache/verdict-gate
# The import smoke test again, in the final image (its python3 is the one the venv links to;
# -B: it writes no bytecode), then that cache filled for the interpreter and the installed packages
# (35 MB): each oracle process would compile pytest and Hypothesis again at every run (3 s of a
# step here). Only the gate's own code is in it; candidate code never reads or writes it.
RUN /opt/verdict-gate/bin/python -B -P -c "import verdict_gate.github.action, verdict_gate_plugin, yaml, jsonschema, hypothesis, pytest" \
    && PYTHONPYCACHEPREFIX=/var/cache/verdict-gate/pycache /opt/verdict-gate/bin/python -m compileall -q -j 0 \
        "$(/opt/verdict-gate/bin/python -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')" \
        "$(/opt/verdict-gate/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"
ENTRYPOINT ["/opt/verdict-gate/bin/python", "/opt/verdict-gate/entrypoint.py"]
