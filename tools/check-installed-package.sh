#!/bin/sh
# Check the package the way deployments install it: build a wheel of the
# checkout, install it into a fresh virtualenv WITHOUT any requirements
# file, and run the tools and the WSGI server from a directory outside
# the checkout (gunicorn puts its working directory on sys.path, so a run
# from the checkout would import the checkout, not the installed copy).
#
# Then the [postgresql] and [mysql] extras are installed and the service
# is served from each database when tools/with-postgresql.sh and
# tools/with-mysql.sh can start one (REQUIRE_DB=1 makes that mandatory).
#
# Switches (environment):
#   CHECK_HEALTHCHECK=1  also require GET /healthcheck to answer 200 with
#                        no token (CI sets it).
#   PYTHON               the interpreter for the virtualenv (python3).
set -eu
checkout=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/placement-pkg.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
venv=$tmp/venv
started=$(date +%s)
say() { echo "check-installed-package: $*" >&2; }

# A copy of the working tree, so the build leaves nothing in the checkout
# and nothing already built or installed there leaks into the wheel.
mkdir "$tmp/src"
tar -C "$checkout" --exclude=./.git --exclude=./.venv --exclude=./build \
    --exclude='*.egg-info' --exclude=__pycache__ -cf - . |
    tar -C "$tmp/src" -xf -

PYTHON=${PYTHON:-python3} sh "$checkout/tools/make-venv.sh" "$venv"
"$venv/bin/pip" wheel -q --no-deps -w "$tmp/dist" "$tmp/src"
wheel=$(ls "$tmp/dist"/*.whl)
say "built $(basename "$wheel")"

# The distribution alone: its install_requires must be enough.
"$venv/bin/pip" install -q "$wheel"
# The WSGI server is the deployment's choice, not a dependency.
"$venv/bin/pip" install -q gunicorn

mkdir "$tmp/run"
cd "$tmp/run"
# Nothing from the checkout may be importable from here on.
unset PYTHONPATH
where=$("$venv/bin/python" -c 'import placement, os; print(os.path.dirname(placement.__file__))')
case "$where" in
    "$venv"/*) ;;
    *) say "placement imported from $where, not from the virtualenv"; exit 1 ;;
esac

# Generators: the policy and configuration samples operators make.
"$venv/bin/oslopolicy-policy-generator" --namespace placement >policy.out
grep -q '"placement:resource_providers:list"' policy.out || {
    say "oslopolicy-policy-generator printed no placement rule"; exit 1; }
"$venv/bin/oslopolicy-sample-generator" \
    --config-file "$venv/etc/placement/policy-generator.conf" \
    --output-file policy.yaml.sample
grep -q 'placement:reshaper:reshape' policy.yaml.sample
"$venv/bin/oslopolicy-list-redundant" --namespace placement >/dev/null
"$venv/bin/oslo-config-generator" \
    --config-file "$venv/etc/placement/config-generator.conf" \
    --output-file placement.conf.sample
for group in api placement_database keystone_authtoken oslo_policy cors \
        oslo_middleware; do
    grep -q "^\[$group\]" placement.conf.sample || {
        say "[$group] missing from the generated sample"; exit 1; }
done
# Our CORS defaults reach the sample (oslo.config.opts.defaults).
grep -q '^#allow_headers = .*OpenStack-API-Version' placement.conf.sample || {
    say "the sample lacks placement's [cors] defaults"; exit 1; }
say "policy and configuration generators work"

sh "$checkout/tools/check-installed-service.sh" "$venv" \
    "sqlite:///$tmp/run/placement.sqlite"

# The database extras: their drivers import, and serve when a server is
# available.
"$venv/bin/pip" install -q "$wheel[postgresql,mysql]"
"$venv/bin/python" -c 'import psycopg2, pymysql'
say "[postgresql] and [mysql] extras install importable drivers"
# PostgreSQL runs as another user: start it from a directory it may enter.
cd /tmp
sh "$checkout/tools/with-postgresql.sh" \
    sh "$checkout/tools/check-installed-service.sh" "$venv"
sh "$checkout/tools/with-mysql.sh" \
    sh "$checkout/tools/check-installed-service.sh" "$venv"

say "passed in $(($(date +%s) - started)) s"
