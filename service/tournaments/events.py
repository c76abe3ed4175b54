"""A tournament's events: frozen data, named in the past tense (TRN-001).

Each event is a frozen dataclass with its stream type in ``TYPE``, a JSON form
(``to_data``: integers, strings, booleans, null, lists and objects only, no
floats) and a strict parser (``from_data``).  The parser is what the audit
reads a stored or exported stream with, so anything malformed there is a
:class:`MalformedEvent` naming the field, never a crash.

Players are account handles; a table's ``players`` are in seat order (seat 0
first).  Results are those of the game at the table, in seats, trimmed to what
the tournament uses (:func:`table_result`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from itertools import pairwise
from typing import Any, ClassVar

#: The pairing algorithm a tournament was created with.  The audit re-pairs with
#: this version only; a change to ``pairing.py`` that changes any output is a new
#: version, and tournaments created before it keep theirs (TRN-002).
PAIRING_VERSION = "qd-pairing-v1"

SWISS, ROUND_ROBIN = "swiss", "round_robin"
FORMATS = (SWISS, ROUND_ROBIN)

#: ``result.reason`` of a game (docs/API.md: clocks, resignation, abort).
COMPLETED, FORFEIT, ABORTED = "completed", "forfeit", "aborted"
REASONS = (COMPLETED, FORFEIT, ABORTED)

#: The keys of a game's result that a tournament keeps (the rest, such as the
#: scoring breakdown, stays in the game's own stream).
RESULT_KEYS = ("reason", "forfeited", "ranking", "ranks", "scores")

#: Bounds on what one stream may hold, so nothing a stranger sends can make a
#: fold, a pairing or an audit unbounded (TRN-003).
MAX_NAME = 100
MAX_HANDLE = 64
MAX_GAME_ID = 64
MAX_PLAYERS = 256
MAX_ROUNDS = 20
#: No game seats more than 6 (``service/games/registry.py``); seating tries every order
#: of a table (6! = 720), so a stream may not ask for more.
MAX_TABLE_SIZE = 6
MAX_SCORE = 10**9
_HEX64 = re.compile(r"[0-9a-f]{64}")


class MalformedEvent(ValueError):
    """A stored event that is not one of ours, or whose data is not well formed."""


# -- field readers: every one names the field it refuses ------------------------------------------


def _need(data: Any, keys: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise MalformedEvent("event data must be an object")
    missing = [k for k in keys if k not in data]
    extra = sorted(set(data) - set(keys) - set(optional))
    if missing or extra:
        raise MalformedEvent(f"event data: missing {missing}, unexpected {extra}")
    return data


def _int(value: Any, name: str, lo: int, hi: int) -> int:
    if type(value) is not int or not lo <= value <= hi:
        raise MalformedEvent(f"'{name}' must be an integer from {lo} to {hi}")
    return value


def _str(value: Any, name: str, longest: int) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= longest:
        raise MalformedEvent(f"'{name}' must be a string of 1 to {longest} characters")
    return value


def _players(value: Any, name: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise MalformedEvent(f"'{name}' must be a list of handles")
    out = tuple(_str(v, name, MAX_HANDLE) for v in value)
    if len(set(out)) != len(out):
        raise MalformedEvent(f"'{name}' names a player twice")
    return out


def _bool(value: Any, name: str) -> bool:
    if type(value) is not bool:
        raise MalformedEvent(f"'{name}' must be true or false")
    return value


def _hex64(value: Any, name: str) -> str:
    if not isinstance(value, str) or not _HEX64.fullmatch(value):
        raise MalformedEvent(f"'{name}' must be 64 lowercase hex digits")
    return value


def _json_object(value: Any, name: str) -> dict[str, Any] | None:
    if value is not None and not isinstance(value, dict):
        raise MalformedEvent(f"'{name}' must be an object or null")
    return None if value is None else _copy(value)


def _copy(value: Any) -> Any:
    """A deep copy of JSON data (no floats let through), so an event never aliases
    what it was built from."""
    if isinstance(value, dict):
        return {str(k): _copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_copy(v) for v in value]
    if value is None or isinstance(value, bool | int | str):
        return value
    raise MalformedEvent(f"not JSON data without floats: {type(value).__name__}")


# -- the points scheme ------------------------------------------------------------------------------


def read_points(value: Any, sizes: tuple[int, ...]) -> dict[str, list[int]]:
    """A points scheme: for each allowed table size (its decimal string), the points
    of places 1..size, non-negative integers, never rising (TRN-030)."""
    if not isinstance(value, dict) or set(value) != {str(s) for s in sizes}:
        raise MalformedEvent(f"'points' must give the points of every table size {list(sizes)}")
    out: dict[str, list[int]] = {}
    for size in sizes:
        row = value[str(size)]
        if not isinstance(row, list) or len(row) != size:
            raise MalformedEvent(f"'points.{size}' must list {size} values, 1st place first")
        row = [_int(v, f"points.{size}", 0, 1000) for v in row]
        if any(a < b for a, b in pairwise(row)):
            raise MalformedEvent(f"'points.{size}': a better place never gets fewer points")
        out[str(size)] = row
    return out


def read_bye_bot(value: Any) -> dict[str, Any]:
    """TRN-080: the house bot that plays an odd field's byes: its handle, level and
    whether its games are rated."""
    d = _need(value, ("handle", "level", "rated"))
    return {
        "handle": _str(d["handle"], "bye_bot.handle", MAX_HANDLE),
        "level": _int(d["level"], "bye_bot.level", 1, 9),
        "rated": _bool(d["rated"], "bye_bot.rated"),
    }


# -- a game's result at a table ---------------------------------------------------------------------


def table_result(game_result: dict[str, Any]) -> dict[str, Any]:
    """What a tournament keeps of a game's result (``GameFinished.result``): the
    reason, the forfeited seats, the ranking, the ranks and the scores."""
    return read_result({k: game_result.get(k) for k in RESULT_KEYS})


def read_result(value: Any, size: int | None = None) -> dict[str, Any]:
    """A table's result, checked: seats are ``0..size-1`` (when ``size`` is known),
    ``ranks``/``scores`` are keyed by seat strings, ``ranking`` and ``forfeited``
    list distinct seats.  An aborted game may rank nobody (TRN-033)."""
    data = _need(value, RESULT_KEYS)
    hi = MAX_TABLE_SIZE - 1 if size is None else size - 1
    if data["reason"] not in REASONS:
        raise MalformedEvent(f"'result.reason' must be one of {', '.join(REASONS)}")

    def seats(v: Any, name: str) -> list[int]:
        if not isinstance(v, list):
            raise MalformedEvent(f"'{name}' must be a list of seats")
        out = [_int(s, name, 0, hi) for s in v]
        if len(set(out)) != len(out):
            raise MalformedEvent(f"'{name}' names a seat twice")
        return out

    def by_seat(v: Any, name: str, lo: int, top: int) -> dict[str, int]:
        if not isinstance(v, dict):
            raise MalformedEvent(f"'{name}' must be an object keyed by seat")
        out = {}
        for k, x in v.items():
            if not isinstance(k, str) or not k.isdigit() or str(int(k)) != k or int(k) > hi:
                raise MalformedEvent(f"'{name}' has a key that is not a seat: {k!r}")
            out[k] = _int(x, name, lo, top)
        return out

    forfeited = seats(data["forfeited"], "result.forfeited")
    ranking = seats(data["ranking"], "result.ranking")
    ranks = by_seat(data["ranks"], "result.ranks", 1, MAX_TABLE_SIZE)
    scores = by_seat(data["scores"], "result.scores", -MAX_SCORE, MAX_SCORE)
    if data["reason"] != ABORTED:
        if size is not None and sorted(ranking) != list(range(size)):
            raise MalformedEvent("'result.ranking' must rank every seat once")
        if {str(s) for s in ranking} != set(ranks):
            raise MalformedEvent("'result.ranks' must give the rank of every seat of the ranking")
    return {"reason": data["reason"], "forfeited": forfeited, "ranking": ranking, "ranks": ranks, "scores": scores}


# -- the events -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TournamentCreated:
    """The opening event: the tournament's terms and its seed commitment (TRN-010)."""

    TYPE: ClassVar[str] = "TournamentCreated"
    name: str
    game: str
    organiser: str | None
    format: str
    table_size: int
    table_sizes: tuple[int, ...]
    rounds: int | None
    clock: dict[str, Any] | None
    rated: bool
    points: dict[str, list[int]]
    seed_commitment: str
    pairing: str = PAIRING_VERSION
    #: The last round a late entrant may join before (TRN-050); ``None``: no late
    #: registration.  Left out of the data when ``None``, so streams made before it
    #: existed read and re-decide unchanged.
    late_until_round: int | None = None
    #: TRN-080: ``{"handle", "level", "rated"}``: an odd field's bye is played against
    #: this house bot instead; ``None`` (left out of the data): byes are byes.
    bye_bot: dict[str, Any] | None = None

    def to_data(self) -> dict[str, Any]:
        return {
            **({} if self.late_until_round is None else {"late_until_round": self.late_until_round}),
            **({} if self.bye_bot is None else {"bye_bot": _copy(self.bye_bot)}),
            "name": self.name,
            "game": self.game,
            "organiser": self.organiser,
            "format": self.format,
            "table_size": self.table_size,
            "table_sizes": list(self.table_sizes),
            "rounds": self.rounds,
            "clock": _copy(self.clock),
            "rated": self.rated,
            "points": _copy(self.points),
            "seed_commitment": self.seed_commitment,
            "pairing": self.pairing,
        }

    @classmethod
    def from_data(cls, data: Any) -> TournamentCreated:
        optional = ("late_until_round", "bye_bot")
        d = _need(data, tuple(f.name for f in fields(cls) if f.name not in optional), optional)
        late = d.get("late_until_round")
        if late is not None:
            _int(late, "late_until_round", 1, MAX_ROUNDS)
        if d["format"] not in FORMATS:
            raise MalformedEvent(f"'format' must be one of {', '.join(FORMATS)}")
        if not isinstance(d["table_sizes"], list) or not d["table_sizes"]:
            raise MalformedEvent("'table_sizes' must be a non-empty list")
        sizes = tuple(_int(s, "table_sizes", 2, MAX_TABLE_SIZE) for s in d["table_sizes"])
        if list(sizes) != sorted(set(sizes)):
            raise MalformedEvent("'table_sizes' must be distinct and ascending")
        table_size = _int(d["table_size"], "table_size", 2, MAX_TABLE_SIZE)
        if table_size not in sizes:
            raise MalformedEvent("'table_size' must be one of 'table_sizes'")
        rounds = d["rounds"]
        if rounds is not None:
            _int(rounds, "rounds", 1, MAX_ROUNDS)
        organiser = d["organiser"]
        if organiser is not None:
            _str(organiser, "organiser", MAX_HANDLE)
        return cls(
            name=_str(d["name"], "name", MAX_NAME),
            game=_str(d["game"], "game", 64),
            organiser=organiser,
            format=d["format"],
            table_size=table_size,
            table_sizes=sizes,
            rounds=rounds,
            clock=_json_object(d["clock"], "clock"),
            rated=_bool(d["rated"], "rated"),
            points=read_points(d["points"], sizes),
            seed_commitment=_hex64(d["seed_commitment"], "seed_commitment"),
            pairing=_str(d["pairing"], "pairing", 64),
            late_until_round=late,
            bye_bot=None if d.get("bye_bot") is None else read_bye_bot(d["bye_bot"]),
        )


@dataclass(frozen=True, slots=True)
class PlayerRegistered:
    TYPE: ClassVar[str] = "PlayerRegistered"
    player: str

    def to_data(self) -> dict[str, Any]:
        return {"player": self.player}

    @classmethod
    def from_data(cls, data: Any) -> PlayerRegistered:
        return cls(_str(_need(data, ("player",))["player"], "player", MAX_HANDLE))


@dataclass(frozen=True, slots=True)
class TournamentStarted:
    """Registration closed: the number of rounds is fixed and the lot is drawn
    (TRN-011).  ``by`` is who started it (``None``: the operator)."""

    TYPE: ClassVar[str] = "TournamentStarted"
    by: str | None
    rounds: int
    lot: tuple[str, ...]

    def to_data(self) -> dict[str, Any]:
        return {"by": self.by, "rounds": self.rounds, "lot": list(self.lot)}

    @classmethod
    def from_data(cls, data: Any) -> TournamentStarted:
        d = _need(data, ("by", "rounds", "lot"))
        by = d["by"]
        if by is not None:
            _str(by, "by", MAX_HANDLE)
        return cls(by, _int(d["rounds"], "rounds", 1, MAX_ROUNDS), _players(d["lot"], "lot"))


@dataclass(frozen=True, slots=True)
class PairedTable:
    """One table of a round: its number (1 is the top table) and its players in seat order."""

    table: int
    players: tuple[str, ...]

    def to_data(self) -> dict[str, Any]:
        return {"table": self.table, "players": list(self.players)}


@dataclass(frozen=True, slots=True)
class RoundPaired:
    """A round's pairing, as ``pairing.pair`` made it (TRN-020): tables in order,
    each with its players in seat order, and the players with a bye."""

    TYPE: ClassVar[str] = "RoundPaired"
    round: int
    tables: tuple[PairedTable, ...]
    byes: tuple[str, ...]

    def to_data(self) -> dict[str, Any]:
        return {"round": self.round, "tables": [t.to_data() for t in self.tables], "byes": list(self.byes)}

    @classmethod
    def from_data(cls, data: Any) -> RoundPaired:
        d = _need(data, ("round", "tables", "byes"))
        if not isinstance(d["tables"], list):
            raise MalformedEvent("'tables' must be a list")
        tables = []
        for i, t in enumerate(d["tables"], 1):
            t = _need(t, ("table", "players"))
            if _int(t["table"], "table", 1, 10**6) != i:
                raise MalformedEvent("'tables' must be numbered 1, 2, ... in order")
            players = _players(t["players"], "players")
            if not 2 <= len(players) <= MAX_TABLE_SIZE:
                raise MalformedEvent(f"a table seats 2 to {MAX_TABLE_SIZE} players")
            tables.append(PairedTable(i, players))
        return cls(_int(d["round"], "round", 1, MAX_ROUNDS), tuple(tables), _players(d["byes"], "byes"))


@dataclass(frozen=True, slots=True)
class TableStarted:
    """The game of a table exists: ``game_id`` (TRN-012)."""

    TYPE: ClassVar[str] = "TableStarted"
    round: int
    table: int
    game_id: str

    def to_data(self) -> dict[str, Any]:
        return {"round": self.round, "table": self.table, "game_id": self.game_id}

    @classmethod
    def from_data(cls, data: Any) -> TableStarted:
        d = _need(data, ("round", "table", "game_id"))
        return cls(
            _int(d["round"], "round", 1, MAX_ROUNDS),
            _int(d["table"], "table", 1, 10**6),
            _str(d["game_id"], "game_id", MAX_GAME_ID),
        )


@dataclass(frozen=True, slots=True)
class TableFinished:
    """The game of a table ended (by play, timeout, resignation or abort) with
    ``result`` (:func:`table_result`), in seats of the table (TRN-013)."""

    TYPE: ClassVar[str] = "TableFinished"
    round: int
    table: int
    game_id: str
    result: dict[str, Any]

    def to_data(self) -> dict[str, Any]:
        return {"round": self.round, "table": self.table, "game_id": self.game_id, "result": _copy(self.result)}

    @classmethod
    def from_data(cls, data: Any) -> TableFinished:
        d = _need(data, ("round", "table", "game_id", "result"))
        return cls(
            _int(d["round"], "round", 1, MAX_ROUNDS),
            _int(d["table"], "table", 1, 10**6),
            _str(d["game_id"], "game_id", MAX_GAME_ID),
            read_result(d["result"]),
        )


@dataclass(frozen=True, slots=True)
class FinalPlace:
    rank: int
    player: str

    def to_data(self) -> dict[str, Any]:
        return {"rank": self.rank, "player": self.player}


@dataclass(frozen=True, slots=True)
class TournamentFinished:
    """The closing event: the final standings (ranks only: points are derived, see
    ``standings``) and the revealed seed (TRN-014)."""

    TYPE: ClassVar[str] = "TournamentFinished"
    standings: tuple[FinalPlace, ...]
    seed: str

    def to_data(self) -> dict[str, Any]:
        return {"standings": [p.to_data() for p in self.standings], "seed": self.seed}

    @classmethod
    def from_data(cls, data: Any) -> TournamentFinished:
        d = _need(data, ("standings", "seed"))
        return cls(_places(d["standings"]), _hex64(d["seed"], "seed"))


def _places(value: Any) -> tuple[FinalPlace, ...]:
    if not isinstance(value, list):
        raise MalformedEvent("'standings' must be a list")
    places = []
    for p in value:
        p = _need(p, ("rank", "player"))
        places.append(FinalPlace(_int(p["rank"], "rank", 1, 10**6), _str(p["player"], "player", MAX_HANDLE)))
    return tuple(places)


MAX_REASON = 200


def _optional_str(value: Any, name: str, longest: int) -> str | None:
    return None if value is None else _str(value, name, longest)


@dataclass(frozen=True, slots=True)
class LatePlayerRegistered:
    """A player joined a running Swiss after its start (TRN-050): paired from
    ``round`` on (the round after the last one paired), with no points for the
    rounds before it."""

    TYPE: ClassVar[str] = "LatePlayerRegistered"
    player: str
    round: int

    def to_data(self) -> dict[str, Any]:
        return {"player": self.player, "round": self.round}

    @classmethod
    def from_data(cls, data: Any) -> LatePlayerRegistered:
        d = _need(data, ("player", "round"))
        return cls(_str(d["player"], "player", MAX_HANDLE), _int(d["round"], "round", 2, MAX_ROUNDS))


@dataclass(frozen=True, slots=True)
class PlayerWithdrawn:
    """A player left (TRN-060): ``by`` the player itself, its organiser or the operator
    (``None``), with a ``reason`` (``None`` when the player left of itself).  ``round``
    is the number of rounds paired when it was recorded: the player is paired no more
    from round ``round + 1``; its games already paired are not touched."""

    TYPE: ClassVar[str] = "PlayerWithdrawn"
    player: str
    by: str | None
    reason: str | None
    round: int

    def to_data(self) -> dict[str, Any]:
        return {"player": self.player, "by": self.by, "reason": self.reason, "round": self.round}

    @classmethod
    def from_data(cls, data: Any) -> PlayerWithdrawn:
        d = _need(data, ("player", "by", "reason", "round"))
        return cls(
            _str(d["player"], "player", MAX_HANDLE),
            _optional_str(d["by"], "by", MAX_HANDLE),
            _optional_str(d["reason"], "reason", MAX_REASON),
            _int(d["round"], "round", 0, MAX_ROUNDS),
        )


@dataclass(frozen=True, slots=True)
class TournamentAborted:
    """The closing event of an abandoned tournament (TRN-070): who aborted it
    (``None``: the operator) and why, the standings frozen after ``round`` (the last
    round whose every table finished; ranks only, as ``TournamentFinished``) and the
    revealed seed."""

    TYPE: ClassVar[str] = "TournamentAborted"
    by: str | None
    reason: str
    round: int
    standings: tuple[FinalPlace, ...]
    seed: str

    def to_data(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "reason": self.reason,
            "round": self.round,
            "standings": [p.to_data() for p in self.standings],
            "seed": self.seed,
        }

    @classmethod
    def from_data(cls, data: Any) -> TournamentAborted:
        d = _need(data, ("by", "reason", "round", "standings", "seed"))
        return cls(
            _optional_str(d["by"], "by", MAX_HANDLE),
            _str(d["reason"], "reason", MAX_REASON),
            _int(d["round"], "round", 0, MAX_ROUNDS),
            _places(d["standings"]),
            _hex64(d["seed"], "seed"),
        )


TournamentEvent = (
    TournamentCreated
    | PlayerRegistered
    | TournamentStarted
    | RoundPaired
    | TableStarted
    | TableFinished
    | TournamentFinished
    | LatePlayerRegistered
    | PlayerWithdrawn
    | TournamentAborted
)

#: Stream type -> event class.
EVENTS: dict[str, type] = {
    cls.TYPE: cls
    for cls in (
        TournamentCreated,
        PlayerRegistered,
        TournamentStarted,
        RoundPaired,
        TableStarted,
        TableFinished,
        TournamentFinished,
        LatePlayerRegistered,
        PlayerWithdrawn,
        TournamentAborted,
    )
}


def parse(type_: Any, data: Any) -> TournamentEvent:
    """The event of a stored ``(type, data)``; :class:`MalformedEvent` otherwise."""
    cls = EVENTS.get(type_) if isinstance(type_, str) else None
    if cls is None:
        raise MalformedEvent(f"not a tournament event type: {type_!r}")
    return cls.from_data(data)  # type: ignore[attr-defined]  # every class EVENTS maps to has from_data


def to_json(event: TournamentEvent) -> dict[str, Any]:
    """``{"type", "data"}``, the form the store and the bundle keep."""
    return {"type": event.TYPE, "data": event.to_data()}


def from_json(obj: Any) -> TournamentEvent:
    """The event of a ``{"type", "data", ...}`` object (a stored row may carry more keys)."""
    if not isinstance(obj, dict) or "type" not in obj or "data" not in obj:
        raise MalformedEvent("an event is an object with 'type' and 'data'")
    return parse(obj["type"], obj["data"])
