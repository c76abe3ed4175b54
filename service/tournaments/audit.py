"""The tournament audit: re-decide a stream from its events and the seed (TRN-040).

Pure: the HTTP and store layers read the stream (and each game's facts) and
call :func:`audit`; the offline verifier can call it on an exported bundle.

Each recorded event that a command causes (``TournamentCreated``,
``PlayerRegistered``, ``LatePlayerRegistered``, ``TournamentStarted``,
``PlayerWithdrawn``, ``TableStarted``, ``TableFinished``, ``TournamentAborted``)
is turned back into that command and decided again with ``rules.decide``, the
same function the command side used, on the state folded
from the events before it; what ``decide`` gives must equal what was recorded,
follow-ups included.  So the audit recomputes:

* the seed commitment (``TournamentCreated``) and the revealed seed
  (``TournamentFinished``): check ``seed``;
* the lot and the number of rounds (``TournamentStarted``) and every round's
  pairing (``RoundPaired``): check ``pairings``;
* the final standings (``TournamentFinished``, or ``TournamentAborted``'s, frozen
  after the last complete round), and the standings after every
  round against the published ones when given: check ``standings``;
* when the games' own facts are given (``games``: game id -> players in seat
  order and the game's result, from each game's audited stream), that every
  table's game seated the table's players in its order and ended with the
  result the tournament recorded: check ``games``;
* that every event could follow the ones before it, and that the stream does
  not stop between an event and its follow-up: check ``stream``.

A check that could not run says why (``"ok": None``): pairings need the seed,
which a running tournament has not revealed (the operator may pass it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from service.domain.errors import DomainError
from service.tournaments import standings
from service.tournaments.commands import (
    AbortTournament,
    Command,
    CreateTournament,
    FinishTable,
    RegisterPlayers,
    StartTable,
    StartTournament,
    WithdrawPlayer,
)
from service.tournaments.events import (
    PAIRING_VERSION,
    LatePlayerRegistered,
    MalformedEvent,
    PlayerRegistered,
    PlayerWithdrawn,
    RoundPaired,
    TableFinished,
    TableStarted,
    TournamentAborted,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
    TournamentStarted,
    from_json,
    table_result,
)
from service.tournaments.evolve import RUNNING, State, StreamError, evolve, round_finished
from service.tournaments.rules import decide

#: At most this many mismatches are listed per check (the count is always exact).
MAX_LISTED = 20


def _command(event: TournamentEvent) -> Command | None:
    """The command that caused ``event``; ``None`` for a follow-up."""
    if isinstance(event, TournamentCreated):
        return CreateTournament(
            name=event.name,
            game=event.game,
            table_size=event.table_size,
            by=event.organiser,
            format=event.format,
            rounds=event.rounds,
            table_sizes=event.table_sizes,
            clock=event.clock,
            rated=event.rated,
            points=event.points,
            late_until_round=event.late_until_round,
            bye_bot=None if event.bye_bot is None else {k: event.bye_bot[k] for k in ("level", "rated")},
        )
    if isinstance(event, PlayerRegistered | LatePlayerRegistered):
        return RegisterPlayers((event.player,))  # who asked was the HTTP layer's check
    if isinstance(event, PlayerWithdrawn):
        return WithdrawPlayer(event.player, event.by, event.reason)
    if isinstance(event, TournamentAborted):
        return AbortTournament(event.reason, event.by)
    if isinstance(event, TournamentStarted):
        return StartTournament(by=event.by)
    if isinstance(event, TableStarted):
        return StartTable(event.round, event.table, event.game_id)
    if isinstance(event, TableFinished):
        return FinishTable(event.round, event.table, event.game_id, event.result)
    return None


class _Check:
    def __init__(self) -> None:
        self.ok: bool | None = True
        self.count = 0
        self.problems: list[dict[str, Any]] = []
        self.detail = ""

    def fail(self, problem: dict[str, Any]) -> None:
        self.ok = False
        if len(self.problems) < MAX_LISTED:
            self.problems.append(problem)

    def skip(self, why: str) -> None:
        self.ok = None
        self.detail = why

    def json(self, counted: str) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok, counted: self.count, "problems": self.problems}
        if self.detail:
            out["detail"] = self.detail
        return out


def audit(
    events: Sequence[Any],
    seed: bytes | None = None,
    *,
    published: Mapping[int, Any] | None = None,
    games: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Audit a tournament stream.

    ``events``: the stream in order, as event objects or ``{"type", "data"}``
    objects (a stored row's other keys are ignored).  ``seed``: the seed, when
    the stream has not revealed it yet.  ``published``: round -> the standings
    published after it (``standings.standings_json`` output or its list).
    ``games``: game id -> ``{"players": [...], "result": {...}}`` (optionally
    ``"game"``), each game's own facts.

    Returns ``{"ok", "complete", "checks": {"stream", "seed", "pairings",
    "standings", "games"}}``: ``ok`` is false when any check failed, ``complete``
    says whether every check ran."""
    stream, seeds, pairings, table, gamecheck = _Check(), _Check(), _Check(), _Check(), _Check()
    parsed: list[TournamentEvent] = []
    for i, raw in enumerate(events):
        try:
            parsed.append(raw if hasattr(raw, "TYPE") else from_json(raw))
        except MalformedEvent as exc:
            stream.fail({"index": i, "error": str(exc)})
            break
    stream.count = len(parsed)
    state: State | None = None
    if stream.ok:
        seed = _check_seed(parsed, seed, seeds)
        version = parsed[0].pairing if parsed and isinstance(parsed[0], TournamentCreated) else PAIRING_VERSION
        if version != PAIRING_VERSION:  # TRN-002: re-pair only with the algorithm it was paired with
            seed = None
            pairings.fail({"error": f"paired with {version}; this audit re-pairs with {PAIRING_VERSION} only"})
        state = _redecide(parsed, seed if seeds.ok else None, stream, pairings, table)
        if seeds.ok is not True and pairings.ok is not False:
            pairings.skip("the pairings are re-made from the seed: " + (seeds.detail or "it did not check"))
    else:
        for c in (seeds, pairings):
            c.skip("the stream could not be read")
    if state is not None and state["status"] == RUNNING:
        last = state["history"][-1] if state["history"] else None
        if last is None or round_finished(last):  # follow-ups are written with their cause
            stream.fail({"index": len(parsed), "error": "the stream stops before the follow-up of its last event"})
    if state is not None:
        _check_standings(state, published, table)
        _check_games(state, games, gamecheck)
    else:
        if table.ok is True:
            table.skip("the stream could not be folded")
        gamecheck.skip("the stream could not be folded")
    checks = {
        "stream": stream.json("events"),
        "seed": {"ok": seeds.ok, "detail": seeds.detail},
        "pairings": pairings.json("rounds"),
        "standings": table.json("rounds"),
        "games": gamecheck.json("tables"),
    }
    return {
        "ok": all(c["ok"] is not False for c in checks.values()),
        "complete": all(c["ok"] is True for c in checks.values()),
        "status": None if state is None else state["status"],
        # TRN-070: an aborted tournament's audit says so, by whom and why.
        "aborted": None if state is None else state.get("aborted"),
        "withdrawals": [] if state is None else state.get("withdrawals", []),
        "late": [] if state is None else state.get("late", []),
        "checks": checks,
    }


def _check_seed(events: list[TournamentEvent], seed: bytes | None, check: _Check) -> bytes | None:
    created = events[0] if events and isinstance(events[0], TournamentCreated) else None
    revealed = next((e.seed for e in events if isinstance(e, TournamentFinished | TournamentAborted)), None)
    if revealed is not None:
        if seed is not None and seed.hex() != revealed:
            check.fail({})
            check.detail = "the seed given is not the seed the stream revealed"
            return None
        seed = bytes.fromhex(revealed)
    if created is None:
        check.fail({})
        check.detail = "the stream does not open with TournamentCreated"
        return None
    if seed is None:
        check.skip("not revealed yet (the tournament is running) and not given")
        return None
    if len(seed) != 32 or hashlib.sha256(seed).hexdigest() != created.seed_commitment:
        check.fail({})
        check.detail = "sha256(seed) is not the commitment of TournamentCreated"
        return None
    check.detail = "sha256(seed) matches the commitment"
    return seed


def _redecide(
    events: list[TournamentEvent], seed: bytes | None, stream: _Check, pairings: _Check, table: _Check
) -> State | None:
    """Fold the recorded events; with the seed, re-decide each cause and compare."""
    state: State | None = None
    i = 0
    while i < len(events):
        event = events[i]
        expected: list[TournamentEvent] = []
        command = _command(event)
        if seed is not None and command is None:
            stream.fail({"index": i, "error": f"{event.TYPE} recorded without the event that causes it"})
        elif seed is not None and command is not None:
            try:
                expected = decide(state, command, seed=seed)
            except DomainError as exc:
                stream.fail({"index": i, "error": f"{event.TYPE} should have been refused: {exc.code}"})
            except Exception as exc:  # a crafted stream can reach states decide never makes: report, never raise
                stream.fail({"index": i, "error": f"{event.TYPE} could not be re-decided: {exc!r}"})
        consumed = 1
        for k, want in enumerate(expected):
            got = events[i + k] if i + k < len(events) else None
            if k and (got is None or got.TYPE != want.TYPE or _command(got) is not None):
                _mismatch(want, None, i + k, stream, pairings, table)  # a follow-up is missing
                break
            if got is not None and got.to_data() != want.to_data():
                _mismatch(want, got, i + k, stream, pairings, table)
            consumed = k + 1
        for recorded in events[i : i + consumed]:
            if isinstance(recorded, RoundPaired):
                pairings.count += 1
            try:
                state = evolve(state, recorded)
            except StreamError as exc:
                stream.fail({"index": i, "error": str(exc)})
                return None
        i += consumed
    return state


def _mismatch(
    want: TournamentEvent,
    got: TournamentEvent | None,
    index: int,
    stream: _Check,
    pairings: _Check,
    table: _Check,
) -> None:
    recorded = None if got is None else got.to_data()
    problem = {"index": index, "type": want.TYPE, "expected": want.to_data(), "recorded": recorded}
    if isinstance(want, RoundPaired | TournamentStarted):
        pairings.fail({"round": getattr(want, "round", 0), **problem})
    elif isinstance(want, TournamentFinished | TournamentAborted):
        table.fail({"round": "final", **problem})
    else:
        stream.fail(problem)


def _check_standings(state: State, published: Mapping[int, Any] | None, check: _Check) -> None:
    """Recompute the standings after every round; compare with the published ones."""
    for rnd in state["history"]:
        check.count += 1
        if published is None or rnd["round"] not in published:
            continue
        shown = published[rnd["round"]]
        mine = standings.standings_json(state, rnd["round"])
        if isinstance(shown, list):
            mine_cmp: Any = mine["standings"]
        else:
            mine_cmp = mine
        if shown != mine_cmp:
            check.fail({"round": rnd["round"], "expected": mine_cmp, "published": shown})
    if published is not None:
        extra = sorted(set(published) - {r["round"] for r in state["history"]}, key=str)
        for r in extra:
            check.fail({"round": r, "error": "standings published for a round that was never paired"})


def _check_games(state: State, games: Mapping[str, Mapping[str, Any]] | None, check: _Check) -> None:
    if games is None:
        check.skip("the games' own facts were not given")
        return
    for rnd in state["history"]:
        for t in rnd["tables"]:
            if t["game_id"] is None:
                continue
            check.count += 1
            where = {"round": rnd["round"], "table": t["table"], "game_id": t["game_id"]}
            facts = games.get(t["game_id"])
            if facts is None:
                check.fail({**where, "error": "no such game"})
                continue
            if list(facts.get("players") or []) != t["players"]:
                check.fail({**where, "error": "the game did not seat the table's players in its order"})
            if "game" in facts and facts["game"] != state["game"]:
                check.fail({**where, "error": f"the game is {facts['game']}, not {state['game']}"})
            if t["result"] is not None:
                try:
                    theirs = table_result(facts.get("result") or {})
                except MalformedEvent:
                    theirs = None
                if theirs != t["result"]:
                    check.fail({**where, "error": "the tournament recorded a result the game did not end with"})


#: What the fair-play section of a finished tournament's audit is, said with it.
FAIR_PLAY_NOTE = (
    "How often each player's moves were the level-3 house bot's first choice, judged from the player's own "
    "view at each decision with more than one legal move, over the games analysed so far. A signal for "
    "organisers to look closer, never a verdict: strong players often agree with a strong bot, and the bot "
    "is not an oracle."
)


def fair_play(
    games: Mapping[str, Mapping[str, Any]], agreements: Mapping[str, Sequence[Mapping[str, int]] | None]
) -> dict[str, Any]:
    """Per player, the decisions analysed and how many matched the bot's first choice, summed over the
    tournament's games whose analysis is in ``agreements`` (game id -> the analysis' ``agreement``, None
    while it is not computed).  ``games``: game id -> its facts (``players`` in seat order)."""
    totals: dict[str, list[int]] = {}
    analysed, pending = 0, []
    for gid, facts in games.items():
        found = agreements.get(gid)
        players = list(facts.get("players") or [])
        if found is None:
            pending.append(gid)
            continue
        analysed += 1
        for entry in found:
            seat = entry["seat"]
            if not 0 <= seat < len(players):
                continue
            tally = totals.setdefault(players[seat], [0, 0, 0])
            tally[0] += entry["decisions"]
            tally[1] += entry["matched"]
            tally[2] += 1
    return {
        "note": FAIR_PLAY_NOTE,
        "games_analysed": analysed,
        "games_pending": sorted(pending)[:MAX_LISTED],
        "players": [
            {
                "player": player,
                "games": games_played,
                "decisions": decisions,
                "matched": matched,
                "rate": round(matched / decisions, 3) if decisions else None,
            }
            for player, (decisions, matched, games_played) in sorted(totals.items())
        ],
    }
