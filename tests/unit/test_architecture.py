"""The layout's rules, checked on the source (``docs/DEVELOPING.md``).

* No import cycles among our modules (imports inside functions count too).
* The rules engines import nothing of ours but ``service.games`` and no
  infrastructure; the house bots (``service.bots``) nothing of ours but
  ``service.games`` and themselves, no infrastructure, no clock and no global
  random (docs/BOTS.md, "House bots").
* The layers (docs/DEVELOPING.md, "The folders"): the pure write side
  (``service.domain``, the tournaments' rules, the engines) imports no
  PostgreSQL, marshmallow, Flask, Redis or RQ and nothing of ours but itself;
  the service layer takes commands (no marshmallow, Flask, Redis or RQ); the
  adapters import no web framework, schema library or RQ and never the service
  layer; no HTTP or page module imports redis or sends a Redis command (they
  hand the client to ``service.views`` or an adapter); no module of the workers
  sends a Redis command either, nor names ``redis`` but for its errors; no module reads
  flask-smorest's private ``_apidoc``; no module but ``service/bootstrap.py``
  builds a service-layer object (``GameService``, the tournaments', lobby's and
  invitations' services, the round runner, a unit of work), an ``EventStore``
  or a Redis client.
* Nothing of the product points outside the repo (the working material
  beside our checkout is not the product).
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("service", "workers", "projections", "schemas", "devtools")
INFRASTRUCTURE = ("flask", "flask_smorest", "werkzeug", "psycopg", "psycopg_pool", "redis", "rq", "gunicorn")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def imports_of(name: str) -> set[str]:
    """Every module ``name`` imports, at any depth of its code, resolved to
    our modules where they are ours (``from pkg import mod`` is ``pkg.mod``)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    is_package = MODULES[name].name == "__init__.py"
    base = name if is_package else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                module = ".".join([*anchor, node.module] if node.module else anchor)
            else:
                module = node.module or ""
            for alias in node.names:
                full = f"{module}.{alias.name}"
                out.add(full if full in MODULES else module)
    return out


def _graph() -> dict[str, set[str]]:
    return {name: {m for m in imports_of(name) if m in MODULES and m != name} for name in MODULES}


def test_the_checker_sees_the_modules() -> None:
    assert {"service.domain.pipeline", "service.http.app", "workers.jobs", "service.games.nauticus.rules"} <= set(
        MODULES
    )
    assert "service.domain.pipeline" in _graph()["service.service_layer.commands"]


def test_no_import_cycles() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            # A package's __init__ importing its own modules is how a package
            # exposes them, not a cycle with them.
            own_module = node == nxt.rpartition(".")[0] and MODULES[node].name == "__init__.py"
            if nxt == node.rpartition(".")[0] or own_module:
                continue
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles[:5])


def _tops(name: str) -> set[str]:
    return {m.split(".")[0] for m in imports_of(name)}


@pytest.mark.parametrize("name", sorted(m for m in MODULES if m.startswith("service.games")))
def test_the_rules_engines_import_no_infrastructure(name: str) -> None:
    ours = {m for m in imports_of(name) if m.split(".")[0] in PACKAGES}
    assert all(m.startswith("service.games") for m in ours), ours
    assert not _tops(name) & set(INFRASTRUCTURE), _tops(name) & set(INFRASTRUCTURE)
    if name != "service.games.simulate":  # the playout driver: a seeded chooser and a timer, no rules
        assert not {"random", "time", "datetime"} & _tops(name), "no clock and no global random in a rules engine"


def _random_module_uses(name: str) -> set[str]:
    """The names a module reads off the ``random`` module (``random.Random``, ``random.choice``...)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    used = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "random"
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "random":
            used.update(alias.name for alias in node.names)
    return used


@pytest.mark.parametrize("name", sorted(m for m in MODULES if m.startswith("service.bots")))
def test_the_bots_are_pure(name: str) -> None:
    """A bot is a pure function of what its seat sees, seeded: no infrastructure (so it cannot read
    PostgreSQL or Redis), no clock (the caller passes one) and only seeded generators (``random.Random``)."""
    ours = {m for m in imports_of(name) if m.split(".")[0] in PACKAGES}
    assert all(m.startswith(("service.games", "service.bots")) for m in ours), ours
    assert not _tops(name) & set(INFRASTRUCTURE), _tops(name) & set(INFRASTRUCTURE)
    if name != "service.bots.arena":  # the measurement: it times the bots with the clock it passes them
        assert not {"time", "datetime"} & _tops(name), "no clock in a bot: the caller passes cpu_clock"
    assert _random_module_uses(name) <= {"Random"}, "no global random in a bot: random.Random(seed) only"


def test_the_bots_checker_sees_the_bots() -> None:
    assert {"service.bots.levels", "service.bots.ismcts", "service.bots.arena"} <= set(MODULES)
    assert _random_module_uses("service.bots.arena") == {"Random"}


# -- the layers (cosmicpython's: the folder is the dependency rule) ---------------------------
#: The pure write side: decide, seal, clocks, handles, errors; the tournaments' rules; the engines.
PURE = ("service.domain", "service.tournaments", "service.games")
#: What no layer but the edges (HTTP, CLI, workers) and bootstrap may import.
FRAMEWORKS = {"flask", "flask_smorest", "werkzeug", "marshmallow", "webargs", "redis", "rq", "gunicorn"}
SQL = {"psycopg", "psycopg_pool"}


def _ours(name: str) -> set[str]:
    return {m for m in imports_of(name) if m.split(".")[0] in PACKAGES}


def _under(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


@pytest.mark.parametrize("name", sorted(m for m in MODULES if _under(m, *PURE)))
def test_the_pure_write_side_imports_no_infrastructure(name: str) -> None:
    """service/domain, the tournaments' rules and the engines: no PostgreSQL, no schema
    library, no web framework, no Redis or RQ, and of ours only each other."""
    assert not _tops(name) & (FRAMEWORKS | SQL), _tops(name) & (FRAMEWORKS | SQL)
    assert all(_under(m, *PURE) for m in _ours(name)), _ours(name)


@pytest.mark.parametrize("name", sorted(m for m in MODULES if _under(m, "service.service_layer")))
def test_the_service_layer_takes_commands(name: str) -> None:
    """The use cases take command objects (intents are parsed at the edge): no schema
    library, no web framework, no Redis or RQ; of ours the domain and the adapters."""
    assert not _tops(name) & FRAMEWORKS, _tops(name) & FRAMEWORKS
    allowed = (*PURE, "service.service_layer", "service.adapters")
    assert all(_under(m, *allowed) for m in _ours(name)), _ours(name)


#: What an adapter may use of ours besides the domain: the bots' levels, the settings and Redis's roles.
ADAPTER_SUPPORT = ("service.bots", "service.adapters", "service.config", "service.redis_roles")


@pytest.mark.parametrize("name", sorted(m for m in MODULES if _under(m, "service.adapters")))
def test_the_adapters_import_only_the_domain(name: str) -> None:
    """PostgreSQL and Redis adapters: no web framework, no schema library, no RQ; of
    ours the domain, each other, the settings and Redis's roles."""
    assert not _tops(name) & (FRAMEWORKS - {"redis"}), _tops(name) & FRAMEWORKS
    up = {m for m in _ours(name) if not _under(m, *PURE, *ADAPTER_SUPPORT)}
    use_cases = {m for m in up if _under(m, "service.service_layer")}
    assert not use_cases, f"an adapter never calls a use case; the use case calls it, in a unit of work: {use_cases}"
    assert not up, up


@pytest.mark.parametrize("name", sorted(m for m in MODULES if _under(m, "service.http")))
def test_no_http_or_page_module_imports_redis(name: str) -> None:
    """The read models through the read side (``service.views``); the streams' slots and
    the announcements' pub/sub through their adapters (``service/adapters``)."""
    assert "redis" not in _tops(name), "Redis through service.views or an adapter (service/adapters), not in HTTP"


#: Where the components keep a Redis client: the read side's (``redis``), the queue's
#: (``queue_redis``), and an RQ queue's or job's own (``connection``).
CLIENT_ATTRIBUTES = {"redis", "queue_redis", "connection"}


def redis_commands_in(source: str) -> list[str]:
    """Where code uses a Redis client itself rather than hand it on: an attribute read
    off ``<x>.redis`` (``svc.redis.hget``; likewise ``.queue_redis`` and a queue's
    ``.connection``) or off a name or attribute bound to one (``r = svc.redis`` ...
    ``r.hmget``; ``self.r = queue.connection`` ... ``self.r.eval``).  Handing the client
    to the read side (``views.player(svc.redis, ...)``) or to an adapter is what HTTP
    code and the workers may do."""
    tree = ast.parse(source)
    clients = {
        ast.unparse(target)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr in CLIENT_ATTRIBUTES
        for target in node.targets
        if isinstance(target, ast.Name | ast.Attribute)
    }
    return [
        f"{ast.unparse(node)}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and (
            (isinstance(node.value, ast.Attribute) and node.value.attr in CLIENT_ATTRIBUTES)
            or (isinstance(node.value, ast.Name | ast.Attribute) and ast.unparse(node.value) in clients)
        )
    ]


def test_the_redis_command_checker_sees_commands() -> None:
    assert redis_commands_in("r = svc.redis\nvalues = r.hmget(key, names)") == ["r.hmget:2"]
    assert redis_commands_in("services().redis.ping()") == ["services().redis.ping:1"]
    assert redis_commands_in("views.player(svc.redis, handle)\nr = svc.redis\nviews.turns_now(r, h)") == []
    assert redis_commands_in("self.r = queue.connection\nself.r.eval(s, 0)") == ["self.r.eval:2"]
    assert redis_commands_in("ctx.queue_redis.delete(k)") == ["ctx.queue_redis.delete:1"]
    assert redis_commands_in("Queue(name, connection=job.connection)") == []


def redis_module_uses(source: str) -> list[str]:
    """What ``source`` reads off the ``redis`` package other than its exception types
    (``redis.ConnectionError``...): a client's type (``r: redis.Redis``), a client, a
    script.  A module that holds no client and names none sends no Redis command."""
    tree = ast.parse(source)
    found = [
        f"redis.{node.attr}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "redis"
        and not node.attr.endswith("Error")
    ]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "redis":
            found += [f"{node.module}.{a.name}:{node.lineno}" for a in node.names if not a.name.endswith("Error")]
    return found


def test_the_redis_module_checker_sees_clients() -> None:
    assert redis_module_uses("import redis\ndef f(r: redis.Redis) -> None: ...") == ["redis.Redis:2"]
    assert redis_module_uses("from redis import Redis") == ["redis.Redis:1"]
    retried = "import redis\ntry:\n    f()\nexcept (redis.ConnectionError, redis.TimeoutError):\n    pass"
    assert redis_module_uses(retried) == []


@pytest.mark.parametrize("name", sorted(m for m in MODULES if _under(m, "workers")))
def test_no_worker_module_sends_redis_commands(name: str) -> None:
    """A worker's job hands the components' clients to the projections, the read side
    (``service.views``) or an adapter (``service/adapters``: the house bots' pending
    marks and fair line, the announcements' pub/sub), which send the commands; of
    ``redis`` it names only the errors it retries on.  RQ's own use of its connection
    (a ``Queue``, a worker) is RQ's."""
    source = MODULES[name].read_text(encoding="utf-8")
    found = redis_commands_in(source) + redis_module_uses(source)
    assert not found, f"send them through service.views or an adapter (service/adapters): {found}"


@pytest.mark.parametrize("name", sorted(m for m in MODULES if _under(m, "service.http")))
def test_no_http_or_page_module_sends_redis_commands(name: str) -> None:
    """No Redis call in a handler or a page: they hand the components' client to the
    read side (``service.views``) or an adapter, which reads."""
    found = redis_commands_in(MODULES[name].read_text(encoding="utf-8"))
    assert not found, f"read through service.views (or an adapter): {found}"


def test_no_module_reaches_into_flask_smorest_internals() -> None:
    """flask-smorest keeps what its decorators collected in a private ``_apidoc``: read
    the generated spec (``api.spec``) or call the view instead."""
    hits = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr == "_apidoc") or (
                isinstance(node, ast.Constant) and node.value == "_apidoc"
            ):
                hits.append(f"{name}:{node.lineno}")
    assert not hits, hits


def _classes(prefix: str) -> dict[str, tuple[str, ast.ClassDef]]:
    """Every class defined in the modules under ``prefix``: name -> (module, definition)."""
    found = {}
    for name, path in MODULES.items():
        if _under(name, prefix):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    found[node.name] = (name, node)
    return found


def _base_names(node: ast.ClassDef) -> set[str]:
    return {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in node.bases}


#: Every exception class of ours, by name (a class whose base is an exception).
def _exception_names() -> set[str]:
    classes = [node for path in MODULES.values() for node in ast.walk(ast.parse(path.read_text("utf-8")))]
    defined = [node for node in classes if isinstance(node, ast.ClassDef)]
    known = {"Exception", "RuntimeError", "ValueError", "KeyError", "LookupError", "OSError", "ConnectionError"}
    while True:
        more = {c.name for c in defined if _base_names(c) & known} - known
        if not more:
            return known
        known |= more


EXCEPTIONS = _exception_names()


def _is_value(node: ast.ClassDef) -> bool:
    """A record the adapters hand out (a dataclass), not a component."""
    return any(
        (
            d.id
            if isinstance(d, ast.Name)
            else d.func.id
            if isinstance(d, ast.Call) and isinstance(d.func, ast.Name)
            else ""
        )
        == "dataclass"
        for d in node.decorator_list
    )


#: The adapters and the service layer's objects (the use cases and the unit of work):
#: every public class of ``service/adapters`` and ``service/service_layer`` that is
#: neither an exception nor a value (a dataclass), read off the source, so a new
#: adapter or use case is covered without being listed here.
COMPONENTS = {
    name: module
    for prefix in ("service.adapters", "service.service_layer")
    for name, (module, node) in _classes(prefix).items()
    if not name.startswith("_") and name not in EXCEPTIONS and not _is_value(node)
}
SERVICE_OBJECTS = {"GameService", "TournamentService", "LobbyService", "InvitationService", "RoundRunner", "UnitOfWork"}
#: What only the composition root builds: every component above, the Redis clients.
BUILT_IN_BOOTSTRAP = set(COMPONENTS) | {"Redis", "StrictRedis", "RedisCluster", "from_url"}
#: Modules that may build them: the composition root, and ``redis_roles`` (the factory
#: functions the composition root calls; a call to ``redis_roles.connect*`` counts as
#: building a client).  ``scripts/bench`` builds its own pieces to measure them in
#: isolation, and the tests build theirs: neither is scanned.
BUILDERS = {"service.bootstrap", "service.redis_roles"}


def _constructions(path: Path, module: str = "") -> list[str]:
    """The calls in ``path`` that build a component or a client; a module's own
    classes built by a factory of that module (a pub/sub opener opening a pub/sub)
    do not count: the composition root built the factory."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        owner = func.value if isinstance(func, ast.Attribute) else None
        owner_name = owner.id if isinstance(owner, ast.Name) else owner.attr if isinstance(owner, ast.Attribute) else ""
        if called == "from_url" and owner_name not in {"redis", "Redis", "StrictRedis", "RedisCluster"}:
            continue  # another library's from_url (a connection pool's is built by a client)
        if COMPONENTS.get(called) == module:
            continue
        if called in BUILT_IN_BOOTSTRAP or (owner_name == "redis_roles" and called.startswith("connect")):
            found.append(f"{owner_name + '.' if owner_name else ''}{called}:{node.lineno}")
    return found


def _scanned_for_construction() -> dict[str, Path]:
    scanned = dict(MODULES)
    for path in (REPO / "scripts").rglob("*.py"):
        rel = path.relative_to(REPO).with_suffix("")
        if rel.parts[:2] != ("scripts", "bench"):
            scanned[".".join(rel.parts)] = path
    return scanned


def test_the_construction_checker_sees_the_constructions() -> None:
    assert any(c.startswith("EventStore") for c in _constructions(MODULES["service.bootstrap"]))
    built = {c.split(":")[0] for c in _constructions(MODULES["service.bootstrap"])}
    assert built >= SERVICE_OBJECTS, SERVICE_OBJECTS - built
    assert any(c.startswith("redis_roles.connect") for c in _constructions(MODULES["service.bootstrap"]))
    # Every adapter and use case, found on the source (and no exception, no value record).
    assert {"AccountStore", "HouseBots", "StreamSlots", "KeptAudits", "RateLimits", "EventStore"} <= set(COMPONENTS)
    assert {"PendingTurns", "FairLine", "PubSubOpener"} <= set(COMPONENTS) and {"PendingTurns", "FairLine"} <= built
    assert set(COMPONENTS) >= SERVICE_OBJECTS
    assert not {"StoreUnavailable", "SlotsFull", "HouseBot", "TournamentRecord"} & set(COMPONENTS)
    assert _constructions(MODULES["service.adapters.announcements"], "service.adapters.announcements") == []
    assert _constructions(MODULES["service.adapters.announcements"], "elsewhere") != []


@pytest.mark.parametrize("name", sorted(_scanned_for_construction()))
def test_only_bootstrap_builds_services_stores_and_clients(name: str) -> None:
    built = _constructions(_scanned_for_construction()[name], name)
    if name in BUILDERS:
        return
    assert not built, f"build these in service/bootstrap.py and pass them in: {built}"


# -- the edges and the read side ------------------------------------------------------------
def test_the_service_never_imports_the_workers() -> None:
    """The API and the workers share ``service``; the workers' package is theirs alone
    (what runs in the API, such as the nudge, lives in ``service``)."""
    found = {
        name: sorted(m for m in _ours(name) if _under(m, "workers")) for name in MODULES if _under(name, "service")
    }
    assert not {k: v for k, v in found.items() if v}, found


def test_the_workers_and_projections_never_import_http() -> None:
    """What both the API and a worker need (a board's body, the rate limits' names) lives
    in a layer both import (``service.views``, the adapters), not in ``service.http``."""
    found = {
        name: sorted(m for m in _ours(name) if _under(m, "service.http"))
        for name in MODULES
        if _under(name, "workers", "projections")
    }
    assert not {k: v for k, v in found.items() if v}, {k: v for k, v in found.items() if v}


@pytest.mark.parametrize("name", sorted(m for m in MODULES if _under(m, "service.audit")))
def test_the_audit_layer(name: str) -> None:
    """The audits re-decide a stream from the store: no web framework or RQ; of ours the
    pure write side, the adapters, the intents' parser (a recorded intent is parsed as
    the API parsed it), the house bots (a tournament's fair-play signal reads its games'
    analyses, whose format the bots define) and each other -- never HTTP, the use cases or
    the workers.  The projection check alone reads Redis and the projection's board renderer and keys: it
    renders the board from the stream as the projection does and compares."""
    assert not _tops(name) & (FRAMEWORKS - {"marshmallow", "redis"}), _tops(name) & FRAMEWORKS
    allowed = (
        *PURE,
        "service.bots",
        "service.adapters",
        "service.audit",
        "schemas.intents",
        "projections.boards",
        "projections.keys",
    )
    assert all(_under(m, *allowed) for m in _ours(name)), {m for m in _ours(name) if not _under(m, *allowed)}


def _runtime_imports_from(name: str, prefix: str) -> list[str]:
    """``module.name`` for each name ``name`` imports from under ``prefix`` outside an
    ``if TYPE_CHECKING:`` block (a type in a signature is no dependency at run time);
    ``module`` alone for a whole module imported."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        for inner in ast.walk(node)
    }
    out = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names if _under(a.name, prefix)]
        elif isinstance(node, ast.ImportFrom) and node.module and _under(node.module, prefix):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                out.append(full if full in MODULES or node.module == prefix else f"{node.module}:{alias.name}")
    return out


@pytest.mark.parametrize("name", sorted(m for m in MODULES if _under(m, "service.http")))
def test_http_imports_only_error_types_from_the_adapters(name: str) -> None:
    """A handler reaches an adapter through ``services()`` (built by the composition
    root) and a use case; of ``service.adapters`` it imports only the exceptions it
    answers (``StoreUnavailable``: 503), and types for its signatures."""
    found = [m for m in _runtime_imports_from(name, "service.adapters") if m.rpartition(":")[2] not in EXCEPTIONS]
    assert not found, found


def test_the_adapter_import_checker_sees_imports() -> None:
    assert "service.adapters.eventstore:StoreUnavailable" in _runtime_imports_from(
        "service.http.app", "service.adapters"
    )
    assert "StoreUnavailable" in EXCEPTIONS and "SlotsFull" in EXCEPTIONS and "EventStore" not in EXCEPTIONS


#: The HTTP modules that may import a module of ``projections``, and which: the live
#: delivery's hub reads the read models' keys and channels by their names.
HTTP_READS_PROJECTIONS = {"service.http.live.hub": {"projections.keys", "projections.publish"}}


@pytest.mark.parametrize("name", sorted(m for m in MODULES if _under(m, "service.http")))
def test_http_reads_the_read_models_through_the_read_side(name: str) -> None:
    """The projections write the read models; HTTP reads them through ``service.views``."""
    found = {m for m in _ours(name) if _under(m, "projections")} - HTTP_READS_PROJECTIONS.get(name, set())
    assert not found, f"read through service.views: {found}"


#: Store methods whose answer holds a game's secret (its seed), which no HTTP module calls.
SECRET_READS = {"secrets", "seed"}


@pytest.mark.parametrize("name", sorted(m for m in MODULES if _under(m, "service.http")))
def test_no_http_module_reads_secrets(name: str) -> None:
    """A handler never holds a game's seed: the use cases and the audits read it, and
    answer what may be shown (the seat-token hashes come from ``store.token_hashes``)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    found = [
        f"{ast.unparse(node)}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SECRET_READS
    ]
    assert not found, found


def private_names_used(source: str) -> list[str]:
    """Where ``source`` uses another module's private name: ``from ours import _x``, or
    ``mod._x`` on a module of ours it imported."""
    tree = ast.parse(source)
    modules: set[str] = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PACKAGES:
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{node.module}.{alias.name}:{node.lineno}")
                modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            modules.update(a.asname or a.name.split(".")[0] for a in node.names if a.name.split(".")[0] in PACKAGES)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        ):
            found.append(f"{node.value.id}.{node.attr}:{node.lineno}")
    return found


def test_the_private_name_checker_sees_uses() -> None:
    assert private_names_used("from service.http import games\ngames._read(1)") == ["games._read:2"]
    assert private_names_used("from service.http.games import _read") == ["service.http.games._read:1"]
    assert private_names_used("import json\njson._default_encoder") == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_uses_another_modules_private_names(name: str) -> None:
    """A name with a leading underscore is its module's own: what another module needs is public."""
    found = private_names_used(MODULES[name].read_text(encoding="utf-8"))
    assert not found, found


def test_nothing_points_outside_the_repo() -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True)
    pattern = re.compile(r"\.\./shared|shared/(rules|API)|clarifications\.md")
    hits = []
    for rel in files.stdout.split():
        path = REPO / rel
        if path.suffix in (".py", ".md", ".toml", ".yaml", ".yml", ".txt", ".cfg", ".sh") or path.name in (
            "Makefile",
            "Dockerfile",
            "run",
        ):
            if path.resolve() == Path(__file__).resolve() or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            hits += [f"{rel}:{i}" for i, line in enumerate(text.splitlines(), 1) if pattern.search(line)]
    assert not hits, hits[:10]
