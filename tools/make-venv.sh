#!/bin/sh
# Create the project virtualenv at $1 with pip, even on a Python whose
# "venv" module cannot bootstrap pip (Debian without python3-venv's
# ensurepip): then pip itself is fetched from PyPI.
set -eu
venv=$1
python=${PYTHON:-python3}
if "$python" -m venv "$venv" 2>/dev/null && [ -x "$venv/bin/pip" ]; then
    exit 0
fi
rm -rf "$venv"
"$python" -m venv --without-pip "$venv" 2>/dev/null || {
    echo "make-venv: '$python -m venv' is unavailable; install python3-venv" >&2
    exit 1
}
wheel_dir=$(mktemp -d)
"$venv/bin/python" - "$wheel_dir" <<'PY'
import json, sys, urllib.request
meta = json.load(urllib.request.urlopen('https://pypi.org/pypi/pip/json'))
url = next(u['url'] for u in meta['urls'] if u['filename'].endswith('.whl'))
urllib.request.urlretrieve(url, sys.argv[1] + '/pip.whl')
PY
"$venv/bin/python" "$wheel_dir/pip.whl/pip" install -q "$wheel_dir/pip.whl"
rm -rf "$wheel_dir"
