# shellcheck shell=bash
# The Docker engine of `make container-test` (run.sh) and benchmarks/bench_image.sh, sourced by both:
#
#   ensure_packages PKG...  install the Debian packages whose command is missing (as root, with apt-get;
#                           a policy-rc.d keeps their postinst from starting a service), else stop with the fix
#   start_engine WORK       use the engine that answers, else start dockerd with no bridge and no iptables
#                           (its config, pid file and log in WORK); sets dockerd_pid and dockerd_log
#   stop_engine             stop the dockerd start_engine started (by its pid), never one already running
#
# The caller defines say and die (one line on stderr; die exits 2).

dockerd_pid=""
dockerd_log=""

# The command each package provides, to tell whether it is installed.
_command_of() {
    case "$1" in
        docker.io) echo dockerd ;;
        docker-registry) echo docker-registry ;;
        *) echo "$1" ;;
    esac
}

ensure_packages() {
    local need=() pkg cmd
    for pkg in "$@"; do
        cmd=$(_command_of "$pkg")
        command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || [ -x "/usr/bin/$cmd" ] || need+=("$pkg")
    done
    if [ ${#need[@]} -gt 0 ]; then
        if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
            die "${need[*]} not installed and this is not root with apt-get: install them (sudo apt-get install -y ${need[*]}), or run this as root"
        fi
        say "installing ${need[*]} with apt-get"
        # Debian's docker.io starts dockerd from its postinst with the default configuration (a bridge,
        # iptables rules), docker-registry its registry: a policy-rc.d that refuses every start keeps that
        # from happening.
        local made_policy=""
        if [ ! -e /usr/sbin/policy-rc.d ]; then
            printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
            made_policy=1
        fi
        if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null 2>&1; then
            apt-get update -q >/dev/null
            DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
        fi
        if [ -n "$made_policy" ]; then rm -f /usr/sbin/policy-rc.d; fi
    fi
    export PATH=$PATH:/usr/sbin:/sbin
    command -v docker >/dev/null 2>&1 || die "the docker CLI is missing: apt-get install docker.io"
}

start_engine() {
    local work=$1
    if docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
        say "using the Docker engine that is already running ($(docker version --format '{{.Server.Version}}')); it is left running"
        dockerd_log=""
    else
        [ "$(id -u)" = 0 ] || die "no Docker engine answers and this is not root: start dockerd (as root), or run this as root"
        if [ -e /var/run/docker.sock ] && ! docker version >/dev/null 2>&1; then rm -f /var/run/docker.sock; fi
        printf '%s\n' '{"bridge": "none", "iptables": false, "ip6tables": false}' > "$work/daemon.json"
        dockerd_log=$work/dockerd.log
        # --log-level debug: the daemon logs every API request ("Calling GET /_ping"), which is how the
        # container test's hostile case checks that nothing in the container reached the socket.
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
}

stop_engine() {
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
}
