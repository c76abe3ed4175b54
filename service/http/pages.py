"""Pages for people (docs/API.md, "Pages, for people"): server-rendered HTML
over the JSON API.

* Every page is built from ``service.http.pages_api``, which runs the ``/v1``
  handlers for the same caller, so a page never shows more than the JSON API
  shows that viewer.  A browser that navigates sends no ``Authorization``
  header, so what it first gets is the spectator's page; the page's script
  (``static/qd.js``) holds a seat's or the organiser's token in the tab's
  ``sessionStorage`` (typed in, or passed as ``#token=...``, which never
  reaches a server) and fetches the same URL again with the header and
  ``?partial=1`` to swap in the viewer's version.  No cookie is ever set, so
  there is no session to steal and nothing for a cross-site request to ride.
* The boards are drawn server-side, in SVG, by one template per game
  (``templates/boards/``) from the view JSON; the log in words comes from the
  events feed (``pages_text``).
* Errors are HTML pages with the API's status and message, never a trace;
  ``/v1/...`` keeps its JSON error shape (``app.py``).
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import math
import uuid
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, Response, current_app, render_template, request, url_for
from jinja2 import Template
from markupsafe import escape

from service import redis_roles, views
from service.adapters.eventstore import StoreUnavailable
from service.domain import identity
from service.domain.errors import DomainError
from service.games import registry
from service.http import pages_api, pages_boards, pages_text
from service.http.common import bearer, is_admin, services
from service.http.errors import ApiError, from_domain, unavailable

log = logging.getLogger(__name__)

HERE = Path(__file__).parent
bp = Blueprint(
    "pages",
    __name__,
    template_folder="templates",
    static_folder="static",
    static_url_path="/assets",
)

#: Names of the games for people.
TITLES = {
    "nauticus": "Nauticus",
    "nautilus-industries": "Nautilus Industries",
    "waters-of-nereus": "Waters of Nereus",
}
#: Events of a running game shown in its log (the newest); the rest is one click away.
LOG_TAIL = 200
#: Rows of a list page.
PAGE_SIZE = 25
#: Responses larger than this are gzip-compressed for clients that accept it.
GZIP_MIN_BYTES = 4096
#: The pages' Content-Security-Policy: our own scripts, styles and images only,
#: no inline script or style, no frames, no form posts.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


# -- the sections of the home page ---------------------------------------------
#: Tournaments on the home page: up to this many running, and this many of the newest.
HOME_TOURNAMENTS = 10
#: Order of a tournament's status in lists: running first, then registering, then finished or aborted.
_STATUS_ORDER = {"running": 0, "registering": 1, "finished": 2, "aborted": 2}

#: (title, template) of the home page's sections, in order, each rendered with
#: what its loader returns.
HOME_SECTIONS: list[tuple[str, str, Callable[[], dict[str, Any]]]] = [
    ("Open tables", "home/_tables.html", lambda: {"list": pages_api.table_list(status="open", limit=10)}),
    ("Play bots", "home/_play_bot.html", lambda: {"bots": pages_api.bot_list()}),
    ("Running games", "home/_games.html", lambda: {"list": pages_api.game_list(status="active", limit=10)}),
    ("Recent results", "home/_games.html", lambda: {"list": pages_api.game_list(status="finished", limit=10)}),
    ("Tournaments", "home/_tournaments.html", lambda: {"tournaments": _home_tournaments()}),
    ("Leaderboards", "home/_leaderboards.html", lambda: {"boards": _top_boards(5)}),
]


#: The clocks a person picks from when opening a table (value: the ``clock`` of
#: ``POST /v1/tables`` as JSON; empty: the server's default).
CLOCK_PRESETS = [
    ("", "3 days a move (the default)"),
    ('{"type": "deadline", "per_decision_s": 86400}', "1 day a move"),
    ('{"type": "fischer", "base_s": 900, "increment_s": 10}', "15 min + 10 s a move"),
    ('{"type": "fischer", "base_s": 300, "increment_s": 5}', "5 min + 5 s a move"),
]


@cache
def game_facts() -> list[dict[str, Any]]:
    """Each game's name and seat range, for the lobby's forms."""
    out = []
    for name in registry.names():
        engine = registry.get(name)
        out.append(
            {"game": name, "title": TITLES.get(name, name), "min": engine.min_players, "max": engine.max_players}
        )
    return out


def bot_seats(game: dict[str, Any]) -> dict[int, int]:
    """``{seat: level}`` of the game's seats that house bots sit in, from ``GET /v1/bots``
    (a casual seat cannot take a bot's name: ``reserved_name``)."""
    levels = {b["handle"].lower(): b["level"] for b in pages_api.bot_list() if b["game"] == game["game"]}
    return {seat: levels[name.lower()] for seat, name in enumerate(game["players"]) if name.lower() in levels}


@bp.app_template_global()
def bot_badge(handle: str) -> str:
    """A house bot's badge, with its level (several bots of one game sit at one table)."""
    level = bot_levels().get(handle.lower())
    return "house bot" if level is None else f"house bot, level {level}"


def bot_levels() -> dict[str, int]:
    """``{handle: level}`` of the house bots (``GET /v1/bots``), once per request."""
    from flask import g

    if "qd_bot_levels" not in g:
        g.qd_bot_levels = {b["handle"].lower(): b["level"] for b in pages_api.bot_list()}
    return g.qd_bot_levels


def _home_tournaments() -> list[dict[str, Any]]:
    """Running tournaments, then registering, then finished; newest first within each."""
    found = pages_api.tournament_list(HOME_TOURNAMENTS)
    found.sort(key=lambda t: t["created_at"] or "", reverse=True)
    return sorted(found, key=lambda t: _STATUS_ORDER.get(t["status"], 3))


def _top_boards(top: int) -> list[dict[str, Any]]:
    return [pages_api.leaderboard(entry["game"], limit=top) for entry in pages_api.leaderboard_list()["games"]]


# -- helpers --------------------------------------------------------------------
def _game_id(raw: str) -> str:
    """A game id in its canonical form, or a 404 that says what an id looks like."""
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        raise ApiError(
            404,
            "game_not_found",
            "That is not a game id: a game id looks like 1b4e28ba-2fa1-41d2-883f-0016d3cca427.",
        ) from None


def _tournament_id(raw: str) -> str:
    """A tournament id in its canonical form, or the same kind of 404 as a bad game id."""
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        raise ApiError(
            404,
            "tournament_not_found",
            "That is not a tournament id: a tournament id looks like 1b4e28ba-2fa1-41d2-883f-0016d3cca427.",
        ) from None


def _int_arg(name: str, low: int = 0, high: int = 2**31 - 1) -> int | None:
    raw = request.args.get(name)
    if raw in (None, ""):
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(422, "validation_error", f"'{name}' must be a whole number.", {"fields": {name: raw}}) from None
    if not low <= value <= high:
        raise ApiError(422, "validation_error", f"'{name}' must be between {low} and {high}.", {"fields": {name: raw}})
    return value


def _partial() -> bool:
    return request.args.get("partial") == "1"


def _viewer_label(game: dict[str, Any]) -> dict[str, Any]:
    """Who the page is for, as the JSON API decided it (``seat``), plus whether
    the header carried the operator token (it only chooses which controls to show)."""
    organiser = is_admin(bearer())
    seat = game.get("seat")
    if organiser:
        text = "the organiser (everything is shown)"
    elif seat is not None:
        text = f"{game['players'][seat]} (seat {seat})"
    else:
        text = "a spectator"
    credential = bearer()
    # An account's key is kept by the browser for every page (``static/account.js``); a
    # token (a seat's, the organiser's) only for this game, and the page offers to forget it.
    key = identity.looks_like_key(credential)
    return {"organiser": organiser, "seat": seat, "text": text, "token": credential is not None and not key, "key": key}


def render(template: str, status: int = 200, **context: Any) -> Response:
    """A page, or only its ``main`` block with ``?partial=1`` (what the script swaps in)."""
    context.setdefault("titles", TITLES)
    context.setdefault("game_facts", game_facts())
    context.setdefault("clock_presets", CLOCK_PRESETS)
    context.setdefault("trust", views.TRUST)
    tmpl: Template = current_app.jinja_env.get_template(template)
    if _partial() and "main" in tmpl.blocks:
        current_app.update_template_context(context)
        body = "".join(tmpl.blocks["main"](tmpl.new_context(context)))
    else:
        body = render_template(tmpl, **context)
    return Response(body, status=status, mimetype="text/html")


# -- error pages ----------------------------------------------------------------
def error_page(status: int, code: str, message: str) -> Response:
    """The HTML error page: the API's status, code and sentence, and where to go next."""
    try:
        return render("error.html", status=status, status_code=status, code=code, message=message)
    except Exception:  # the page itself failed (a template, say): still no trace, still the status
        log.exception("the error page could not be rendered")
        text = f"<!doctype html><title>{status}</title><h1>{status}</h1><p>{escape(message)}</p>"
        return Response(text, status=status, mimetype="text/html")


def wants_html() -> bool:
    """Whether an error outside ``/v1`` (an unknown path, a wrong method) should
    be answered as a page: a browser asking for HTML anywhere but the API."""
    path = request.path
    if path.startswith("/v1/") or path == "/v1" or path in ("/openapi.json", "/healthz", "/readyz", "/metrics"):
        return False
    best = request.accept_mimetypes.best_match(["application/json", "text/html"])
    return best == "text/html" and request.accept_mimetypes["text/html"] > request.accept_mimetypes["application/json"]


@bp.errorhandler(ApiError)
def _api_error(err: ApiError) -> Response:
    return error_page(err.status, err.code, err.message)


@bp.errorhandler(DomainError)
def _domain_error(err: DomainError) -> Response:
    return _api_error(from_domain(err))


@bp.errorhandler(StoreUnavailable)
def _store_down(err: StoreUnavailable) -> Response:
    return _api_error(unavailable("postgres", type(err).__name__))


def _redis_down(err: Exception) -> Response:
    return _api_error(unavailable("redis", type(err).__name__))


for _error in redis_roles.DOWN:
    bp.register_error_handler(_error, _redis_down)


@bp.errorhandler(Exception)
def _unexpected(err: Exception) -> Response:
    from werkzeug.exceptions import HTTPException

    if isinstance(err, HTTPException):
        return error_page(err.code or 500, "http_error", err.description or err.name)
    import psycopg

    if isinstance(err, (psycopg.OperationalError, psycopg.errors.ReadOnlySqlTransaction)):
        return _store_down(StoreUnavailable(str(err)))
    log.exception("unhandled error on a page")
    return error_page(500, "internal_error", "Something went wrong on our side.")


@bp.after_request
def _headers(resp: Response) -> Response:
    """No caching of a viewer's page; our own resources only; compressed when large."""
    if request.endpoint == "pages.static":
        resp.headers["Cache-Control"] = "public, max-age=300"
        return resp
    resp.headers["Content-Security-Policy"] = CSP
    resp.headers["X-Content-Type-Options"] = "nosniff"
    resp.headers["Referrer-Policy"] = "same-origin"
    resp.headers["Cache-Control"] = "no-store" if request.headers.get("Authorization") else "no-cache"
    resp.vary.add("Authorization")
    resp.vary.add("Accept-Encoding")
    if (
        not resp.direct_passthrough
        and resp.status_code < 300
        and "gzip" in request.headers.get("Accept-Encoding", "")
        and "Content-Encoding" not in resp.headers
    ):
        body = resp.get_data()
        if len(body) >= GZIP_MIN_BYTES:
            resp.set_data(gzip.compress(body, compresslevel=5))
            resp.headers["Content-Encoding"] = "gzip"
    return resp


@cache
def _asset_version(name: str) -> str:
    return hashlib.sha256((HERE / "static" / name).read_bytes()).hexdigest()[:12]


@bp.app_template_global()
def asset(name: str) -> str:
    """URL of a static file, with its content hash so a new version is never stale."""
    return url_for("pages.static", filename=name, v=_asset_version(name))


@bp.app_template_filter("ago")
def _short_time(value: str | None) -> str:
    """``2026-03-01T12:34:56.789Z`` -> ``2026-03-01 12:34`` (UTC)."""
    if not value:
        return ""
    return value.replace("T", " ")[:16] + " UTC"


@bp.app_template_filter("duration")
def duration(seconds: float | None) -> str:
    """A clock's time for people: ``3 days``, ``1 day 4 h``, ``2 h 5 min``, ``4 min 30 s``, ``12 s``
    (the same words as ``QD.duration`` in ``static/account.js``)."""
    if seconds is None:
        return ""
    s = max(0, int(seconds))
    days, rest = divmod(s, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} day{'s' if days > 1 else ''}" + (f" {hours} h" if hours else "")
    if hours:
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    if minutes:
        return f"{minutes} min" + (f" {secs} s" if secs else "")
    return f"{secs} s"


@bp.app_template_filter("clock_terms")
def clock_terms(clock: dict[str, Any] | None) -> str:
    """A table's or game's time control in words (``15 min + 10 s a move``, ``3 days a move``)."""
    if not clock:
        return "the server's default clock"
    if clock.get("type") == "fischer":
        return f"{duration(clock.get('base_s'))} + {duration(clock.get('increment_s'))} a move"
    if clock.get("type") == "deadline":
        return f"{duration(clock.get('per_decision_s'))} a move"
    return "no clock"


@bp.app_template_filter("detail")
def _detail(value: Any) -> str:
    """A check's detail for people: yes/no, a dash for nothing, lists joined."""
    if value is True:
        return "yes"
    if value is False:
        return "no"
    if value is None:
        return "–"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "none"
    return str(value)


@bp.app_template_filter("score")
def _score(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.2f}" if not math.isnan(value) else "–"
    return str(value)


# -- pages ----------------------------------------------------------------------
@bp.route("/")
def home() -> Response:
    sections = [{"title": title, "template": tmpl, **load()} for title, tmpl, load in HOME_SECTIONS]
    return render("home.html", sections=sections)


@bp.route("/account")
def account_page() -> Response:
    """Sign up, sign in, sign out, a new key: all done by the page's script against ``/v1``
    (``static/account.js``); the server only draws the forms."""
    return render("account.html")


#: Games of each kind listed on My games.
ME_GAMES = 25


@bp.route("/me")
def me_page() -> Response:
    """My games: the spectator's page says to sign in; the script fetches it again with the
    account's key (``?partial=1``) and swaps in the account's games, tables, invitations
    and ratings, each from the ``/v1`` endpoint a client would call with that key."""
    if bearer() is None:
        return render("me.html", me=None)
    me = pages_api.account()
    handle = me["handle"]
    running = pages_api.game_list(player=handle, status="active", limit=ME_GAMES)
    for g in running["games"]:
        # Whose turn: the game as this key sees it (its seat and who is to act).
        seen = pages_api.game(g["id"])
        g["seat"] = seen.get("seat")
        g["your_turn"] = g["seat"] is not None and g["seat"] in (seen.get("to_act") or [])
    # A game where the key has no seat is a casual game by the same name: a guest's, not this account's.
    running["games"] = sorted((g for g in running["games"] if g["seat"] is not None), key=lambda g: not g["your_turn"])
    finished = pages_api.game_list(player=handle, status="finished", limit=ME_GAMES)
    invitations = pages_api.invitation_list() if me["kind"] == "player" else []
    tables = pages_api.table_list(status="open", player=handle, limit=ME_GAMES)
    try:
        ratings = pages_api.player(handle)["ratings"]
    except ApiError:  # no game finished yet: no page
        ratings = []
    return render(
        "me.html",
        me=me,
        running=running,
        finished=finished,
        invitations=invitations,
        tables=tables["tables"],
        ratings=ratings,
    )


@bp.route("/games")
def game_list() -> Response:
    query: dict[str, Any] = {k: request.args.get(k) or None for k in ("game", "status", "player")}
    page = _int_arg("page", 1, 10_000) or 1
    listing = pages_api.game_list(**query, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
    pages = max(1, math.ceil(listing["total"] / PAGE_SIZE))
    return render("games.html", listing=listing, query=query, page=page, pages=pages)


def _board(game_type: str, view: dict[str, Any], players: list[str], **facts: Any) -> dict[str, Any]:
    return pages_boards.present(game_type, view, players, **facts)


def _position(gid: str, game: dict[str, Any], at: int | None, seat: int | None) -> dict[str, Any]:
    """What the board shows: the live game, or (replay) the position after ``at`` events."""
    if at is None:
        return {
            "replay": False,
            "version": game["version"],
            "head": game["version"],
            "to_act": game["to_act"],
            "result": game["result"],
            "finished": game["status"] == "finished",
            "view": game["view"],
            "seat": game.get("seat"),
            "perspective": None,
        }
    st = pages_api.state(gid, at, seat)
    return {
        "replay": True,
        "version": st["version"],
        "head": st["head"],
        "to_act": st["to_act"],
        "result": st["result"],
        "finished": st["finished"],
        "view": st["view"] or {},
        "seat": seat,
        "perspective": seat,
        "last_event": st["last_event"],
    }


def _board_context(
    gid: str, game: dict[str, Any], at: int | None, seat: int | None, legal: dict[str, Any] | None = None
) -> dict[str, Any]:
    pos = _position(gid, game, at, seat)
    if pos["replay"]:
        # The sentence of the event the position follows, from the feed as this viewer gets it.
        line = pages_api.events(gid, pos["version"] - 1, 1)
        pos["caption"] = pages_text.log_lines(game["game"], line, game["players"])[0]["text"] if line else ""
    pos["board"] = _board(game["game"], pos["view"], game["players"], to_act=pos["to_act"], result=pos["result"])
    pos["play"] = None if pos["replay"] else _play(game, legal)
    return pos


# -- playing: the viewer's seat's moves on the game page --------------------------
#: Reads of the board and its legal list at most, to get the two at one version.
_PLAY_READS = 3


def _with_legal(gid: str, game: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The game and, for a seat to act in it, its legal intents at the same version
    (two reads of the API; a move recorded between them means reading the board again).
    While other seats keep moving (a simultaneous phase), the last legal list read is
    given even if the board is older: its version is the one the seat posts at, and the
    stream brings the newer board."""
    legal = None
    for _ in range(_PLAY_READS):
        seat = game.get("seat")
        if seat is None or game["status"] != "active" or seat not in (game.get("to_act") or []):
            return game, None
        legal = pages_api.legal(gid, game["version"])
        if legal["version"] == game["version"]:
            return game, legal
        game = pages_api.game(gid, legal["version"])
    return game, legal


def _play(game: dict[str, Any], legal: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the actions panel needs (``static/play.js``): the seat, the version its
    intents are posted at, whether it is to act, its clock, and its legal intents
    described (``pages_text.describe_intents``).  None for a spectator."""
    seat = game.get("seat")
    if seat is None or is_admin(bearer()):
        return None
    to_act = game.get("to_act") or []
    view = game.get("view") or {}
    clock = game.get("clock") or {}
    intents = pages_text.describe_intents(game["game"], legal["intents"], view, seat, game["players"]) if legal else []
    others = [game["players"][s] for s in to_act if s != seat and 0 <= s < len(game["players"])]
    # Several seats to act at once (Waters of Nereus' crew choice): the others choose in secret.
    together = len(to_act) > 1 or (seat not in to_act and view.get("phase") == "choose")
    return {
        "seat": seat,
        # The version the seat's intents are posted at: its legal list's.
        "version": legal["version"] if legal else game["version"],
        "status": game["status"],
        "your_turn": game["status"] == "active" and seat in to_act,
        "waiting_for": others,
        "simultaneous": together,
        "deadline": (clock.get("deadline") or {}).get(str(seat)),
        "remaining_s": (clock.get("remaining_s") or {}).get(str(seat)),
        "intents": intents,
    }


@bp.route("/games/<raw_id>")
def game_page(raw_id: str) -> Response:
    gid = _game_id(raw_id)
    game = pages_api.game(gid)
    viewer = _viewer_label(game)
    finished = game["status"] == "finished"
    # Replay (time travel) is open to whoever the API opens it to: anyone once
    # the game has finished, the organiser while it runs.
    can_replay = finished or viewer["organiser"]
    at = _int_arg("at", 1)
    seat = _int_arg("seat", 0, 64)
    if at is None and seat is not None and can_replay:
        at = game["version"]
    if finished and at is None:
        at = game["version"]
    legal = None
    if at is None:
        game, legal = _with_legal(gid, game)
    position = _board_context(gid, game, at, seat, legal)
    log_next = None
    if request.args.get("log") == "all":
        # The whole log a page at a time, as the JSON feed pages it (never the
        # whole stream in one answer: a long game's was hundreds of MB).
        after = _int_arg("log_after") or 0
        lines, log_next = pages_api.events_page(gid, after, services().settings.feed_page_default)
    elif position["replay"]:
        # A window of the log around the position; the caption of any position comes with its board.
        after = max(0, position["version"] - LOG_TAIL // 2)
        lines = pages_api.events(gid, after, LOG_TAIL)
    else:
        after = max(0, game["version"] - LOG_TAIL)
        lines = pages_api.events(gid, after, LOG_TAIL)
    log_lines = pages_text.log_lines(game["game"], lines, game["players"])
    return render(
        "game.html",
        game=game,
        viewer=viewer,
        bots=bot_seats(game),
        can_replay=can_replay,
        pos=position,
        log=log_lines,
        log_from=after,
        log_whole=after == 0 and log_next is None and (not log_lines or log_lines[-1]["seq"] >= game["version"]),
        log_next=log_next,
        title=TITLES.get(game["game"], game["game"]),
    )


@bp.route("/games/<raw_id>/board")
def board_fragment(raw_id: str) -> Response:
    """The board alone (what the script swaps in): live with ``?min_version=``, or ``?at=N&seat=S``."""
    gid = _game_id(raw_id)
    game = pages_api.game(gid, _int_arg("min_version"))
    at = _int_arg("at", 1)
    legal = None
    if at is None:
        game, legal = _with_legal(gid, game)
    position = _board_context(gid, game, at, _int_arg("seat", 0, 64), legal)
    return render("_board_fragment.html", game=game, pos=position, viewer=_viewer_label(game))


@bp.route("/games/<raw_id>/log")
def log_fragment(raw_id: str) -> Response:
    """Log entries after ``?after=N`` (what the script appends), at most ``?limit=`` of them
    (``LOG_TAIL`` by default and at most: the script asks again for the rest)."""
    gid = _game_id(raw_id)
    game = pages_api.game(gid)
    after, limit = _int_arg("after") or 0, _int_arg("limit", 1, LOG_TAIL) or LOG_TAIL
    feed = pages_api.events(gid, after, limit)
    lines = pages_text.log_lines(game["game"], feed, game["players"])
    return render("_log_fragment.html", log=lines, game=game)


@bp.route("/games/<raw_id>/audit")
def audit_page(raw_id: str) -> Response:
    gid = _game_id(raw_id)
    game = pages_api.game(gid)
    viewer = _viewer_label(game)
    finished = game["status"] == "finished"
    if not finished and not viewer["organiser"]:
        return render(
            "audit.html",
            status=401 if not viewer["token"] else 403,
            game=game,
            viewer=viewer,
            report=None,
            title=TITLES.get(game["game"], game["game"]),
        )
    report = pages_api.audit_report(gid)
    last = pages_api.events(gid, max(0, game["version"] - 1))
    closing = last[-1] if last and last[-1]["type"] == "GameFinished" else None
    seed = (closing or {}).get("data", {}).get("seed")
    return render(
        "audit.html",
        game=game,
        viewer=viewer,
        report=report,
        seed=seed,
        title=TITLES.get(game["game"], game["game"]),
    )


@bp.route("/players/<handle>")
def player_page(handle: str) -> Response:
    page = pages_api.player(handle)
    active = pages_api.game_list(player=handle, status="active", limit=PAGE_SIZE)
    return render("player.html", player=page, active=active)


@bp.route("/leaderboards")
def leaderboards_page() -> Response:
    return render("leaderboards.html", boards=_top_boards(10))


@bp.route("/leaderboards/<game_type>")
def leaderboard_page(game_type: str) -> Response:
    page = _int_arg("page", 1, 10_000) or 1
    board = pages_api.leaderboard(game_type, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
    pages = max(1, math.ceil(board["total"] / PAGE_SIZE))
    return render("leaderboard.html", board=board, page=page, pages=pages)


@bp.route("/tournaments/<raw_id>")
def tournament_page(raw_id: str) -> Response:
    """A tournament: its terms, the standings (after the latest round, or ``?round=n``)
    and every round's tables, from ``GET /v1/tournaments/{id}``, ``.../standings`` and
    ``.../rounds/{n}``: what the JSON API shows anyone (it shows everyone the same)."""
    tid = _tournament_id(raw_id)
    t = pages_api.tournament(tid)
    wanted = _int_arg("round", 0, 20)
    shown = pages_api.standings(tid, wanted)
    # Every round paired (at most 20, each at most 128 tables), newest first.
    rounds = [pages_api.tournament_round(tid, n) for n in range(t["round"], 0, -1)]
    playing = next((r for r in rounds if r["round"] == shown["round"] and r["status"] != "finished"), None)
    return render(
        "tournament.html",
        t=t,
        shown=shown,
        latest=wanted is None or wanted == t["round"],
        in_play=playing is not None,
        rounds=rounds,
        title=TITLES.get(t["game"], t["game"]),
    )


def register(app: Flask) -> None:
    """Add the pages to ``app`` (``service.http.app.create_app``)."""
    app.register_blueprint(bp)


__all__ = ["TITLES", "bp", "error_page", "register", "wants_html"]
