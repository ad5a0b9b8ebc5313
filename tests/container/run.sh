#!/usr/bin/env bash
# `make container-test`: the Docker container action end to end on a real Docker engine, run the
# way GitHub's runner runs it (tests/container/README.md).
#
#   1. docker.io and debootstrap, installed with apt when missing (as root; else the fix is printed);
#   2. dockerd started with {"bridge": "none", "iptables": false, "ip6tables": false} when no engine
#      answers, and stopped by its pid on every way out (trap); an engine that was already running
#      is used and left running;
#   3. the base image: debootstrap --variant=minbase bookworm, docker import (base-image.sh, cached);
#   4. pytest tests/container: builds the action image from the shipped Dockerfile and runs the cases.
#
# Environment: VG_CT_KEEP=1 keeps the work directory (runner directories, logs, evidence);
# VG_CT_NO_CACHE=1 builds the image with --no-cache; VG_CT_REFRESH=1 bootstraps the base again;
# VG_CT_PYTEST_ARGS extra pytest arguments (e.g. "-k honest").
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
python=${PYTHON_BIN:-$repo/.venv/bin/python}

say() { printf 'container-test: %s\n' "$*" >&2; }
die() { printf 'container-test: error: %s\n' "$*" >&2; exit 2; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

[ -x "$python" ] || die "$python is missing: run make install first"
[ "$(uname -s)" = Linux ] || die "the container test needs Linux (it runs a Docker engine)"

# --- 1. packages --------------------------------------------------------------------------------
# shellcheck source=engine.sh
. "$here/engine.sh"
ensure_packages docker.io debootstrap

# --- 2. the engine ------------------------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/verdict-gate-container.XXXXXX")
chmod 755 "$work"
cleanup() {
    local code=$?
    stop_engine
    if [ "${VG_CT_KEEP:-0}" = 1 ]; then
        say "kept $work"
    else
        rm -rf "$work"
    fi
    exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
start_engine "$work"

# --- 3. the base image --------------------------------------------------------------------------
t=$(now)
"$here/base-image.sh" "$work/base.tag"
base_s=$(elapsed "$t")
base=$(cat "$work/base.tag")
say "base image $base ready in $base_s s"

# --- 4. the cases ---------------------------------------------------------------------------------
export VERDICT_GATE_CONTAINER_TEST=1 VG_CT_BASE_IMAGE=$base VG_CT_WORK=$work VG_CT_BASE_SECONDS=$base_s \
       VG_CT_DOCKERD_LOG=$dockerd_log
cd "$repo"
set +e
# shellcheck disable=SC2086
"$python" -m pytest tests/container -p no:cacheprovider -s --tb=line -ra ${VG_CT_PYTEST_ARGS:-}
code=$?
set -e
[ -f "$work/timings.txt" ] && cat "$work/timings.txt" >&2
exit "$code"
