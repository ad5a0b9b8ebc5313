#!/usr/bin/env bash
# The base image of `make container-test`, without Docker Hub: Debian bookworm bootstrapped with
# debootstrap --variant=minbase (the variant debuerreotype builds debian:bookworm-slim from), with
# the same apt sources as the official image (bookworm, bookworm-updates, bookworm-security) and
# this machine's own CA certificates, imported with `docker import` as a local tag.
#
# Usage: base-image.sh TAG_FILE
#   Writes the tag of the image (verdict-gate-ct/bookworm-minbase:<key>) to TAG_FILE.
# Cache: the rootfs tarball is kept under $VG_CT_CACHE (default /var/cache/verdict-gate-container),
#   keyed by the UTC date (one bootstrap a day at most, so Debian's security updates arrive) and by
#   a digest of this script and the CA certificates; the image is reused while its tag exists.
# Environment:
#   VG_CT_MIRROR           Debian mirror (default: http://deb.debian.org/debian)
#   VG_CT_SECURITY_MIRROR  security mirror (default: http://deb.debian.org/debian-security)
#   VG_CT_BASE_INCLUDE     extra packages for the bootstrap, comma-separated (default: none; the
#                          shipped Dockerfile installs python3, git, bubblewrap itself, as it does
#                          on debian:bookworm-slim)
#   VG_CT_REFRESH=1        bootstrap again even when today's tarball exists
set -euo pipefail

tag_file=${1:?usage: base-image.sh TAG_FILE}
here=$(cd "$(dirname "$0")" && pwd)
cache=${VG_CT_CACHE:-/var/cache/verdict-gate-container}
mirror=${VG_CT_MIRROR:-http://deb.debian.org/debian}
security=${VG_CT_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
include=${VG_CT_BASE_INCLUDE:-}

say() { printf 'container-test: %s\n' "$*" >&2; }
die() { printf 'container-test: error: %s\n' "$*" >&2; exit 2; }

command -v debootstrap >/dev/null 2>&1 || die "debootstrap is not installed: apt-get install debootstrap (run.sh does it as root)"
[ "$(id -u)" = 0 ] || die "debootstrap needs root: run make container-test as root"

# The machine's CA certificates: what update-ca-certificates installed locally, and the bundle.
local_cas=()
if [ -d /usr/local/share/ca-certificates ]; then
    while IFS= read -r -d '' f; do local_cas+=("$f"); done \
        < <(find /usr/local/share/ca-certificates -type f -name '*.crt' -print0 | sort -z)
fi
bundle=/etc/ssl/certs/ca-certificates.crt
[ -f "$bundle" ] || die "$bundle is missing: apt-get install ca-certificates && update-ca-certificates"

key_material=$( { cat "$0"; printf '%s\n' "$mirror" "$security" "$include"; \
                  cat "${local_cas[@]+"${local_cas[@]}"}" "$bundle"; } | sha256sum | cut -c1-12)
day=$(date -u +%Y%m%d)
key="$day-$key_material"
tag="verdict-gate-ct/bookworm-minbase:$key"
tarball="$cache/bookworm-minbase-$key.tar"

if [ "${VG_CT_REFRESH:-0}" != 1 ] && docker image inspect "$tag" >/dev/null 2>&1; then
    say "base image $tag exists (cached)"
    echo "$tag" > "$tag_file"
    exit 0
fi

mkdir -p "$cache"
if [ "${VG_CT_REFRESH:-0}" = 1 ] || [ ! -s "$tarball" ]; then
    root=$(mktemp -d "${TMPDIR:-/tmp}/vg-ct-rootfs.XXXXXX")
    trap 'rm -rf "$root"' EXIT
    say "debootstrap --variant=minbase bookworm from $mirror (a few minutes) …"
    start=$(date +%s)
    args=(--variant=minbase --components=main --merged-usr)
    [ -n "$include" ] && args+=("--include=$include")
    if ! debootstrap "${args[@]}" bookworm "$root" "$mirror" > "$cache/debootstrap.log" 2>&1; then
        tail -n 30 "$cache/debootstrap.log" >&2
        die "debootstrap failed (log: $cache/debootstrap.log); check that $mirror is reachable"
    fi
    # The apt sources of the official image (deb822), so `apt-get install` sees security updates.
    rm -f "$root/etc/apt/sources.list"
    mkdir -p "$root/etc/apt/sources.list.d"
    cat > "$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    # This machine's CA certificates: the bundle (used as it is until the build installs
    # ca-certificates, whose update-ca-certificates then rebuilds it with the local ones).
    mkdir -p "$root/usr/local/share/ca-certificates" "$root/etc/ssl/certs"
    for f in "${local_cas[@]+"${local_cas[@]}"}"; do cp "$f" "$root/usr/local/share/ca-certificates/"; done
    cp "$bundle" "$root/etc/ssl/certs/ca-certificates.crt"
    # As debuerreotype leaves the slim image: no package lists, no apt caches, no logs.
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
           "$root"/var/log/* "$root"/tmp/* "$root"/root/.cache 2>/dev/null || true
    find "$cache" -maxdepth 1 -name 'bookworm-minbase-*.tar' ! -name "$(basename "$tarball")" -delete
    tar -C "$root" --numeric-owner -cf "$tarball.part" .
    mv "$tarball.part" "$tarball"
    rm -rf "$root"
    trap - EXIT
    say "debootstrap done in $(( $(date +%s) - start )) s: $tarball ($(du -h "$tarball" | cut -f1))"
fi

say "docker import $tarball as $tag"
docker import --change 'CMD ["bash"]' --message "debootstrap --variant=minbase bookworm ($key)" \
    "$tarball" "$tag" >/dev/null
echo "$tag" > "$tag_file"
