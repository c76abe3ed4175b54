"""Property tests of tournament pairing (hypothesis; docs/TOURNAMENTS.md, TRN-020..TRN-028).

Hypothesis draws whole tournaments (allowed table sizes, preferred size, field,
format, rounds, seed, and random game results with ties, forfeits and aborts)
and plays them through ``rules.decide``.  Every round of every one must hold:

* every player is seated exactly once or has a recorded bye (TRN-020);
* table sizes are allowed, and byes happen only when no plan seats more (TRN-021);
* byes go round: no player has two more than another (TRN-022);
* repeat encounters are no more than necessary: where the partitions can be
  enumerated (at most ``ORACLE_LIMIT``), a brute force over all of them finds
  nothing better than the pairing on (first-seat violations, repeat
  encounters, standing spread), lexicographically (TRN-023, TRN-024, TRN-025);
* first seats stay balanced within one over the event, within two when byes
  force a due player to sit out (TRN-025);
* determinism: re-pairing from the state (also after a JSON round trip) gives
  the same round (TRN-020, TRN-028).

And a round robin pairs the same whatever the results, and by its end every two
players have met; at tables of two it is Berger's schedule, where they meet
exactly once in ``n - 1`` rounds (``n`` when odd), first seats within two
(TRN-027).  The local search (fields too big to enumerate) is
checked on fields where a round without repeats is known to exist.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.games.rng import Rng
from service.tournaments import pairing, standings
from service.tournaments.commands import CreateTournament
from service.tournaments.events import ROUND_ROBIN, SWISS, RoundPaired, TournamentEvent
from service.tournaments.simulate import random_result, run

#: The game with every table size from 2 to 6.
GAME = "nautilus-industries"
#: The brute force enumerates every partition of a round up to this many.
ORACLE_LIMIT = 3_000


@dataclass(frozen=True)
class Config:
    allowed: tuple[int, ...]
    preferred: int
    format: str
    players: int
    rounds: int | None
    seed: bytes
    results: int
    forfeits: float

    def create(self) -> CreateTournament:
        return CreateTournament(
            "Prop",
            GAME,
            self.preferred,
            by="org",
            format=self.format,
            rounds=self.rounds,
            table_sizes=self.allowed,
        )

    def play(self, results: int | None = None) -> tuple[list[TournamentEvent], dict]:
        chooser = random.Random(self.results if results is None else results)
        return run(
            self.create(),
            [f"pl{i:02d}" for i in range(self.players)],
            self.seed,
            lambda r, t, seated: random_result(chooser, len(seated), forfeits=self.forfeits),
        )


@st.composite
def configs(draw: st.DrawFn, formats: tuple[str, ...] = (SWISS, SWISS, ROUND_ROBIN)) -> Config:
    allowed = tuple(sorted(draw(st.sets(st.integers(2, 6), min_size=1, max_size=5))))
    preferred = draw(st.sampled_from(allowed))
    fmt = draw(st.sampled_from(formats))
    most = pairing.MAX_ROUND_ROBIN_PLAYERS if fmt == ROUND_ROBIN else 18
    players = draw(st.integers(min(allowed), max(most, min(allowed))))
    rounds = draw(st.integers(1, 5)) if fmt == SWISS else draw(st.one_of(st.none(), st.integers(1, 4)))
    return Config(
        allowed,
        preferred,
        fmt,
        players,
        rounds,
        draw(st.binary(min_size=32, max_size=32)),
        draw(st.integers(0, 2**32)),
        draw(st.sampled_from([0.0, 0.1, 0.3])),
    )


def berger(config: Config) -> bool:
    """A round robin whose tables are all of two: the circle method (TRN-027)."""
    plan = pairing.table_plan(config.players, config.allowed, config.preferred)
    return config.format == ROUND_ROBIN and set(plan.sizes) == {2}


def before(state: dict, round_: int) -> dict:
    """The state a round was paired from: everything up to the round before it."""
    return {**state, "history": state["history"][: round_ - 1]}


def paired_events(events: list[TournamentEvent]) -> list[RoundPaired]:
    return [e for e in events if isinstance(e, RoundPaired)]


# -- the oracle: its own bookkeeping, every partition -----------------------------------------


class Oracle:
    """History counts and the cost of a partition, computed independently of ``pairing``."""

    def __init__(self, state: dict):
        self.players = list(state["players"])
        self.firsts = Counter()
        self.met = Counter()
        self.byes = Counter()
        for rnd in state["history"]:
            self.byes.update(rnd["byes"])
            for t in rnd["tables"]:
                self.firsts[t["players"][0]] += 1
                self.met.update(frozenset(p) for p in itertools.combinations(t["players"], 2))
        self.swiss = state["format"] == SWISS
        self.points = {r.player: r.points for r in standings.standings(state)} if self.swiss else {}

    def cost(self, tables: list[tuple[str, ...]], byes: list[str]) -> tuple[int, int, Fraction]:
        fewest = min(self.firsts[p] for p in self.players)
        due = [sum(self.firsts[p] == fewest for p in t) for t in tables]
        # Every due player can start only if they all play and are at most one per table;
        # otherwise every table must have one to give seat 0 to.
        spread = not any(self.firsts[p] == fewest for p in byes) and sum(due) < len(tables)
        seat = sum(max(0, d - 1) if spread else int(d == 0) for d in due)
        rep = sum(self.met[frozenset(pair)] for t in tables for pair in itertools.combinations(t, 2))
        gap = Fraction(0)
        if self.swiss:
            gap = sum(
                (abs(self.points[a] - self.points[b]) for t in tables for a, b in itertools.combinations(t, 2)),
                Fraction(0),
            )
        return seat, rep, gap


def partitions(players: list[str], sizes: list[int]):
    """Every split of ``players`` into tables of ``sizes`` (a multiset), each once."""
    if not players:
        yield []
        return
    first, rest = players[0], players[1:]
    for size in sorted(set(sizes)):
        left = list(sizes)
        left.remove(size)
        for combo in itertools.combinations(rest, size - 1):
            others = [p for p in rest if p not in combo]
            for tail in partitions(others, left):
                yield [(first, *combo), *tail]


def count_partitions(sizes: list[int]) -> int:
    import math

    out = math.factorial(sum(sizes))
    for s in sizes:
        out //= math.factorial(s)
    for m in Counter(sizes).values():
        out //= math.factorial(m)
    return out


def representable(total: int, allowed: tuple[int, ...]) -> bool:
    reach = {0}
    for _ in range(total):
        reach |= {r + s for r in reach for s in allowed if r + s <= total}
    return total in reach


# -- the properties ---------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=configs())
def test_trn_020_to_025_every_round_is_valid_and_optimal_where_enumerable(config: Config) -> None:
    events, state = config.play()
    rounds = paired_events(events)
    assert len(rounds) == state["rounds"]
    everyone = sorted(state["players"])
    for paired in rounds:
        prior = before(state, paired.round)
        seated = [p for t in paired.tables for p in t.players] + list(paired.byes)
        # TRN-020: everyone exactly once, at a table or with a bye.
        assert sorted(seated) == everyone
        # TRN-021: allowed sizes; byes only when nothing else works.
        sizes = [len(t.players) for t in paired.tables]
        assert all(s in config.allowed for s in sizes)
        assert not any(representable(len(everyone) - b, config.allowed) for b in range(len(paired.byes)))
        assert sorted(sizes, reverse=True) == list(
            pairing.table_plan(len(everyone), config.allowed, config.preferred).sizes
        )
        # TRN-020: deterministic, also from a JSON copy of the state.
        rng_domain = pairing.round_domain(paired.round)
        assert pairing.pair(prior, Rng(config.seed, rng_domain)) == paired
        assert pairing.pair(json.loads(json.dumps(prior)), Rng(config.seed, rng_domain)) == paired
        # TRN-023..025: nothing better exists (where every partition can be tried).
        # A round robin at tables of two is Berger's fixed schedule instead (TRN-027).
        if not berger(config) and count_partitions(sizes) <= ORACLE_LIMIT:
            oracle = Oracle(prior)
            active = [p for p in standings.order(prior) if p not in paired.byes]
            ours = oracle.cost([t.players for t in paired.tables], list(paired.byes))
            best = min(oracle.cost(tables, list(paired.byes)) for tables in partitions(active, sizes))
            assert ours == best, (paired.round, ours, best)
    # TRN-025: first seats within one of each other after every round.  Byes can force
    # a due player to sit out while the bye rota holds (TRN-022 comes first), and a
    # two-player round robin's pairs are fixed: then within two (measured in
    # docs/TOURNAMENTS.md: often two, never more).
    limit = 2 if berger(config) or any(paired.byes for paired in rounds) else 1
    firsts: Counter[str] = Counter()
    for paired in rounds:
        firsts.update(t.players[0] for t in paired.tables)
        counts = [firsts[p] for p in everyone]
        assert max(counts) - min(counts) <= limit, (paired.round, firsts)
    # TRN-022: byes go round.
    byes = Counter(p for paired in rounds for p in paired.byes)
    assert max(byes[p] for p in everyone) - min(byes[p] for p in everyone) <= 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=configs(formats=(ROUND_ROBIN,)), other_results=st.integers(0, 2**32))
def test_trn_027_a_round_robin_ignores_results_and_everyone_meets(config: Config, other_results: int) -> None:
    events, state = config.play()
    again, _ = config.play(results=other_results)
    assert paired_events(events) == paired_events(again)
    if config.rounds is None and state["rounds"] < pairing.MAX_ROUNDS:
        met = Counter(
            frozenset(p)
            for rnd in state["history"]
            for t in rnd["tables"]
            for p in itertools.combinations(t["players"], 2)
        )
        assert set(met) == {frozenset(p) for p in itertools.combinations(state["players"], 2)}
        if berger(config):  # Berger: n - 1 rounds (n when odd), every two players exactly once
            assert state["rounds"] == config.players - 1 + config.players % 2
            assert set(met.values()) == {1}


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables=st.integers(4, 10), seed=st.binary(min_size=32, max_size=32), results=st.integers(0, 2**32))
def test_trn_024_local_search_finds_round_2_without_repeats(tables: int, seed: bytes, results: int) -> None:
    """16 to 40 players at tables of 4 (too many partitions to enumerate): after round 1,
    a round 2 where nobody meets anyone again exists (one player from each of four
    round-1 tables per table), and the local search finds one."""
    config = Config((2, 3, 4), 4, SWISS, 4 * tables, 2, seed, results, 0.1)
    assert count_partitions([4] * tables) > pairing.EXACT_LIMIT
    _, state = config.play()
    first, second = state["history"]
    met = {frozenset(p) for t in first["tables"] for p in itertools.combinations(t["players"], 2)}
    for table in second["tables"]:
        assert not {frozenset(p) for p in itertools.combinations(table["players"], 2)} & met
