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
need=()
command -v dockerd >/dev/null 2>&1 || [ -x /usr/sbin/dockerd ] || need+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        die "${need[*]} not installed and this is not root with apt-get: install them (sudo apt-get install -y ${need[*]}), or run make container-test as root"
    fi
    say "installing ${need[*]} with apt-get"
    # Debian's docker.io starts dockerd from its postinst with the default configuration (a bridge,
    # iptables rules); a policy-rc.d that refuses every start keeps that from happening.
    made_policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
        made_policy=1
    fi
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null 2>&1; then
        apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
    fi
    [ -n "$made_policy" ] && rm -f /usr/sbin/policy-rc.d
fi
export PATH=$PATH:/usr/sbin:/sbin
command -v docker >/dev/null 2>&1 || die "the docker CLI is missing: apt-get install docker.io"

# --- 2. the engine ------------------------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/verdict-gate-container.XXXXXX")
chmod 755 "$work"
dockerd_pid=""
cleanup() {
    local code=$?
    if [ -n "$dockerd_pid" ] && kill -0 "$dockerd_pid" 2>/dev/null; then
        say "stopping dockerd (pid $dockerd_pid)"
        kill -TERM "$dockerd_pid" 2>/dev/null || true
        for _ in $(seq 1 60); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.5; done
        if kill -0 "$dockerd_pid" 2>/dev/null; then
            say "dockerd (pid $dockerd_pid) did not stop in 30 s: SIGKILL"
            kill -KILL "$dockerd_pid" 2>/dev/null || true
        fi
        wait "$dockerd_pid" 2>/dev/null || true
    fi
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

if docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
    say "using the Docker engine that is already running ($(docker version --format '{{.Server.Version}}')); it is left running"
    dockerd_log=""
else
    [ "$(id -u)" = 0 ] || die "no Docker engine answers and this is not root: start dockerd (as root) or run make container-test as root"
    [ -e /var/run/docker.sock ] && ! docker version >/dev/null 2>&1 && rm -f /var/run/docker.sock
    cat > "$work/daemon.json" <<'EOF'
{"bridge": "none", "iptables": false, "ip6tables": false}
EOF
    dockerd_log=$work/dockerd.log
    # --log-level debug: the daemon logs every API request ("Calling GET /_ping"), which is how the
    # hostile case checks that nothing in the container reached the socket.
    dockerd --config-file "$work/daemon.json" --pidfile "$work/dockerd.pid" --log-level debug \
        > "$dockerd_log" 2>&1 &
    dockerd_pid=$!
    say "started dockerd (pid $dockerd_pid, log $dockerd_log); waiting for /var/run/docker.sock"
    for _ in $(seq 1 120); do
        docker version >/dev/null 2>&1 && break
        kill -0 "$dockerd_pid" 2>/dev/null || { tail -n 20 "$dockerd_log" >&2; die "dockerd exited at start (log above)"; }
        sleep 0.5
    done
    docker version >/dev/null 2>&1 || { tail -n 20 "$dockerd_log" >&2; die "dockerd did not answer within 60 s"; }
fi
say "engine $(docker version --format '{{.Server.Version}}'), client $(docker version --format '{{.Client.Version}}')"

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
