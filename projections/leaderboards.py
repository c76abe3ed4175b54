"""Leaderboards: ratings, wins and scores per game type and per player.

A global consumer (listed in ``service.bootstrap``): it reads ``GameFinished``
events from the event store's global feed (``EventStore.read_finished``) in
``(tx_id, position)`` order and folds them into Redis.  Ratings depend on the
order in which games finished, so the order must be the same for every reader:

* the feed only returns events of transactions older than the oldest one
  still running, so a transaction that commits late can never be skipped and
  the feed is one total order that only ever grows at the end;
* the consumer's cursor (``lb:{lb}:cursor``) and everything it derived from
  the events before it are written in one ``MULTI``/``EXEC``, guarded by a
  ``WATCH`` on the cursor.  Every write moves the cursor, so two consumers
  (a duplicated job, two workers, a sweep and a rebuild) that read the same
  cursor cannot both commit: the loser retries from the winner's cursor.
  Each finished game is therefore counted exactly once, in feed order;
* every value is a pure function of the events before the cursor, serialised
  deterministically (sorted keys, fixed decimal formatting), so a rebuild
  from an empty Redis writes byte-identical keys (docs/LEADERBOARDS.md).

Ratings: openskill's Plackett-Luce model, one rating per (game type, player),
updated with each finished game's ranks (1 = best, ties share a rank).

Only **rated** games reach the ratings: their ``GameCreated`` says
``"rated": true`` (every seat an account that joined itself or that an
organiser seated; ``service.domain.pipeline``), and they **count**
(``service.domain.counting``): not aborted, every seat made its first decision,
and their set of accounts had not already counted ``PAIRING_LIMIT`` times in
the window.  A casual game, or a rated one that did not count, is listed on
the pages of the accounts that sat in it, marked ``"rated": false`` (with its
``unrated_reason``), and changes no rating.  A seat taken by a name (a casual
game by names, or one from before accounts) is a guest's: on nobody's page.
A player's rating is **provisional** until the player is **established**
(:class:`Trust`: counted games against several distinct opponents who were
established when each game began, the first of its counted games a day
before; house bots are established from the start): shown on the player's
page, not on the leaderboard.  A game moves a player's rating only against
the opponents that were established when it began, so a ring of fresh
accounts moves no rating of its members and lists none of them.

Keys (all share the hash tag ``{lb}``: one Redis Cluster slot, so the whole
update is one transaction)::

    lb:{lb}:cursor               JSON [tx_id, position] of the last folded event
    lb:{lb}:format               FORMAT of the keys below; another one is folded again
    lb:{lb}:meta                 hash  game -> number of finished games folded
    lb:{lb}:stats:<game>         hash  player -> canonical JSON of the player's record
    lb:{lb}:board:<game>         zset  player, score = -rating (ZRANGE = best first,
                                 equal ratings by handle)
    lb:{lb}:recent:<player>      list  newest first, canonical JSON, at most RECENT
    lb:{lb}:pairs:<game>         hash  set of accounts (counting.pairing_of) -> JSON list of
                                 the finish times of its last counted games (at most
                                 counting.PAIRING_LIMIT)
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import redis

from service.adapters.eventstore import EventStore
from service.domain import counting, identity
from service.domain.pipeline import GAME_CREATED
from service.domain.records import START, Cursor, FinishedRow

if TYPE_CHECKING:
    from openskill.models import PlackettLuce

log = logging.getLogger(__name__)

PREFIX = "lb:{lb}:"
CURSOR = PREFIX + "cursor"
META = PREFIX + "meta"
#: The leaderboards' format: a consumer that finds another one (an upgrade
#: that changes what counts, e.g. 2 = rated games only, 4 = guests on no page) folds them again from
#: the start, so the live leaderboards always equal a rebuild.
FORMAT_KEY = PREFIX + "format"
FORMAT = "4"
#: Games kept in a player's recent list.
RECENT = 20
#: Finished games folded per transaction.
BATCH = 200


@dataclass(frozen=True)
class Trust:
    """When a player becomes **established** (docs/LEADERBOARDS.md, "Trust"): at the
    finish of a counted game that leaves it with at least ``games`` counted games
    in which an opponent was established when the game began, against at least
    ``opponents`` distinct such opponents, and at least ``after_s`` seconds after
    the finish of its first counted game (the games' recorded times: a rebuild
    decides the same).  House bots are established from the start."""

    games: int = 5
    opponents: int = 3
    after_s: int = 24 * 3600

    @property
    def at_once(self) -> bool:
        """Every player established from the start (no rule at all)."""
        return self.games <= 0 and self.opponents <= 0 and self.after_s <= 0


TRUST = Trust()


@cache
def model() -> PlackettLuce:
    """openskill's defaults (mu 25, sigma 25/3, beta 25/6, tau 25/300), named
    so that a change of library default cannot silently change our ratings.
    Made on first use: the worker imports this module at start, and most of
    its jobs never rate anything."""
    from openskill.models import PlackettLuce

    return PlackettLuce(mu=25.0, sigma=25.0 / 3.0, beta=25.0 / 6.0, tau=25.0 / 300.0)


#: mu and sigma are stored with this many decimals and every update starts
#: from the stored (rounded) values, so the rating of a player never depends
#: on more than what is written in Redis (a worker and a rebuild on machines
#: whose libm differ in the last bit still agree).
STATE_DECIMALS = 9
#: Ratings, averages and other derived numbers as shown.
SHOW_DECIMALS = 6


def stats_key(game: str) -> str:
    return f"{PREFIX}stats:{game}"


def board_key(game: str) -> str:
    return f"{PREFIX}board:{game}"


def recent_key(player: str) -> str:
    return f"{PREFIX}recent:{player}"


def pairs_key(game: str) -> str:
    return f"{PREFIX}pairs:{game}"


def provisional(rec: dict[str, Any]) -> bool:
    """The player is not established yet: its rating is not listed (once listed, listed)."""
    return rec.get("established_at") is None


def established_when(rec: dict[str, Any], at: str) -> bool:
    """The record's player was established at ``at`` (a game's start)."""
    since = rec.get("established_at")
    return since is not None and (since == "" or counting.seconds(since) <= counting.seconds(at))


def _becomes_established(rec: dict[str, Any], at: str) -> bool:
    """After a counted game finished at ``at``, the player meets every rule of :data:`TRUST`."""
    return (
        rec["vs_established"] >= TRUST.games
        and len(rec["opponents"]) >= TRUST.opponents
        and counting.seconds(at) - counting.seconds(rec["first_at"]) >= TRUST.after_s
    )


def dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fixed(x: float, decimals: int) -> str:
    """A float as fixed-point text; ``-0`` is written ``0``."""
    text = f"{x:.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def rating_of(mu: float, sigma: float) -> float:
    """The displayed rating: openskill's conservative ordinal, mu - 3 sigma."""
    return float(fixed(mu - 3.0 * sigma, SHOW_DECIMALS))


def _board_score(rec: dict[str, Any]) -> float:
    # Negated so that ZRANGE lists the best first and equal ratings by
    # handle; ``+ 0.0`` turns -0.0 into 0.0 so both spell the same.
    return -rating_of(float(rec["mu"]), float(rec["sigma"])) + 0.0


def new_record(player: str = "") -> dict[str, Any]:
    """A player's record before its first counted game.  A house bot (a handle of the
    bots' form, which only the operator provisions: ``identity.reserved_handle``) is
    established from the start (``established_at`` ``""``)."""
    trusted = TRUST.at_once or (bool(player) and identity.reserved_handle(player))
    return {
        "mu": fixed(model().mu, STATE_DECIMALS),
        "sigma": fixed(model().sigma, STATE_DECIMALS),
        "games": 0,
        "wins": 0,
        "score_sum": 0,
        "best": None,
        "last_game": None,
        "last_finished_at": None,
        "established_at": "" if trusted else None,
        "first_at": None,
        "vs_established": 0,
        "opponents": [],
    }


# -- folding ------------------------------------------------------------------
@dataclass
class _Finished:
    """What the leaderboards need of one ``GameFinished`` event."""

    game_id: str
    game: str
    players: list[str]
    scores: list[Any]
    ranks: list[int]
    finished_at: str
    #: When the game began (its opening's time): who was established then counts.
    started_at: str = ""
    #: Counts on the leaderboards; otherwise only listed on the players' pages.
    rated: bool = False
    #: Why a game asked to be rated does not count (``service.domain.counting``).
    unrated_reason: str | None = None
    #: Per seat, whether an account sits there (else a guest's name: on nobody's page).
    accounts: list[bool] | None = None


def _finished(
    event: FinishedRow,
    game: str,
    players: list[str],
    rated: bool = False,
    decided: set[int] | None = None,
    accounts: list[bool] | None = None,
) -> _Finished | None:
    """``None`` for a result the leaderboards cannot use (no ranks): such a
    game is passed over, the same way live and in a rebuild, rather than
    blocking every game after it."""
    result = event.data.get("result")
    result = result if isinstance(result, dict) else {}
    reason = counting.unrated_reason({"rated": rated, "players": players}, result, decided or set())
    seats = range(len(players))
    given_scores = result.get("scores")
    scores: dict[str, Any] = given_scores if isinstance(given_scores, dict) else {}
    if isinstance(result.get("ranks"), dict) and all(str(s) in result["ranks"] for s in seats):
        ranks = [int(result["ranks"][str(s)]) for s in seats]
    elif isinstance(result.get("ranking"), list) and sorted(result["ranking"]) == list(seats):
        ranks = [result["ranking"].index(s) + 1 for s in seats]  # no ties recorded
    else:
        log.warning("leaderboards: game %s finished without ranks; not counted", event.game_id)
        return None
    return _Finished(
        game_id=event.game_id,
        game=game,
        players=players,
        scores=[scores.get(str(s)) for s in seats],
        ranks=ranks,
        finished_at=event.received_at or "",
        started_at=event.opened_at or event.received_at or "",
        # An aborted game (an organiser's abort, the length cap) is unrated, and so is
        # one in which a seat left before its first decision.
        rated=rated and reason is None,
        unrated_reason=reason,
        accounts=accounts,
    )


def _rate(
    records: list[dict[str, Any]], players: list[str], ranks: list[int], trusted: list[bool]
) -> list[tuple[float, float]]:
    """Each seat's ``(mu, sigma)`` after the game: Plackett-Luce with the game's ranks
    (lower is better; equal ranks are a tie), each seat rated against the opponents
    that were established when the game began only (none: its rating stays).  When
    every opponent of every seat counts, that is one ``rate()`` of the whole game."""
    before = [(float(rec["mu"]), float(rec["sigma"])) for rec in records]
    after = list(before)
    whole: list[Any] | None = None
    n = len(records)
    for seat in range(n):
        group = [seat] + [o for o in range(n) if o != seat and trusted[o]]
        if len(group) == 1:
            continue  # a solitaire result, or nobody established to be rated against
        if len(group) == n:  # the whole game, in seat order: one rate() for every such seat
            if whole is None:
                whole = _rated(before, players, ranks, list(range(n)))
            team = whole[seat]
        else:
            team = _rated(before, players, ranks, group)[0]
        after[seat] = (team[0].mu, team[0].sigma)
    return after


def _rated(before: list[tuple[float, float]], players: list[str], ranks: list[int], seats: list[int]) -> list[Any]:
    """openskill's update of ``seats`` (in that order) playing each other with their ranks."""
    teams = [[model().create_rating(list(before[i]), name=players[i])] for i in seats]
    return model().rate(teams, ranks=[float(ranks[i]) for i in seats])


def _trust(rec: dict[str, Any], established: list[str], finished_at: str) -> None:
    """Count a counted game towards its player's trust (``established``: its opponents
    that were established when the game began), and establish the player when it
    meets every rule of :data:`TRUST`."""
    if rec.get("first_at") is None:
        rec["first_at"] = finished_at
    if established:
        rec["vs_established"] = rec.get("vs_established", 0) + 1
        seen = set(rec.get("opponents", []))
        for opponent in sorted(identity.handle_key(o) for o in established):
            if len(seen) >= TRUST.opponents:
                break
            seen.add(opponent)
        rec["opponents"] = sorted(seen)
    rec.setdefault("vs_established", 0)
    rec.setdefault("opponents", [])
    if rec.get("established_at") is None and _becomes_established(rec, finished_at):
        rec["established_at"] = finished_at


class _Fold:
    """Records touched by one batch, loaded on first use from the watched pipe."""

    def __init__(self, pipe: Any):
        self.pipe = pipe
        self.records: dict[tuple[str, str], dict[str, Any]] = {}
        self.counts: dict[str, int] = {}
        self.recent: dict[str, list[str]] = {}
        self.pairs: dict[tuple[str, str], list[str]] = {}

    def pairing(self, game: str, pairing: str) -> list[str]:
        """The finish times of the pairing's last counted games of this type."""
        key = (game, pairing)
        if key not in self.pairs:
            raw = self.pipe.hget(pairs_key(game), pairing)
            self.pairs[key] = json.loads(raw) if raw else []
        return self.pairs[key]

    def record(self, game: str, player: str) -> dict[str, Any]:
        key = (game, player)
        if key not in self.records:
            raw = self.pipe.hget(stats_key(game), player)
            self.records[key] = json.loads(raw) if raw else new_record(player)
        return self.records[key]

    def count(self, game: str) -> int:
        if game not in self.counts:
            self.counts[game] = int(self.pipe.hget(META, game) or 0)
        return self.counts[game]

    def apply(self, f: _Finished) -> None:
        if not f.rated:
            self._casual(f)
            return
        pairing = counting.pairing_of(f.players)
        times = self.pairing(f.game, pairing)
        if not counting.pairing_allows(times, f.finished_at):
            self._casual(f, counting.REPEATED_PAIRING)
            return
        self.pairs[(f.game, pairing)] = [*counting.recent_counted(times, f.finished_at), f.finished_at][
            -counting.PAIRING_LIMIT :
        ]
        records = [self.record(f.game, p) for p in f.players]
        # Who was established when the game began (before this game changes anyone).
        trusted = [established_when(rec, f.started_at) for rec in records]
        rated = _rate(records, f.players, f.ranks, trusted)
        for seat, rec in enumerate(records):
            mu, sigma = rated[seat]
            rec["mu"] = fixed(mu, STATE_DECIMALS)
            rec["sigma"] = fixed(sigma, STATE_DECIMALS)
            _trust(rec, [f.players[o] for o in range(len(records)) if o != seat and trusted[o]], f.finished_at)
            # Games with a score: a game that ended because its other seats left (a forfeit)
            # has ranks but no scores, and counts for the rating but not the average.
            scored = rec.get("scored", rec["games"])
            rec["games"] += 1
            rec["wins"] += 1 if f.ranks[seat] == 1 else 0
            score = f.scores[seat]
            rec["scored"] = scored
            if isinstance(score, int | float) and not isinstance(score, bool):
                rec["scored"] = scored + 1
                rec["score_sum"] += score
                rec["best"] = score if rec["best"] is None else max(rec["best"], score)
            rec["last_game"] = f.game_id
            rec["last_finished_at"] = f.finished_at
        self.counts[f.game] = self.count(f.game) + 1
        for seat, player in enumerate(f.players):
            rec = records[seat]
            entry = {
                "game_id": f.game_id,
                "game": f.game,
                "finished_at": f.finished_at,
                "seat": seat,
                "rank": f.ranks[seat],
                "score": f.scores[seat],
                "players": [{"player": p, "rank": f.ranks[i], "score": f.scores[i]} for i, p in enumerate(f.players)],
                "rating_after": fixed(rating_of(float(rec["mu"]), float(rec["sigma"])), SHOW_DECIMALS),
                "rated": True,
            }
            self.recent.setdefault(player, []).append(dumps(entry))

    def _casual(self, f: _Finished, reason: str | None = None) -> None:
        """A casual game, or a rated one that does not count (``reason``, else the
        game's own): on its players' pages, marked so; no rating moves."""
        reason = reason or f.unrated_reason
        for seat, player in enumerate(f.players):
            if not (f.accounts and seat < len(f.accounts) and f.accounts[seat]):
                continue  # a guest's name: listed on no player's page
            entry = {
                "game_id": f.game_id,
                "game": f.game,
                "finished_at": f.finished_at,
                "seat": seat,
                "rank": f.ranks[seat],
                "score": f.scores[seat],
                "players": [{"player": p, "rank": f.ranks[i], "score": f.scores[i]} for i, p in enumerate(f.players)],
                "rating_after": None,
                "rated": False,
            }
            if reason is not None:
                entry["unrated_reason"] = reason
            self.recent.setdefault(player, []).append(dumps(entry))

    def write(self, pipe: Any) -> None:
        """Queue every write of the batch on ``pipe`` (inside MULTI)."""
        by_game: dict[str, dict[str, str]] = {}
        for (game, player), rec in sorted(self.records.items()):
            by_game.setdefault(game, {})[player] = dumps(rec)
        for game, mapping in by_game.items():
            pipe.hset(stats_key(game), mapping=mapping)
            # Provisional ratings are not listed (established for good: once listed, listed).
            listed = {
                p: _board_score(self.records[(game, p)]) for p in mapping if not provisional(self.records[(game, p)])
            }
            if listed:
                pipe.zadd(board_key(game), listed)
        for (game, pairing), times in sorted(self.pairs.items()):
            pipe.hset(pairs_key(game), pairing, dumps(times))
        if self.counts:
            pipe.hset(META, mapping={g: str(n) for g, n in sorted(self.counts.items())})
        for player, entries in sorted(self.recent.items()):
            # LPUSH of oldest..newest leaves the newest at the head.
            pipe.lpush(recent_key(player), *entries)
            pipe.ltrim(recent_key(player), 0, RECENT - 1)


# -- the consumer -------------------------------------------------------------
def read_cursor(raw: bytes | str | None) -> Cursor:
    if not raw:
        return START
    tx, pos = json.loads(raw)
    return (str(tx), int(pos))


def _players_of(row: FinishedRow) -> tuple[str, list[str], bool]:
    """Game type, player handles (seat = index) and whether it is rated, from
    the game's ``GameCreated`` event (read with its GameFinished): the stream
    alone decides, so a rebuild needs nothing else.  A game from before
    accounts has no ``rated``: casual."""
    if row.opening_type != GAME_CREATED:  # pragma: no cover - every stream opens so
        raise RuntimeError(f"GameFinished for game {row.game_id} without its GameCreated")
    created = row.opening
    return created["game"], list(created["players"]), created.get("rated") is True


def _accounts_of(row: FinishedRow) -> list[bool]:
    """Per seat, whether an account sits there (``GameCreated``'s ``accounts``; a game
    from before accounts has none: every seat a name)."""
    flags = row.opening.get("accounts")
    return [bool(x) for x in flags] if isinstance(flags, list) else [False] * len(row.opening["players"])


def _check_order(cursor: Cursor, cursors: list[Cursor]) -> None:
    """Ratings are only right if the feed moves strictly forward: refuse
    (loudly, writing nothing) rather than fold a game twice."""
    previous = (int(cursor[0]), cursor[1])
    for c in cursors:
        current = (int(c[0]), c[1])
        if current <= previous:
            raise RuntimeError(f"global feed out of order: {c} after {previous}")
        previous = current


def step(r: redis.Redis, store: EventStore, batch: int = BATCH) -> int | None:
    """Fold the next batch of finished games in one transaction.

    Returns how many were folded (0: caught up), or ``None`` if another
    consumer moved the cursor first (nothing was written; try again)."""
    with r.pipeline(transaction=True) as pipe:
        try:
            pipe.watch(CURSOR)
            cursor = read_cursor(pipe.get(CURSOR))
            rows = store.read_finished(after=cursor, limit=batch)
            if not rows:
                pipe.unwatch()
                return 0
            _check_order(cursor, [row.cursor for row in rows])
            fold = _Fold(pipe)
            # Which seats decided, for the rated games only (one query for the batch).
            rated_ids = [row.game_id for row in rows if _players_of(row)[2]]
            decided = store.decided_seats(rated_ids) if rated_ids else {}
            for row in rows:
                finished = _finished(row, *_players_of(row), decided.get(row.game_id), _accounts_of(row))
                if finished is not None:
                    fold.apply(finished)
            pipe.multi()
            fold.write(pipe)
            pipe.set(CURSOR, dumps(list(rows[-1].cursor)))
            pipe.set(FORMAT_KEY, FORMAT)
            pipe.execute()
            return len(rows)
        except redis.WatchError:
            return None


def reset(r: redis.Redis, retries: int = 20) -> None:
    """Drop every leaderboard key, cursor included, in one transaction."""
    for _ in range(retries):
        with r.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(CURSOR)
                # A key created after this scan also moves the cursor, so the
                # EXEC below fails and we scan again.  The scan is the client's
                # (on a Redis Cluster it visits every primary; the keys share one
                # slot, so one of them answers).
                found = list(r.scan_iter(match=PREFIX + "*", count=1000))
                pipe.multi()
                if found:
                    pipe.delete(*found)
                pipe.delete(CURSOR)
                # Empty leaderboards of this format (folded from the start next).
                pipe.set(FORMAT_KEY, FORMAT)
                pipe.execute()
                return
            except redis.WatchError:
                continue
    raise RuntimeError("leaderboards: could not reset (the cursor kept moving)")


def consume(
    r: redis.Redis,
    store: EventStore,
    rebuild: bool = False,
    progress: Callable[[str], None] | None = None,
    batch: int = BATCH,
    max_conflicts: int = 50,
) -> int:
    """Fold every finished game after the cursor; with ``rebuild``, drop the
    leaderboards first and fold everything from the start.  Returns the number
    of games this call folded.

    Losing a race to another consumer is normal (it did the work); after
    ``max_conflicts`` lost races in a row we stop and leave the rest to the
    winner or to the next sweep."""
    if rebuild or r.get(FORMAT_KEY) != FORMAT.encode():
        # A rebuild, or leaderboards of another format (folded before an
        # upgrade that changed what counts): fold everything again.
        reset(r)
    folded = conflicts = 0
    while conflicts < max_conflicts:
        n = step(r, store, batch)
        if n is None:
            conflicts += 1
            continue
        conflicts = 0
        if n == 0:
            break
        folded += n
        if progress:
            progress(f"leaderboards: {folded} finished game(s) folded")
    return folded


# -- reading (the query side) -------------------------------------------------
def present(player: str, rec: dict[str, Any]) -> dict[str, Any]:
    """A player's record as the API shows it."""
    mu, sigma = float(rec["mu"]), float(rec["sigma"])
    games = rec["games"]
    scored = rec.get("scored", games)  # records from before forfeits: every game had scores
    return {
        "player": player,
        "rating": rating_of(mu, sigma),
        "mu": float(fixed(mu, SHOW_DECIMALS)),
        "sigma": float(fixed(sigma, SHOW_DECIMALS)),
        "games": games,
        "wins": rec["wins"],
        "average_score": float(fixed(rec["score_sum"] / scored, SHOW_DECIMALS)) if scored else None,
        "best_score": rec["best"],
        "provisional": provisional(rec),
    }


def _consistent(r: redis.Redis, read: Callable[[Any], Any], retries: int = 20) -> Any:
    """Run ``read(pipe)`` against one version of the leaderboards: if the
    consumer commits meanwhile (the cursor moves), read again."""
    for _ in range(retries):
        with r.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(CURSOR)
                out = read(pipe)
                pipe.multi()
                pipe.get(CURSOR)
                pipe.execute()
                return out
            except redis.WatchError:
                continue
    # Only under a storm of writes: answer from the latest state, unguarded.
    return read(r)  # pragma: no cover


def board(r: redis.Redis, game: str, offset: int, limit: int) -> dict[str, Any]:
    """One page of a game type's leaderboard, best first."""

    def read(pipe: Any) -> dict[str, Any]:
        players = [p.decode() for p in pipe.zrange(board_key(game), offset, offset + limit - 1)]
        raws = pipe.hmget(stats_key(game), players) if players else []
        entries = []
        for i, (player, raw) in enumerate(zip(players, raws, strict=True)):
            if raw is not None:
                entries.append({"position": offset + i + 1, **present(player, json.loads(raw))})
        return {
            "game": game,
            "entries": entries,
            "total": pipe.zcard(board_key(game)),
            "finished_games": int(pipe.hget(META, game) or 0),
            "limit": limit,
            "offset": offset,
        }

    return _consistent(r, read)


def summary(r: redis.Redis, games: list[str]) -> list[dict[str, Any]]:
    def read(pipe: Any) -> list[dict[str, Any]]:
        counts = pipe.hmget(META, games) if games else []
        return [
            {"game": g, "players": pipe.zcard(board_key(g)), "finished_games": int(c or 0)}
            for g, c in zip(games, counts, strict=True)
        ]

    return _consistent(r, read)


def player(r: redis.Redis, handle: str, games: list[str]) -> dict[str, Any]:
    """A player's ratings per game type and recent finished games."""

    def read(pipe: Any) -> dict[str, Any]:
        ratings = []
        for game in games:
            raw = pipe.hget(stats_key(game), handle)
            if raw is None:
                continue
            position = pipe.zrank(board_key(game), handle)
            ratings.append(
                {"game": game, "position": None if position is None else position + 1}
                | present(handle, json.loads(raw))
            )
        recent = []
        for raw in pipe.lrange(recent_key(handle), 0, RECENT - 1):
            entry = json.loads(raw)
            entry["rating_after"] = None if entry["rating_after"] is None else float(entry["rating_after"])
            recent.append(entry)
        return {"player": handle, "ratings": ratings, "recent": recent}

    return _consistent(r, read)
