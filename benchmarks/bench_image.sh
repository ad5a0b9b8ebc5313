#!/usr/bin/env bash
# Build against pull: what a job pays for the action's image with `runs.image: Dockerfile` (the runner
# builds it in every job) and with a released image pinned by digest (the runner pulls it), README.md
# "Releasing the image".
#
#   build  `docker build --no-cache` of the shipped Dockerfile, as the runner runs it, from the
#          debootstrapped bookworm that stands in for debian:bookworm-slim (no Docker Hub here: the
#          base image's own pull is not in this figure; on a hosted runner it adds about 30 MB);
#   pull   `docker pull` of the same image from a registry on loopback, cold (the image, its base and
#          every layer removed first), N times: Debian's docker-registry (the distribution registry
#          GHCR speaks the same API as) stands in for ghcr.io; without it, `docker save` then a timed
#          `docker load` stands in, and the output says so.
#
# Loopback moves the bytes for free: on a runner, a pull also downloads the compressed layers (printed
# below) at the runner's bandwidth. arm64 is not measured (no emulation here).
#
# Needs root (it installs docker.io, debootstrap and docker-registry with apt-get when missing and starts
# dockerd without a bridge when no engine answers, as `make container-test` does: tests/container/engine.sh).
# Usage: benchmarks/bench_image.sh [PULLS]   (default 3)
set -euo pipefail

pulls=${1:-3}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
port=${VG_BENCH_REGISTRY_PORT:-5055}

say() { printf 'bench-image: %s\n' "$*" >&2; }
die() { printf 'bench-image: error: %s\n' "$*" >&2; exit 2; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# shellcheck source=../tests/container/engine.sh
. "$repo/tests/container/engine.sh"
ensure_packages docker.io debootstrap
registry_cmd=""
if ensure_packages docker-registry 2>/dev/null && command -v docker-registry >/dev/null 2>&1; then
    registry_cmd=$(command -v docker-registry)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/verdict-gate-bench-image.XXXXXX")
registry_pid=""
cleanup() {
    local code=$?
    if [ -n "$registry_pid" ] && kill -0 "$registry_pid" 2>/dev/null; then
        kill -TERM "$registry_pid" 2>/dev/null || true
        wait "$registry_pid" 2>/dev/null || true
    fi
    docker image rm -f "vg-bench/action:build" "127.0.0.1:$port/vg-bench/action:bench" >/dev/null 2>&1 || true
    stop_engine
    rm -rf "$work"
    exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
start_engine "$work"

"$repo/tests/container/base-image.sh" "$work/base.tag"
base=$(cat "$work/base.tag")
# The index pip reaches PyPI through, when it is a URL a build can use; else PyPI (the lock's hashes
# pin every file either way).
index=${PIP_INDEX_URL:-}
case "$index" in http://*|https://*) ;; *) index=https://pypi.org/simple ;; esac

say "building the action image from scratch (docker build --no-cache)"
t=$(now)
DOCKER_BUILDKIT=${DOCKER_BUILDKIT:-0} docker build --no-cache --network host --quiet \
    --build-arg "BASE_IMAGE=$base" --build-arg "PIP_INDEX_URL=$index" \
    -t vg-bench/action:build -f "$repo/Dockerfile" "$repo" > "$work/build.log" 2>&1 \
    || { tail -n 30 "$work/build.log" >&2; die "docker build failed (log above)"; }
build_s=$(elapsed "$t")
size=$(docker image inspect --format '{{.Size}}' vg-bench/action:build)

# Every image holding these layers, so that a pull is cold: the built image and the base.
forget() {
    docker image rm -f "127.0.0.1:$port/vg-bench/action:bench" vg-bench/action:build "$base" >/dev/null 2>&1 || true
    docker image prune -f >/dev/null 2>&1 || true
}

pull_times=()
if [ -n "$registry_cmd" ]; then
    mode="docker pull from a registry on loopback (Debian's docker-registry $(dpkg-query -W -f '${Version}' docker-registry 2>/dev/null || echo '?'))"
    cat > "$work/registry.yml" <<EOF
version: 0.1
storage:
  filesystem:
    rootdirectory: $work/registry
http:
  addr: 127.0.0.1:$port
EOF
    "$registry_cmd" serve "$work/registry.yml" > "$work/registry.log" 2>&1 &
    registry_pid=$!
    for _ in $(seq 1 60); do
        curl -fsS "http://127.0.0.1:$port/v2/" >/dev/null 2>&1 && break
        sleep 0.5
    done
    curl -fsS "http://127.0.0.1:$port/v2/" >/dev/null || { tail -n 20 "$work/registry.log" >&2; die "the registry did not start"; }
    docker tag vg-bench/action:build "127.0.0.1:$port/vg-bench/action:bench"
    t=$(now)
    docker push --quiet "127.0.0.1:$port/vg-bench/action:bench" > "$work/push.log"
    push_s=$(elapsed "$t")
    compressed=$(curl -fsS -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
        "http://127.0.0.1:$port/v2/vg-bench/action/manifests/bench" \
        | python3 -c 'import json,sys; print(sum(l["size"] for l in json.load(sys.stdin)["layers"]))')
    for _ in $(seq 1 "$pulls"); do
        forget
        t=$(now)
        docker pull --quiet "127.0.0.1:$port/vg-bench/action:bench" > /dev/null
        pull_times+=("$(elapsed "$t")")
    done
else
    mode="docker load of a docker save archive (no registry could be installed: the stand-in for a pull)"
    t=$(now)
    docker save -o "$work/image.tar" vg-bench/action:build
    push_s=$(elapsed "$t")
    compressed=$(gzip -c "$work/image.tar" | wc -c)
    for _ in $(seq 1 "$pulls"); do
        forget
        t=$(now)
        docker load --quiet -i "$work/image.tar" > /dev/null
        pull_times+=("$(elapsed "$t")")
    done
fi
"$repo/tests/container/base-image.sh" "$work/base.tag" >/dev/null 2>&1 || true  # the base back, from its cached tarball

median=$(printf '%s\n' "${pull_times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
cat <<EOF
image:        $(awk -v s="$size" 'BEGIN { printf "%.0f MB", s / 1e6 }') unpacked, $(awk -v s="$compressed" 'BEGIN { printf "%.0f MB", s / 1e6 }') compressed layers
build:        $build_s s (docker build --no-cache, local base image, $(nproc) cores)
publish:      $push_s s (once per release)
pull:         ${pull_times[*]} s; median $median s ($mode)
build / pull: $(awk -v b="$build_s" -v p="$median" 'BEGIN { printf "%.1fx", b / p }')
EOF
