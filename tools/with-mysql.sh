#!/bin/sh
# Run a command with a throwaway MySQL/MariaDB server on 127.0.0.1,
# exporting PLACEMENT_TEST_DB_URL for it; the server and its data are
# removed afterwards. Exits 0 with a notice if no server is installed, or 1
# if it is required (REQUIRE_DB=1).
set -eu
server=$(command -v mariadbd || command -v mysqld || ls /usr/sbin/mariadbd /usr/sbin/mysqld 2>/dev/null | head -n 1 || true)
installer=$(command -v mariadb-install-db || command -v mysql_install_db || true)
if [ -z "$server" ] || [ -z "$installer" ]; then
    echo "with-mysql: MySQL/MariaDB is not installed; skipping the MySQL pass." >&2
    [ "${REQUIRE_DB:-0}" = 1 ] && exit 1
    exit 0
fi
tmp=$(mktemp -d /tmp/placement-mysql.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
user=$(id -un)
pid=""
cleanup() {
    if [ -n "$pid" ]; then
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
"$installer" --no-defaults --datadir="$tmp/data" --user="$user" \
    --auth-root-authentication-method=normal --skip-test-db \
    >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; exit 1; }
# The grant tables are skipped: a passwordless root on loopback is all a
# throwaway test server needs. Durability settings are relaxed for speed.
"$server" --no-defaults --datadir="$tmp/data" --user="$user" \
    --bind-address=127.0.0.1 --port="$port" --socket="$tmp/mysql.sock" \
    --pid-file="$tmp/mysql.pid" --skip-grant-tables --skip-name-resolve \
    --innodb-flush-log-at-trx-commit=0 --sync-binlog=0 \
    --innodb-doublewrite=0 --max-connections=300 \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_bin \
    >"$tmp/server.log" 2>&1 &
pid=$!
tries=0
until python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$port" 2>/dev/null; do
    tries=$((tries + 1))
    if [ "$tries" -gt 120 ] || ! kill -0 "$pid" 2>/dev/null; then
        echo "with-mysql: the server did not start:" >&2
        cat "$tmp/server.log" >&2
        exit 1
    fi
    sleep 0.5
done
export PLACEMENT_TEST_DB_URL="mysql+pymysql://root@127.0.0.1:$port"
echo "with-mysql: MySQL at $PLACEMENT_TEST_DB_URL" >&2
status=0
"$@" || status=$?
exit "$status"
