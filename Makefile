# Two commands do everything on a machine with python3 and make:
#   make run    serve the API on http://127.0.0.1:8000 (SQLite, noauth2)
#   make test   run the whole test suite (SQLite, then PostgreSQL and
#               MySQL/MariaDB when their servers are installed)

PYTHON ?= python3
# The development virtualenv is pinned by OpenStack's 2026.1
# upper-constraints, the oldest releases we support (setup.cfg's lower
# bounds); "make test-latest" runs the SQLite pass on the newest
# releases in a second virtualenv. CONSTRAINTS= (empty) pins nothing.
CONSTRAINTS ?= constraints/upper-constraints-2026.1.txt
VENV ?= .venv
VENV_LATEST ?= .venv-latest
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
# Parallel test processes (pytest-xdist); "auto" = one per CPU.
JOBS ?= auto
# What the test targets run: TESTS=placement/tests/unit narrows it.
TESTS ?= placement/tests
PYTEST = env PYTHONPATH=$(CURDIR) $(BIN)/python -m pytest -p no:cacheprovider -n $(JOBS) -q $(PYTEST_ARGS)
SPHINX = $(BIN)/sphinx-build -W --keep-going -q -b html

# tox.ini runs these same targets in environments it has installed
# itself with the release's upper constraints: it passes VENV={envdir}
# INSTALL=no.
INSTALL ?= yes
ifeq ($(INSTALL),yes)
READY := venv
DOCS_READY := docs-venv
endif

.PHONY: run test test-latest test-sqlite test-postgresql test-mysql test-galera cover \
	policy-gabbits lint docs api-ref releasenotes genconfig genpolicy \
	venv docs-venv clean bandit faults-galera faults-postgresql faults-mariadb

$(BIN)/.installed: requirements.txt test-requirements.txt lint-requirements.txt setup.cfg $(CONSTRAINTS)
	PYTHON=$(PYTHON) sh tools/make-venv.sh $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q $(if $(CONSTRAINTS),-c $(CONSTRAINTS)) \
	    -r requirements.txt -r test-requirements.txt
	touch $@

venv: $(BIN)/.installed

# The documentation tools, with the virtualenv's constraints if any.
$(BIN)/.docs-installed: $(BIN)/.installed doc/requirements.txt
	$(BIN)/pip install -q $(if $(CONSTRAINTS),-c $(CONSTRAINTS)) \
	    -r doc/requirements.txt
	touch $@

docs-venv: $(BIN)/.docs-installed

run: $(READY)
	$(BIN)/placement-api --host $(HOST) --port $(PORT)

test: test-sqlite test-postgresql test-mysql

test-sqlite: $(READY)
	$(PYTEST) $(TESTS)

# The SQLite pass on the newest releases of every dependency (no
# constraints), in its own virtualenv.
test-latest:
	$(MAKE) test-sqlite VENV=$(VENV_LATEST) CONSTRAINTS=

test-postgresql: $(READY)
	sh tools/with-postgresql.sh $(PYTEST) $(TESTS)

test-mysql: $(READY)
	sh tools/with-mysql.sh $(PYTEST) $(TESTS)

# Writes through API hosts on the three nodes of a throwaway MariaDB
# Galera cluster (mariadb-server, galera-4, rsync), then a short fault
# run on a cluster of its own (placement/tests/faults). Not part of "make
# test" (it needs three database servers); CI runs it after "make test".
# The first took 1.5 minutes on an idle 2-core machine, 8 to 13 on a
# busy one; the fault run about 3 on a busy one.
test-galera: $(READY)
	sh tools/with-galera.sh env PYTHONPATH=$(CURDIR) $(BIN)/python -m pytest \
	    -p no:cacheprovider -n 1 -q $(PYTEST_ARGS) \
	    placement/tests/functional/test_writes_across_hosts.py
	env PLACEMENT_TEST_FAULTS_GALERA=1 PYTHONPATH=$(CURDIR) $(BIN)/python \
	    -m pytest -p no:cacheprovider -n 1 -q $(PYTEST_ARGS) \
	    placement/tests/functional/test_faults.py -k galera

# Long fault-injection runs (api-ref/fault-injection.rst): writes through
# every API host while database nodes are killed, paused, isolated or
# restarted and API workers killed, then the checker. FAULT_ARGS
# overrides the counts and the time bound (seconds).
FAULT_ARGS ?= --operations 10000 --faults-per-kind 50 --seconds 10800
faults-galera faults-postgresql faults-mariadb: $(READY)
	env PYTHONPATH=$(CURDIR) $(BIN)/python -m placement.tests.faults \
	    --database $(@:faults-%=%) $(FAULT_ARGS)

# The OpenStack security linter over the package (configuration and the
# justification of each skipped check in pyproject.toml).
bandit: $(READY)
	$(BIN)/bandit -c pyproject.toml -r placement -q

# Regenerate the policy walk gabbits after adding routes (see
# placement/tests/functional/policy_walk.py).
policy-gabbits: $(READY)
	env PYTHONPATH=$(CURDIR) $(BIN)/python tools/gen-policy-gabbits.py

# The SQLite suite with a coverage report (terminal and cover/index.html).
cover: $(READY)
	$(PYTEST) --cov=placement --cov-report=term --cov-report=html:cover $(TESTS)

# Lint: ruff, configured in pyproject.toml.
lint: $(READY)
	$(BIN)/ruff check .

# The documentation site in doc/build/html: guides, configuration and
# policy references, the API reference and the release notes. Warnings
# are errors.
docs: $(DOCS_READY)
	$(SPHINX) doc/source doc/build/html

# The API reference alone (api-ref/build/html).
api-ref: $(DOCS_READY)
	$(SPHINX) api-ref api-ref/build/html

# The release notes alone (releasenotes/build/html).
releasenotes: $(DOCS_READY)
	$(SPHINX) releasenotes/source releasenotes/build/html

# etc/placement/placement.conf.sample and policy.yaml.sample.
genconfig: $(READY)
	$(BIN)/oslo-config-generator --config-file etc/placement/config-generator.conf

genpolicy: $(READY)
	$(BIN)/oslopolicy-sample-generator --config-file etc/placement/policy-generator.conf

clean:
	rm -rf $(VENV) $(VENV_LATEST) placement.egg-info build .pytest_cache .tox cover \
	    doc/build api-ref/build releasenotes/build
