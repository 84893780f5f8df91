#!/bin/sh
# Serve placement from an installed virtualenv and check it works:
#   tools/check-installed-service.sh VENV [DATABASE_URL]
# DATABASE_URL defaults to $PLACEMENT_TEST_DB_URL (as exported by
# tools/with-postgresql.sh and tools/with-mysql.sh). Runs placement-manage
# db sync and placement-status upgrade check --json, then gunicorn on a
# free 127.0.0.1 port from a scratch directory, checks GET / and an
# authenticated GET /resource_providers (and GET /healthcheck with
# CHECK_HEALTHCHECK=1), and stops gunicorn by its pid.
set -eu
venv=$1
url=${2:-${PLACEMENT_TEST_DB_URL:?no database URL given}}
work=$(mktemp -d /tmp/placement-serve.XXXXXX)
pid=""
cleanup() {
    if [ -n "$pid" ]; then
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
say() { echo "check-installed-service: $*" >&2; }
cd "$work"
unset PYTHONPATH
py="$venv/bin/python"

# A server URL without a database (the with-*.sh scripts) gets one.
url=$("$py" - "$url" <<'PY'
import sys
import sqlalchemy as sa
url = sa.engine.make_url(sys.argv[1])
if url.database is None and url.get_backend_name() == 'mysql':
    with sa.create_engine(url).connect() as conn:
        conn.execute(sa.text('CREATE DATABASE IF NOT EXISTS placement'))
    url = url.set(database='placement')
elif url.database is None:
    url = url.set(database='postgres')
print(url.render_as_string(hide_password=False))
PY
)
backend=${url%%:*}
cat >placement.conf <<EOF
[api]
auth_strategy = noauth2

[placement_database]
connection = $url

[capacity]
flavors = m1.tiny = resources=VCPU:1&required=!COMPUTE_STATUS_DISABLED
EOF

"$venv/bin/placement-manage" --config-file placement.conf db sync
"$venv/bin/placement-status" --config-file placement.conf upgrade check \
    --json >status.json
"$py" -c '
import json, sys
checks = json.load(open("status.json"))["checks"]
bad = [c for c in checks if c["result"] != 0]
sys.exit("placement-status: %s" % bad if bad or len(checks) < 3 else 0)'

port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
OS_PLACEMENT_CONFIG_DIR=$work "$venv/bin/gunicorn" --workers 1 \
    --bind "127.0.0.1:$port" --chdir "$work" \
    placement.wsgi.api:application >gunicorn.log 2>&1 &
pid=$!

"$py" - "$port" "$pid" "${CHECK_HEALTHCHECK:-0}" <<'PY' || {
import json, os, sys, time, urllib.error, urllib.request
port, pid, healthcheck = sys.argv[1], int(sys.argv[2]), sys.argv[3] == '1'
base = 'http://127.0.0.1:%s' % port


def get(path, **headers):
    req = urllib.request.Request(base + path, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


deadline = time.monotonic() + 60
while True:
    try:
        status, body = get('/')
        break
    except OSError:
        os.kill(pid, 0)  # gunicorn died: the log says why
        if time.monotonic() > deadline:
            sys.exit('gunicorn did not answer within 60 s')
        time.sleep(0.3)
assert status == 200, (status, body)
assert json.loads(body)['versions'][0]['max_version'] == '1.39', body
status, body = get('/resource_providers', **{
    'X-Auth-Token': 'admin', 'OpenStack-API-Version': 'placement latest'})
assert status == 200 and 'resource_providers' in json.loads(body), (
    status, body)
# Read from loopback without a token, like GET /capacity.
status, body = get('/capacity/fit?resources=VCPU:1')
assert status == 200 and json.loads(body)['fit']['total'] == 0, (
    status, body)
status, body = get('/metrics')
assert status == 200 and b'placement_flavor_fit{flavor="m1.tiny"} 0.0' in (
    body), (status, body[-2000:])
if healthcheck:
    status, body = get('/healthcheck')
    assert status == 200, (status, body)
PY
    say "the server failed its checks; its log:"
    cat gunicorn.log >&2
    exit 1
}
grep -q "requests are NOT authenticated" gunicorn.log || {
    say "gunicorn under noauth2 logged no warning"; exit 1; }
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=""
say "installed service works on $backend"
