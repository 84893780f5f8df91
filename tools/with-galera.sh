#!/bin/sh
# Run a command with a throwaway 3-node MariaDB Galera cluster on
# 127.0.0.1, exporting PLACEMENT_TEST_GALERA_URLS (the three nodes' URLs,
# space separated) and PLACEMENT_TEST_DB_URL (node 1). The nodes and their
# data are removed afterwards. Exits 0 with a notice if MariaDB, the Galera
# library or rsync is missing, or 1 if they are required (REQUIRE_DB=1).
#
# Node 1 bootstraps the cluster (--wsrep-new-cluster); nodes 2 and 3 join
# it one after the other by rsync state transfer. Each node listens on its
# own four loopback ports: SQL, group communication, incremental state
# transfer and full state transfer. Start-up takes about 25 s on a busy
# 2-core machine; it is reported on stderr and bounded by
# GALERA_START_TIMEOUT (seconds, default 120). Nodes log every
# certification conflict (wsrep_log_conflicts); GALERA_LOG_DIR=DIR keeps
# their logs in DIR.
set -eu
server=$(command -v mariadbd || ls /usr/sbin/mariadbd 2>/dev/null || true)
installer=$(command -v mariadb-install-db || true)
client=$(command -v mariadb || command -v mysql || true)
provider=${GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}
if [ -z "$server" ] || [ -z "$installer" ] || [ -z "$client" ] ||
        [ ! -f "$provider" ] || ! command -v rsync >/dev/null 2>&1; then
    echo "with-galera: mariadb-server, galera-4 or rsync is not installed;" \
        "skipping the Galera pass." >&2
    [ "${REQUIRE_DB:-0}" = 1 ] && exit 1
    exit 0
fi
timeout=${GALERA_START_TIMEOUT:-120}
tmp=$(mktemp -d /tmp/placement-galera.XXXXXX)
user=$(id -un)
if [ "$user" = root ]; then
    # rsync's state-transfer daemon, started as root, would write as
    # "nobody": run the nodes as the unprivileged mysql user instead.
    id mysql >/dev/null 2>&1 || useradd --system --no-create-home mysql
    user=mysql
    chown mysql "$tmp"
fi
# Twelve distinct free loopback ports: SQL, gcomm, IST, SST per node.
ports=$(python3 -c '
import socket
socks = [socket.socket() for _ in range(12)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))')
port() {  # port NODE KIND(0 sql, 1 gcomm, 2 ist, 3 sst)
    echo "$ports" | cut -d' ' -f$(( ($1 - 1) * 4 + $2 + 1 ))
}
pids=""
cleanup() {
    if [ -n "${GALERA_LOG_DIR:-}" ]; then
        mkdir -p "$GALERA_LOG_DIR"
        cp "$tmp"/node*.log "$GALERA_LOG_DIR"/ 2>/dev/null || true
    fi
    for pid in $pids; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in $pids; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
started=$(date +%s)
cluster="gcomm://127.0.0.1:$(port 1 1),127.0.0.1:$(port 2 1),127.0.0.1:$(port 3 1)"

"$installer" --no-defaults --datadir="$tmp/node1" --user="$user" \
    --auth-root-authentication-method=normal --skip-test-db \
    >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; exit 1; }

status() {  # status NODE VARIABLE
    "$client" --no-defaults -h127.0.0.1 -P"$(port "$1" 0)" -uroot -N -B \
        -e "SHOW STATUS LIKE '$2'" 2>/dev/null | cut -f2
}

start_node() {  # start_node NODE [--wsrep-new-cluster]
    node=$1
    shift
    mkdir -p "$tmp/node$node"
    chown -R "$user" "$tmp/node$node"
    # A throwaway test cluster: passwordless root on loopback, relaxed
    # durability. binlog_format=ROW and interleaved auto-increment locks
    # are what Galera requires. The grant tables stay: without them the
    # session has no user, CREATE TRIGGER replicates as DEFINER=``, and
    # the other nodes fail it and ignore the failure (a DDL error), so
    # writes through them log nothing to the provider change log.
    "$server" --no-defaults --datadir="$tmp/node$node" --user="$user" \
        --bind-address=127.0.0.1 --port="$(port "$node" 0)" \
        --socket="$tmp/node$node.sock" --pid-file="$tmp/node$node.pid" \
        --skip-name-resolve \
        --innodb-flush-log-at-trx-commit=0 --sync-binlog=0 \
        --innodb-doublewrite=0 --max-connections=300 \
        --character-set-server=utf8mb4 --collation-server=utf8mb4_bin \
        --binlog-format=ROW --default-storage-engine=InnoDB \
        --innodb-autoinc-lock-mode=2 \
        --wsrep-on=ON --wsrep-provider="$provider" \
        --wsrep-cluster-name=placement-test \
        --wsrep-cluster-address="$cluster" \
        --wsrep-node-name="node$node" \
        --wsrep-node-address="127.0.0.1:$(port "$node" 1)" \
        --wsrep-node-incoming-address="127.0.0.1:$(port "$node" 0)" \
        --wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:$(port "$node" 1);ist.recv_addr=127.0.0.1:$(port "$node" 2);gcache.size=64M;cert.log_conflicts=yes" \
        --wsrep-sst-method=rsync --wsrep-log-conflicts=ON \
        --wsrep-sst-receive-address="127.0.0.1:$(port "$node" 3)" \
        "$@" >"$tmp/node$node.log" 2>&1 &
    pids="$pids $!"
    pid=$!
    until [ "$(status "$node" wsrep_local_state_comment)" = Synced ]; do
        if ! kill -0 "$pid" 2>/dev/null ||
                [ $(( $(date +%s) - started )) -gt "$timeout" ]; then
            echo "with-galera: node $node did not reach Synced:" >&2
            for log in "$tmp"/node*.log; do
                echo "== $log" >&2
                tail -n 60 "$log" >&2
            done
            exit 1
        fi
        sleep 0.5
    done
}

start_node 1 --wsrep-new-cluster
start_node 2
start_node 3
for node in 1 2 3; do
    size=$(status "$node" wsrep_cluster_size)
    if [ "$size" != 3 ]; then
        echo "with-galera: node $node sees a cluster of $size nodes" >&2
        exit 1
    fi
done
urls=""
for node in 1 2 3; do
    urls="$urls mysql+pymysql://root@127.0.0.1:$(port "$node" 0)"
done
export PLACEMENT_TEST_GALERA_URLS="${urls# }"
export PLACEMENT_TEST_DB_URL="mysql+pymysql://root@127.0.0.1:$(port 1 0)"
echo "with-galera: 3 nodes Synced in $(( $(date +%s) - started )) s:" \
    "$PLACEMENT_TEST_GALERA_URLS" >&2
status=0
"$@" || status=$?
exit "$status"
