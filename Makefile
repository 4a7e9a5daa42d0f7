# One entry point for people and CI: `make test` builds the virtual
# environment on first use, then lints and runs the whole suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install test lint conformance bench clean run

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

lint: install
	$(PY) -m ruff check engine endpoint tests benchmarks migrations

test: lint
	$(PY) -m pytest -q

conformance: install
	$(PY) -m tests.harness.w3c
	$(PY) -m tests.harness.w3c12

# the console on http://127.0.0.1:$(PORT)/ and the endpoint on /sparql, with the demo
# dataset (endpoint/demo/rivers.trig, installed with the package) loaded on first
# start; everything written is kept in $(DATA_DIR) across restarts
DATA_DIR ?= .rivulet-data
# the port to listen on (`make run PORT=8001`)
PORT ?= 8000
run: install
	$(VENV)/bin/rivulet serve --demo --data-dir $(DATA_DIR) --port $(PORT)

bench: install
	$(PY) -m benchmarks.parse_time
	$(PY) -m benchmarks.query_latency

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info
