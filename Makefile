# The two commands of the README: `make run` and `make test`.
# Both build .venv from the package registries on a fresh machine.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
GNUGO := /usr/games/gnugo
CONFIG ?= configs/quick.toml

.PHONY: run test install gnugo lint bench clean

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,ray]'
	touch $(STAMP)

install: $(STAMP)

# GNU Go is the independent referee of the rules tests and the real GTP
# opponent. Install it where we are allowed to (root + apt); otherwise the
# tests that need it skip and say why.
gnugo:
	@if [ -x $(GNUGO) ] || command -v gnugo >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnugo) >/dev/null \
		|| echo "warning: could not install gnugo; GNU Go tests will skip"; \
	else echo "warning: gnugo not installed and not root; GNU Go tests will skip"; fi

run: install gnugo
	$(BIN)/harness suite $(CONFIG)

test: install gnugo
	$(BIN)/python -m pytest -n 2 -q

lint: install
	$(BIN)/ruff check harness tests

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
