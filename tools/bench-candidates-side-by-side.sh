#!/bin/sh
# Benchmark GET /allocation_candidates on this checkout ("ours") and on
# upstream OpenStack Placement 16.0.0 ("upstream") in the same run, so
# that both see the same machine conditions (see doc/source/contributor/benchmarks.rst).
#
#   tools/bench-candidates-side-by-side.sh [benchmark options]
#   e.g. --scenario flat --providers 1000 --scenario wide --devices 8 \
#        --timeout 60
#
# Needs this checkout's .venv ("make venv"). Creates $UPSTREAM_VENV
# (default /tmp/upvenv) with openstack-placement==16.0.0 and gunicorn
# when it is missing. Both servers run under gunicorn with two workers,
# noauth2 and a fresh SQLite file in a temporary directory, on free
# ports; they are stopped and the directory removed however the run ends.
set -eu

checkout=$(cd "$(dirname "$0")/.." && pwd)
upvenv=${UPSTREAM_VENV:-/tmp/upvenv}
python=${PYTHON:-python3}

if [ ! -x "$checkout/.venv/bin/gunicorn" ]; then
    echo "$0: no $checkout/.venv/bin/gunicorn; run 'make venv' first" >&2
    exit 1
fi
if [ ! -x "$upvenv/bin/gunicorn" ]; then
    echo "creating $upvenv with openstack-placement==16.0.0 and gunicorn"
    PYTHON=$python sh "$checkout/tools/make-venv.sh" "$upvenv"
    "$upvenv/bin/pip" install -q openstack-placement==16.0.0 gunicorn
fi

# gunicorn kills a worker that is silent for longer than its --timeout
# (default 30 s): let the benchmark's --timeout decide instead, and have
# the worker killed a little after the client gave up, so that a wide
# query nobody waits for anymore does not hold a core during the next
# measurements.
client_timeout=300
previous=
for arg in "$@"; do
    case $previous in --timeout) client_timeout=$arg ;; esac
    case $arg in --timeout=*) client_timeout=${arg#--timeout=} ;; esac
    previous=$arg
done
worker_timeout=$("$python" -c 'import math, sys
print(math.ceil(float(sys.argv[1])) + 5)' "$client_timeout" 2>/dev/null) ||
    worker_timeout=305

# Two distinct free ports (both sockets are open when they are read).
ports=$("$python" -c 'import socket
a, b = socket.socket(), socket.socket()
a.bind(("127.0.0.1", 0)); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])')
ours_port=${ports% *}
upstream_port=${ports#* }

work=$(mktemp -d /tmp/bench-candidates.XXXXXX)
ours_pid=
upstream_pid=
bench_pid=

stop() {  # pid: quick shutdown, then force after 15 s
    [ -n "$1" ] || return 0
    kill -INT "$1" 2>/dev/null || return 0
    i=0
    while kill -0 "$1" 2>/dev/null && [ $i -lt 30 ]; do
        sleep 0.5
        i=$((i + 1))
    done
    if kill -0 "$1" 2>/dev/null; then
        pkill -KILL -P "$1" 2>/dev/null || true
        kill -KILL "$1" 2>/dev/null || true
    fi
    wait "$1" 2>/dev/null || true
}

cleanup() {
    if [ -n "$bench_pid" ]; then
        kill "$bench_pid" 2>/dev/null || true
        wait "$bench_pid" 2>/dev/null || true
    fi
    stop "$ours_pid"
    stop "$upstream_pid"
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# gunicorn puts its working directory on sys.path: start both from the
# empty temporary directory, never from a checkout, or "upstream" would
# import our placement package.
cd "$work"

env OS_PLACEMENT_DATABASE__CONNECTION="sqlite:///$work/ours.db" \
    OS_PLACEMENT_DATABASE__SYNC_ON_STARTUP=True \
    OS_API__AUTH_STRATEGY=noauth2 PYTHONPATH="$checkout" \
    "$checkout/.venv/bin/gunicorn" -w 2 --timeout "$worker_timeout" \
    -b "127.0.0.1:$ours_port" placement.wsgi.api:application \
    >"$work/ours.log" 2>&1 &
ours_pid=$!

# --preload: upstream runs sync_on_startup in every worker, and two
# workers creating the schema of one fresh SQLite file at once fail with
# "database is locked", which stops gunicorn; loaded once in the master,
# the same application is then served by both workers.
env OS_PLACEMENT_DATABASE__CONNECTION="sqlite:///$work/upstream.db" \
    OS_PLACEMENT_DATABASE__SYNC_ON_STARTUP=True \
    OS_API__AUTH_STRATEGY=noauth2 PYTHONPATH= \
    "$upvenv/bin/gunicorn" --preload -w 2 --timeout "$worker_timeout" \
    -b "127.0.0.1:$upstream_port" placement.wsgi.api:application \
    >"$work/upstream.log" 2>&1 &
upstream_pid=$!

# Make sure "upstream" is the installed release, not a checkout.
upstream_is=$(PYTHONPATH= "$upvenv/bin/python" -c 'import importlib.metadata
import placement
print(importlib.metadata.version("openstack-placement"), placement.__file__)')
case $upstream_is in
    *" $upvenv"/*) ;;
    *) echo "$0: upstream imports placement from outside $upvenv:" \
           "$upstream_is" >&2
       exit 1 ;;
esac

wait_for() {  # name pid port
    i=0
    until "$python" -c 'import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=2).read()' \
            "http://127.0.0.1:$3/" 2>/dev/null; do
        if ! kill -0 "$2" 2>/dev/null || [ $i -ge 240 ]; then
            echo "$0: $1 does not answer on port $3; its log:" >&2
            cat "$work/$1.log" >&2
            exit 1
        fi
        sleep 0.5
        i=$((i + 1))
    done
}
wait_for ours "$ours_pid" "$ours_port"
wait_for upstream "$upstream_pid" "$upstream_port"

echo "ours: $checkout on http://127.0.0.1:$ours_port"
echo "upstream: openstack-placement ${upstream_is%% *} on" \
    "http://127.0.0.1:$upstream_port"
cd "$checkout"
# In the background so that a signal to this script is acted on at once
# (sh runs traps only once a foreground command has finished).
"$checkout/.venv/bin/python" -u -m benchmarks.allocation_candidates \
    --url "ours=http://127.0.0.1:$ours_port" \
    --url "upstream=http://127.0.0.1:$upstream_port" "$@" &
bench_pid=$!
status=0
wait "$bench_pid" || status=$?
bench_pid=
exit $status
