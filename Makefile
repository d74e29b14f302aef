# Plinth: `make run` starts the server on the embedded SQLite store; `make test` runs the whole suite.
# Every target installs what it needs into .venv first, so a fresh clone needs nothing else.
# tests/compat installs the official CLI (npm @controlplane/cli, pinned) into .cache/cpln itself;
# it needs node and npm, and is skipped without them unless CI=true.
# tests/console drives Debian's headless Chromium (apt-get install chromium chromium-driver, done by
# the tests when run as root) with Selenium; skipped without it unless CI=true.
# tests/runtime/containers and tests/runtime/gateway run real containers with podman and Caddy
# (apt-get install podman runc busybox-static caddy, done by the tests when run as root); skipped
# without them unless CI=true. `make bench`'s bench.runtime needs the same four (it installs
# nothing: without them it prints why it is skipped).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Two installs: the runtime dependencies alone (`make run`), and those plus the test extras.
RUN_STAMP  := $(VENV)/.installed-runtime
TEST_STAMP := $(VENV)/.installed-test
PLINTH_PORT ?= 8080
export PLINTH_PORT

.PHONY: run test lint typecheck pytest bench fuzz clean venv facts

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Re-install when the project's metadata changes. A user who only runs Plinth gets the runtime
# dependencies only; the test install covers the runtime one too, so it touches both stamps.
$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUN_STAMP)

$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(TEST_STAMP) $(RUN_STAMP)

venv: $(TEST_STAMP)

# `make run` runs workloads as real containers when a container engine (podman, or docker whose
# daemon answers: a docker client alone runs nothing) and the gateway (caddy) are installed, and
# says so; otherwise it says what to install and serves the simulated runtime. PLINTH_RUNTIME set
# in the environment wins.
run: $(RUN_STAMP)
	@if [ -n "$$PLINTH_RUNTIME" ]; then \
		echo "make run: --runtime $$PLINTH_RUNTIME (from PLINTH_RUNTIME)"; runtime=$$PLINTH_RUNTIME; \
	elif command -v caddy >/dev/null && { command -v podman >/dev/null || docker info >/dev/null 2>&1; }; then \
		echo "make run: podman or docker and caddy found: workloads run as real containers (--runtime containers)," \
			"reached through the gateway on http://$${PLINTH_GATEWAY_LISTEN:-127.0.0.1:8880}"; runtime=containers; \
	else \
		echo "make run: no container engine or no caddy: workloads are simulated (--runtime simulated)." \
			"To run them for real: apt-get install podman caddy (or docker with its daemon running)"; runtime=simulated; \
	fi; \
	exec $(BIN)/plinth serve --host 127.0.0.1 --port $(PLINTH_PORT) --data-dir ./.plinth-data --init-profile local \
		--runtime $$runtime

lint: $(TEST_STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports
	$(BIN)/python -m plinth.kinds.facts --check

# Regenerate what clients know of the kinds (src/plinth/kindfacts.py, the console's templates.json)
# from the kind declarations, after adding or changing a kind.
facts: $(TEST_STAMP)
	$(BIN)/python -m plinth.kinds.facts

typecheck: $(TEST_STAMP)
	$(BIN)/mypy

pytest: $(TEST_STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile

test: lint typecheck pytest

bench: $(TEST_STAMP)
	$(BIN)/python -m bench
	$(BIN)/python -m bench.authz
	$(BIN)/python -m bench.workloads
	$(BIN)/python -m bench.replicas
	$(BIN)/python -m bench.watch
	$(BIN)/python -m bench.cli_startup
	$(BIN)/python -m bench.backup
	$(BIN)/python -m bench.apply
	$(BIN)/python -m bench.writes
	$(BIN)/python -m bench.runtime
	$(BIN)/python -m bench.logs
	$(BIN)/python -m bench.dataplane

fuzz: $(TEST_STAMP)
	PLINTH_FUZZ_EXAMPLES=2000 $(BIN)/python -m pytest tests/fuzz -n 2 --dist loadfile

clean:
	rm -rf $(VENV) .plinth-data .pytest_cache .mypy_cache .ruff_cache
