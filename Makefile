# The two commands of the README: `make run` and `make test`.
# Both build .venv from the package registries on a fresh machine.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
GNUGO := /usr/games/gnugo
CONFIG ?= configs/quick.toml
LOGDIR ?= models

.PHONY: run test install gnugo sabaki chromium lint bench clean tensorboard

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,ray,jax,tensorboard]'
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

# @sabaki/sgf, the SGF parser of the Sabaki editor, reads the harness's SGF in
# the tests (tests/test_sabaki_sgf.py), and @sabaki/gtp, its GTP client, drives
# harness gtp (tests/test_gtp_sabaki_client.py); pinned in tests/js/package-lock.json.
sabaki:
	@if [ -d tests/js/node_modules/@sabaki/sgf ] && [ -d tests/js/node_modules/@sabaki/gtp ]; then :; \
	elif command -v npm >/dev/null 2>&1; then \
		(cd tests/js && npm ci --no-audit --no-fund --silent) \
		|| echo "warning: could not install @sabaki/sgf and @sabaki/gtp; their tests will skip"; \
	else echo "warning: npm not installed; @sabaki/sgf and @sabaki/gtp tests will skip"; fi

# Headless Chromium opens report.html in a slow test (tests/test_report_browser.py).
chromium:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null \
		|| echo "warning: could not install chromium; the browser test will skip"; \
	else echo "warning: chromium not installed and not root; the browser test will skip"; fi

# Every run's live metrics side by side (training, self-play, tournaments and
# frontier studies under LOGDIR), on this machine only: http://localhost:6006
tensorboard: install
	$(BIN)/tensorboard --logdir $(LOGDIR) --host 127.0.0.1 --port 6006

run: install gnugo
	$(BIN)/harness suite $(CONFIG)

test: install gnugo sabaki chromium
	$(BIN)/python -m pytest -n 2 -q

lint: install
	$(BIN)/ruff check harness tests

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
