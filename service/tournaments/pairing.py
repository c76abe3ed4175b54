"""Pairing: who sits at which table, in which seat (spec: docs/TOURNAMENTS.md, TRN-020..TRN-027).

``pair(state, rng)`` is a pure, deterministic function of the tournament's
state (its players, the standings and every earlier round) and ``rng``, which
must be ``Rng(seed, round_domain(round))``.  The same inputs always give the
same ``RoundPaired``, so the audit recomputes every round and compares.

One round, in four steps:

1. **The table plan** (TRN-021, :func:`table_plan`): the fewest byes the
   allowed table sizes permit, then the sizes closest to the preferred size
   (least sum of squared differences), ties to the larger tables first.
2. **Byes** (TRN-022), only when the plan has some: to the players with the
   fewest byes so far, then the most first seats, then the lowest standing.
3. **Tables** (TRN-023): a partition of the other players into tables of the
   plan's sizes that minimises, in this order,
   a. *first-seat violations*: the tables that cannot give seat 0 to a player
      who has had it least (TRN-025; this keeps every player's count of first
      seats within one of every other's over the event),
   b. *repeat encounters*: for every two players at one table, how many times
      they already met, summed (TRN-024),
   c. *standing spread* (Swiss only): for every two players at one table, the
      difference of their points, summed (TRN-023).
   Small cases (at most ``EXACT_LIMIT`` partitions) are solved exactly by
   branch and bound; larger ones by a bounded local search from the
   standings-ordered blocks: first-improvement swaps of two players between
   tables until none improves, then ``RESTARTS`` random perturbations (drawn
   from ``rng``) each followed by the same descent, keeping the best.
4. **Seats** (TRN-026): at each table, seat 0 goes to a player with the fewest
   first seats, and the order is the one that repeats least the seats each
   player already had; ties are drawn from ``rng``.

Tables are numbered from the one holding the best-placed player (table 1).  A
round robin (TRN-027) is the same with the standings left out: the order is the
lot and step 3c is skipped, so pairings do not depend on results and the whole
schedule is known at the start (:func:`round_robin_length`).  At tables of two
it is the circle method instead (Berger tables, :func:`_berger`): every two
players meet exactly once in ``n - 1`` rounds, which a round-by-round search
does not always achieve.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations, permutations
from typing import Any

from service.games.base import clone_state
from service.games.rng import Rng
from service.tournaments import standings as standings_mod
from service.tournaments.events import MAX_ROUNDS, MAX_TABLE_SIZE, SWISS, PairedTable, RoundPaired
from service.tournaments.evolve import active, bye_bot, withdrawn

State = dict[str, Any]

#: Rng domains of a tournament's seed: the lot is drawn from domain 0, round ``r``
#: is paired with domain ``r`` (TRN-028).
LOT_DOMAIN = 0


def round_domain(round_: int) -> int:
    return round_


#: Partitions up to this many are searched exactly (12 players at tables of 4: 5,775).
EXACT_LIMIT = 16_000
#: Perturbation restarts of the local search, at most; fewer for big fields (``_restarts``).
RESTARTS = 6
#: Full sweeps of swaps per descent, at most: a bound on the work, rarely reached.
MAX_SWEEPS = 50
#: Largest round-robin field (its whole schedule is paired at the start, TRN-003).
MAX_ROUND_ROBIN_PLAYERS = 12


# -- step 1: the table plan ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Plan:
    sizes: tuple[int, ...]  # largest first
    byes: int


def table_plan(players: int, allowed: Sequence[int], preferred: int) -> Plan | None:
    """TRN-021: how to seat ``players`` at tables of the ``allowed`` sizes, or
    ``None`` when not even one table can be filled.

    Seat as many players as possible (fewest byes); among the ways to seat that
    many, minimise the sum over tables of ``(size - preferred)**2``; among those,
    take the sizes that are largest first (compared largest first)."""
    sizes = sorted(set(allowed))
    # best[m]: (cost, sizes largest first) for exactly m seated players.  Adding the
    # same table to two multisets keeps their order, so keeping one best per m is exact.
    best: list[tuple[int, tuple[int, ...]] | None] = [None] * (players + 1)
    best[0] = (0, ())
    for m in range(1, players + 1):
        found: tuple[int, tuple[int, ...]] | None = None
        for s in sizes:
            prev = best[m - s] if s <= m else None
            if prev is None:
                continue
            cand = (prev[0] + (s - preferred) ** 2, tuple(sorted((*prev[1], s), reverse=True)))
            if found is None or (cand[0], _neg(cand[1])) < (found[0], _neg(found[1])):
                found = cand
        best[m] = found
    for m in range(players, 0, -1):
        if (plan := best[m]) is not None:
            return Plan(plan[1], players - m)
    return None


def _neg(sizes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(-s for s in sizes)


# -- the lot and round robins -------------------------------------------------------------------


def draw_lot(players: Sequence[str], seed: bytes) -> list[str]:
    """TRN-028: the players in the drawn order (``Rng(seed, LOT_DOMAIN)``, shuffling the
    registration order).  It breaks every tie of the standings, so it seeds round 1."""
    return Rng(seed, LOT_DOMAIN).shuffled(list(players))


def round_robin_length(state: State, seed: bytes) -> int:
    """TRN-027: the rounds a round robin needs until every two players have met at
    one table (at most ``MAX_ROUNDS``), found by pairing them all now: a round
    robin's pairings never depend on results."""
    sim = clone_state(state)
    sim["rounds"] = MAX_ROUNDS
    sim["history"] = []
    players = active(sim)
    unmet = {(a, b) for i, a in enumerate(players) for b in players[i + 1 :]}
    for r in range(1, MAX_ROUNDS + 1):
        paired = pair(sim, Rng(seed, round_domain(r)))
        sim["history"].append(
            {
                "round": r,
                "byes": list(paired.byes),
                "tables": [
                    {"table": t.table, "players": list(t.players), "game_id": None, "result": None}
                    for t in paired.tables
                ],
            }
        )
        for t in paired.tables:
            for a, b in combinations(t.players, 2):
                unmet.discard((a, b))
                unmet.discard((b, a))
        if not unmet:
            return r
    return MAX_ROUNDS


# -- the history a round is paired from ---------------------------------------------------------


@dataclass
class _History:
    met: dict[tuple[str, str], int]
    seats: dict[str, list[int]]
    byes: dict[str, int]
    last: dict[str, int]  # the seat of each player's latest game (-1: none yet)

    def firsts(self, p: str) -> int:
        return self.seats[p][0]

    def times_met(self, a: str, b: str) -> int:
        return self.met.get((a, b) if a < b else (b, a), 0)


def _history(state: State) -> _History:
    players = state["players"]
    h = _History({}, {p: [0] * MAX_TABLE_SIZE for p in players}, dict.fromkeys(players, 0), dict.fromkeys(players, -1))
    bot = bye_bot(state)
    for rnd in state["history"]:
        for p in rnd["byes"]:
            h.byes[p] += 1
        for table in rnd["tables"]:
            seated = [p for p in table["players"] if p != bot]  # the bot is no one's history
            if len(seated) < len(table["players"]):
                for p in seated:  # TRN-080: a game against the bye bot is a bye for TRN-022
                    h.byes[p] += 1
            for i, p in enumerate(seated):
                h.seats[p][i] += 1
                h.last[p] = i
            for a, b in combinations(seated, 2):
                key = (a, b) if a < b else (b, a)
                h.met[key] = h.met.get(key, 0) + 1
    return h


def _points_scaled(rows: list[standings_mod.Row]) -> dict[str, int]:
    """Current points as integers (times their common denominator): exact and fast."""
    scale = math.lcm(*(row.points.denominator for row in rows)) if rows else 1
    return {row.player: int(row.points * scale) for row in rows}


# -- the round ----------------------------------------------------------------------------------


def pair(state: State, rng: Rng) -> RoundPaired:
    """TRN-020: the pairing of the next round (``len(history) + 1``)."""
    round_ = len(state["history"]) + 1
    swiss = state["format"] == SWISS
    gone = withdrawn(state)  # TRN-060: a withdrawn player is paired no more
    rows = [row for row in standings_mod.standings(state) if row.player not in gone] if swiss else []
    order = [row.player for row in rows] if swiss else [p for p in state["lot"] if p not in gone]
    plan = table_plan(len(order), state["table_sizes"], state["table_size"])
    if plan is None:
        raise ValueError("the field is too small for one table")
    hist = _history(state)
    if not swiss and set(plan.sizes) == {2}:
        return _with_bye_bot(state, _berger(state["lot"], round_, hist, rng, gone), hist, rng)
    byes = _choose_byes(order, plan.byes, hist)
    active = [p for p in order if p not in byes]

    # TRN-025: which players are "due" seat 0 (the fewest first seats of everyone).
    fewest = min(hist.firsts(p) for p in order)
    due = [hist.firsts(p) == fewest for p in active]
    # When every due player plays and they are fewer than the tables, each must
    # sit at a different table (all of them start); otherwise every table needs one.
    spread = not any(hist.firsts(p) == fewest for p in byes) and sum(due) < len(plan.sizes)
    met = [[hist.times_met(a, b) for b in active] for a in active]
    scaled = _points_scaled(rows)
    points = [scaled.get(p, 0) for p in active]  # a round robin leaves standings out: all 0
    search = _Search(met, points, due, spread)
    exact = _partitions(plan.sizes) <= EXACT_LIMIT
    groups = search.exact(plan.sizes) if exact else search.local(plan.sizes, rng)
    groups = sorted((sorted(g) for g in groups), key=lambda g: g[0])
    tables = []
    for number, group in enumerate(groups, 1):
        players = [active[i] for i in group]
        tables.append(PairedTable(number, tuple(_seat(players, hist, rng))))
    return _with_bye_bot(state, RoundPaired(round_, tuple(tables), tuple(byes)), hist, rng)


def _with_bye_bot(state: State, paired: RoundPaired, hist: _History, rng: Rng) -> RoundPaired:
    """TRN-080: with a bye bot, the players with a bye play it instead, at one more
    table (the last), seated by TRN-026 with the bot in the last seat, when the
    allowed sizes have a table of them and the bot; otherwise the byes stay byes."""
    bot = bye_bot(state)
    if bot is None or not paired.byes or len(paired.byes) + 1 not in state["table_sizes"]:
        return paired
    seats = (*_seat(list(paired.byes), hist, rng), bot)
    return RoundPaired(paired.round, (*paired.tables, PairedTable(len(paired.tables) + 1, seats)), ())


def _berger(
    lot: list[str], round_: int, hist: _History, rng: Rng, gone: frozenset[str] | set[str] = frozenset()
) -> RoundPaired:
    """TRN-027: a round robin at tables of two is the circle method (Berger tables) on
    the lot: the first player stays, the others turn one place a round; with an odd
    field a phantom makes the bye.  Every two players meet once in ``n - 1`` rounds
    (``n`` when odd); later rounds start the cycle again.  The schedule stays the one
    drawn at the start: a withdrawn player's opponent of the round has a bye (TRN-060)."""
    ring: list[str | None] = [*lot, None] if len(lot) % 2 else list(lot)
    turns = len(ring) - 1
    shift = (round_ - 1) % turns
    rest = ring[1:]
    arranged = [ring[0], *rest[turns - shift :], *rest[: turns - shift]]
    position = {p: i for i, p in enumerate(lot)}
    pairs, byes = [], []
    for i in range(len(ring) // 2):
        a, b = arranged[i], arranged[len(ring) - 1 - i]
        a, b = (None if a in gone else a), (None if b in gone else b)
        if a is None or b is None:
            byes.append(b if a is None else a)
        else:
            pairs.append(sorted((a, b), key=position.__getitem__))
    pairs.sort(key=lambda t: position[t[0]])
    tables = tuple(PairedTable(i, tuple(_seat(list(t), hist, rng))) for i, t in enumerate(pairs, 1))
    return RoundPaired(round_, tables, tuple(b for b in byes if b is not None))


def _choose_byes(order: list[str], count: int, hist: _History) -> list[str]:
    """TRN-022: fewest byes so far, then most first seats (so the players due a
    first seat keep playing), then lowest standing; listed in standing order."""
    if not count:
        return []
    position = {p: i for i, p in enumerate(order)}
    chosen = set(sorted(order, key=lambda p: (hist.byes[p], -hist.firsts(p), -position[p]))[:count])
    return [p for p in order if p in chosen]


def _partitions(sizes: Sequence[int]) -> int:
    """How many ways there are to split ``sum(sizes)`` players into tables of these sizes."""
    count = math.factorial(sum(sizes))
    for s in sizes:
        count //= math.factorial(s)
    for mult in Counter(sizes).values():
        count //= math.factorial(mult)
    return count


def _restarts(players: int) -> int:
    """Fewer restarts for big fields (each costs a descent of about ``players**2``
    swaps per sweep): all of them up to 64 players, one from 128."""
    return max(1, min(RESTARTS, RESTARTS * 4096 // max(players, 1) ** 2))


Cost = tuple[int, int, int]


class _Search:
    """Step 3 over player indices ``0..k-1`` (0 is the best placed)."""

    def __init__(self, met: list[list[int]], points: list[int], due: list[bool], spread: bool):
        self.met = met
        self.points = points
        self.due = due
        self.spread = spread

    def seat_cost(self, due_at_table: int) -> int:
        if self.spread:
            return max(0, due_at_table - 1)
        return 1 if due_at_table == 0 else 0

    def table_cost(self, table: Sequence[int]) -> Cost:
        rep = spread = 0
        for a, b in combinations(table, 2):
            rep += self.met[a][b]
            spread += abs(self.points[a] - self.points[b])
        return (self.seat_cost(sum(self.due[x] for x in table)), rep, spread)

    def cost(self, tables: Sequence[Sequence[int]]) -> Cost:
        total = (0, 0, 0)
        for t in tables:
            c = self.table_cost(t)
            total = (total[0] + c[0], total[1] + c[1], total[2] + c[2])
        return total

    # -- exact: branch and bound over canonical partitions --------------------------------------

    def exact(self, sizes: Sequence[int]) -> list[list[int]]:
        """The least-cost partition; among equals, the first in the enumeration,
        which starts from the standings-ordered blocks (so round 1 is the lot)."""
        remaining = Counter(sizes)
        distinct = sorted(remaining, reverse=True)
        best: list[Any] = [None, None]
        chosen: list[tuple[int, ...]] = []

        def rec(rest: list[int], cost: Cost) -> None:
            if not rest:
                best[0], best[1] = cost, list(chosen)
                return
            first, others = rest[0], rest[1:]
            for s in distinct:
                if not remaining[s]:
                    continue
                remaining[s] -= 1
                for combo in combinations(others, s - 1):
                    table = (first, *combo)
                    c = self.table_cost(table)
                    total = (cost[0] + c[0], cost[1] + c[1], cost[2] + c[2])
                    if best[0] is not None and total >= best[0]:
                        continue  # costs only grow as tables are added
                    taken = set(combo)
                    chosen.append(table)
                    rec([x for x in others if x not in taken], total)
                    chosen.pop()
                remaining[s] += 1

        rec(list(range(sum(sizes))), (0, 0, 0))
        return [list(t) for t in best[1]]

    # -- local search: swaps, then perturbed restarts -------------------------------------------

    def local(self, sizes: Sequence[int], rng: Rng) -> list[list[int]]:
        tables: list[list[int]] = []
        start = 0
        for s in sizes:
            tables.append(list(range(start, start + s)))
            start += s
        best = self.descend(tables)
        best_cost = self.cost(best)
        for _ in range(_restarts(start)):
            if best_cost[:2] == (0, 0):
                break  # no violation, no repeat: nothing a restart is for
            trial = [list(t) for t in best]
            for _ in range(max(2, start // 4)):
                i = rng.randbelow(len(trial))
                j = rng.randbelow(len(trial) - 1)
                j += j >= i
                a, b = rng.randbelow(len(trial[i])), rng.randbelow(len(trial[j]))
                trial[i][a], trial[j][b] = trial[j][b], trial[i][a]
            trial = self.descend(trial)
            cost = self.cost(trial)
            if cost < best_cost:
                best, best_cost = trial, cost
        return best

    def descend(self, tables: list[list[int]]) -> list[list[int]]:
        """First-improvement descent over swaps of two players at different tables."""
        met, points, due = self.met, self.points, self.due
        dues = [sum(due[x] for x in t) for t in tables]
        seat_cost = self.seat_cost
        for _ in range(MAX_SWEEPS):
            improved = False
            for i in range(len(tables)):
                ti = tables[i]
                for j in range(i + 1, len(tables)):
                    tj = tables[j]
                    for ai in range(len(ti)):
                        for bj in range(len(tj)):
                            a, b = ti[ai], tj[bj]
                            dz = due[b] - due[a]
                            dseat = 0
                            if dz:
                                dseat = (
                                    seat_cost(dues[i] + dz)
                                    + seat_cost(dues[j] - dz)
                                    - seat_cost(dues[i])
                                    - seat_cost(dues[j])
                                )
                                if dseat > 0:
                                    continue
                            ma, mb, pa, pb = met[a], met[b], points[a], points[b]
                            drep = dst = 0
                            for x in ti:
                                if x != a:
                                    drep += mb[x] - ma[x]
                                    dst += abs(pb - points[x]) - abs(pa - points[x])
                            for y in tj:
                                if y != b:
                                    drep += ma[y] - mb[y]
                                    dst += abs(pa - points[y]) - abs(pb - points[y])
                            if (dseat, drep, dst) < (0, 0, 0):
                                ti[ai], tj[bj] = b, a
                                dues[i] += dz
                                dues[j] -= dz
                                improved = True
            if not improved:
                break
        return tables


# -- step 4: seats ------------------------------------------------------------------------------


def _seat(players: list[str], hist: _History, rng: Rng) -> list[str]:
    """TRN-026: seat 0 to a player with the fewest first seats at the table; then the
    order that repeats least the seats each player already had, then the one that
    gives fewest players the seat of their latest game; ties from ``rng``."""
    fewest = min(hist.firsts(p) for p in players)
    best: list[tuple[str, ...]] = []
    best_cost = (-1, -1)
    for perm in permutations(players):
        if hist.firsts(perm[0]) != fewest:
            continue
        cost = (
            sum(hist.seats[p][i] for i, p in enumerate(perm)),
            sum(hist.last[p] == i for i, p in enumerate(perm)),
        )
        if best_cost[0] < 0 or cost < best_cost:
            best, best_cost = [perm], cost
        elif cost == best_cost:
            best.append(perm)
    return list(best[rng.randbelow(len(best))] if len(best) > 1 else best[0])
