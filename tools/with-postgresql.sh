#!/bin/sh
# Run a command with a throwaway PostgreSQL server on 127.0.0.1, exporting
# PLACEMENT_TEST_DB_URL for it; the server and its data are removed
# afterwards. Exits 0 with a notice if PostgreSQL is not installed, or 1
# if it is required (REQUIRE_DB=1). PLACEMENT_PG_OPTIONS adds server
# options, e.g. "-c shared_preload_libraries=pg_stat_statements" for the
# benchmarks' statement counts.
set -eu
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$bindir" ] || bindir=$(dirname "$(command -v pg_ctl 2>/dev/null || echo /nonexistent/x)")
if [ ! -x "$bindir/pg_ctl" ]; then
    echo "with-postgresql: PostgreSQL is not installed; skipping the PostgreSQL pass." >&2
    [ "${REQUIRE_DB:-0}" = 1 ] && exit 1
    exit 0
fi
tmp=$(mktemp -d /tmp/placement-pg.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
run=""
if [ "$(id -u)" = 0 ]; then
    # PostgreSQL refuses to run as root.
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    chown postgres "$tmp"
    run="runuser -u postgres --"
fi
cleanup() {
    $run "$bindir/pg_ctl" -D "$tmp/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
$run "$bindir/initdb" -D "$tmp/data" -A trust -U postgres -E UTF8 --no-sync >"$tmp/initdb.log" 2>&1 || {
    cat "$tmp/initdb.log" >&2; exit 1; }
$run "$bindir/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w \
    -o "-p $port -h 127.0.0.1 -k $tmp -F -c max_connections=200 ${PLACEMENT_PG_OPTIONS:-}" start >/dev/null
export PLACEMENT_TEST_DB_URL="postgresql+psycopg2://postgres@127.0.0.1:$port"
echo "with-postgresql: PostgreSQL at $PLACEMENT_TEST_DB_URL" >&2
"$@"
