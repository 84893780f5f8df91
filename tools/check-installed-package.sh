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
# Everything is installed under OpenStack's 2026.1 upper-constraints, as
# deployment tools and other projects' test environments install it;
# there, a host project's functional tests (what nova's do with
# PlacementFixture) run against the installed package, plain and under
# eventlet, and every module of the wheel must import.
#
# Switches (environment):
#   CHECK_HEALTHCHECK=1  also require GET /healthcheck to answer 200 with
#                        no token (CI sets it).
#   CONSTRAINTS          the pip constraints file (default
#                        constraints/upper-constraints-2026.1.txt; empty:
#                        none, the newest releases).
#   PYTHON               the interpreter for the virtualenv (python3).
set -eu
checkout=$(cd "$(dirname "$0")/.." && pwd)
constraints=${CONSTRAINTS-$checkout/constraints/upper-constraints-2026.1.txt}
tmp=$(mktemp -d /tmp/placement-pkg.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
venv=$tmp/venv
started=$(date +%s)
say() { echo "check-installed-package: [$(($(date +%s) - started)) s] $*" >&2; }

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

pip_install() {
    if [ -n "$constraints" ]; then
        "$venv/bin/pip" install -q -c "$constraints" "$@"
    else
        "$venv/bin/pip" install -q "$@"
    fi
}
# The distribution alone: its install_requires must be enough.
pip_install "$wheel"
# The WSGI server is the deployment's choice, not a dependency.
pip_install gunicorn
say "installed with constraints ${constraints:-(none)}"

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

# Another project's functional tests: what nova's test environment adds
# (under the same constraints), every module of the wheel importable
# there, then a host project using PlacementFixture and PlacementDirect.
pip_install fixtures eventlet keystoneauth1
cat >import_all.py <<'PY'
import importlib, os, sys
import placement
top = os.path.dirname(os.path.dirname(placement.__file__))
# alembic runs its environment script itself, inside a migration.
ALEMBIC_ONLY = {'placement.db.migrations.env'}
names = []
for path, _dirs, files in os.walk(os.path.dirname(placement.__file__)):
    for file in files:
        if file.endswith('.py'):
            parts = os.path.relpath(os.path.join(path, file[:-3]), top)
            names.append(parts.replace(os.sep, '.').removesuffix(
                '.__init__'))
suite = [n for n in names if n.rpartition('.')[2].startswith('test_')
         or n.endswith(('.conftest', '.gabbi_fixtures'))]
if suite:
    sys.exit('the wheel ships the test suite: %s' % suite[:5])
# A package's __main__ runs its program when imported (python -m).
importable = sorted(n for n in set(names) - ALEMBIC_ONLY
                    if not n.endswith('.__main__'))
failed = []
for name in importable:
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed.append('%s: %r' % (name, exc))
if failed:
    sys.exit('modules of the wheel that do not import:\n' + '\n'.join(failed))
print('check-installed-package: all %d modules of the wheel import'
      % len(importable))
PY
OS_PLACEMENT_DATABASE__CONNECTION=sqlite:// \
OS_PLACEMENT_DATABASE__SYNC_ON_STARTUP=true \
    "$venv/bin/python" -W ignore import_all.py 2>imports.err ||
    { cat imports.err >&2; exit 1; }
"$venv/bin/python" -W ignore -m placement.tests.functional.host_project \
    2>host-project.err || { cat host-project.err >&2; exit 1; }
"$venv/bin/python" -W ignore -m placement.tests.functional.host_project \
    --eventlet 2>host-project.err || { cat host-project.err >&2; exit 1; }

# The database extras: their drivers import, and serve when a server is
# available.
pip_install "$wheel[postgresql,mysql]"
"$venv/bin/python" -c 'import psycopg2, pymysql'
say "[postgresql] and [mysql] extras install importable drivers"
# PostgreSQL runs as another user: start it from a directory it may enter.
cd /tmp
sh "$checkout/tools/with-postgresql.sh" \
    sh "$checkout/tools/check-installed-service.sh" "$venv"
sh "$checkout/tools/with-mysql.sh" \
    sh "$checkout/tools/check-installed-service.sh" "$venv"

# The other constraints files (master) install the package and its
# extras too.
for other in "$checkout"/constraints/upper-constraints-*.txt; do
    [ "$other" = "$constraints" ] && continue
    rm -rf "$tmp/other"
    PYTHON=${PYTHON:-python3} sh "$checkout/tools/make-venv.sh" "$tmp/other"
    "$tmp/other/bin/pip" install -q -c "$other" "$wheel[postgresql,mysql]"
    "$tmp/other/bin/python" -c 'import placement.deploy, psycopg2, pymysql'
    say "installs with $(basename "$other")"
done

say "passed in $(($(date +%s) - started)) s"
