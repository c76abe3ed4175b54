"""The table plan (TRN-021) and the pairing's hand-checkable cases: round 1 is the lot
(TRN-028), repeats are cut (TRN-024), seat 0 moves round to round (TRN-025, TRN-026)."""

from __future__ import annotations

import itertools
import random

import pytest

from service.games.rng import Rng
from service.tournaments import pairing
from service.tournaments.commands import CreateTournament
from service.tournaments.pairing import Plan, table_plan
from service.tournaments.simulate import random_result, run

SEED = bytes(range(32))


@pytest.mark.parametrize(
    ("players", "allowed", "preferred", "plan"),
    [
        (13, (2, 3, 4), 4, Plan((4, 3, 3, 3), 0)),  # the example
        (13, (3, 4), 4, Plan((4, 3, 3, 3), 0)),
        (12, (2, 3, 4), 4, Plan((4, 4, 4), 0)),
        (14, (2, 3, 4), 4, Plan((4, 4, 3, 3), 0)),
        (6, (2, 3, 4), 4, Plan((3, 3), 0)),  # 3+3 (cost 2) beats 4+2 (cost 4)
        (9, (2, 3, 4, 5, 6), 4, Plan((5, 4), 0)),  # allowed explicitly: 5+4 (cost 1) beats 3+3+3 (cost 3)
        (5, (4,), 4, Plan((4,), 1)),  # a bye only when nothing else works
        (7, (4,), 4, Plan((4,), 3)),
        (7, (3, 4), 4, Plan((4, 3), 0)),
        (5, (3, 4), 4, Plan((4,), 1)),
        (2, (2, 3, 4), 4, Plan((2,), 0)),
        (8, (2,), 2, Plan((2, 2, 2, 2), 0)),
        (9, (2,), 2, Plan((2, 2, 2, 2), 1)),
    ],
)
def test_trn_021_table_plan_examples(players, allowed, preferred, plan):
    assert table_plan(players, allowed, preferred) == plan


@pytest.mark.parametrize(("players", "allowed"), [(1, (2, 3, 4)), (3, (4,)), (0, (2,)), (2, (3, 4))])
def test_trn_021_a_field_smaller_than_any_table_has_no_plan(players, allowed):
    assert table_plan(players, allowed, max(allowed)) is None


def _brute_plan(players: int, allowed: tuple[int, ...], preferred: int) -> Plan | None:
    """Every multiset of table sizes, by brute force: fewest byes, least squared
    distance from the preferred size, then the largest sizes first."""
    best = None
    for seated in range(players, 0, -1):
        for tables in range(1, seated // min(allowed) + 1):
            for sizes in itertools.combinations_with_replacement(sorted(allowed, reverse=True), tables):
                if sum(sizes) != seated:
                    continue
                key = (sum((s - preferred) ** 2 for s in sizes), tuple(-s for s in sizes))
                if best is None or key < best[0]:
                    best = (key, Plan(tuple(sizes), players - seated))
        if best is not None:
            return best[1]
    return None


@pytest.mark.parametrize("allowed", [(2,), (3,), (4,), (2, 3), (3, 4), (2, 4), (2, 3, 4), (3, 5), (2, 3, 4, 5, 6)])
def test_trn_021_table_plan_is_the_brute_force_optimum(allowed):
    for preferred in allowed:
        for players in range(0, 25):
            assert table_plan(players, allowed, preferred) == _brute_plan(players, allowed, preferred), (
                players,
                allowed,
                preferred,
            )


def _tournament(players: int, rounds: int, *, seed: bytes = SEED, table_size: int = 4, chooser: int = 1):
    r = random.Random(chooser)
    return run(
        CreateTournament("Cup", "nauticus", table_size, by="org", rounds=rounds),
        [f"p{i:02d}" for i in range(players)],
        seed,
        lambda rnd, t, seated: random_result(r, len(seated)),
    )


def test_trn_028_round_1_is_the_lot_in_blocks():
    events, state = _tournament(12, 1)
    lot = state["lot"]
    assert lot == pairing.draw_lot([f"p{i:02d}" for i in range(12)], SEED)
    assert lot == Rng(SEED, pairing.LOT_DOMAIN).shuffled([f"p{i:02d}" for i in range(12)])
    tables = state["history"][0]["tables"]
    assert [sorted(t["players"]) for t in tables] == [sorted(lot[0:4]), sorted(lot[4:8]), sorted(lot[8:12])]
    # Another seed draws another lot.
    _, other = _tournament(12, 1, seed=bytes(32))
    assert other["lot"] != lot


def test_trn_024_eight_players_round_2_mixes_both_tables_evenly():
    """After two tables of 4, any table of 4 repeats at least C(2,2)+C(2,2) = 2 encounters:
    the optimum, 4 in all, is two from each round-1 table at each table."""
    _, state = _tournament(8, 2)
    first, second = state["history"]
    before = [set(t["players"]) for t in first["tables"]]
    for table in second["tables"]:
        assert sorted(len(before_t & set(table["players"])) for before_t in before) == [2, 2]


def test_trn_024_sixteen_players_meet_nobody_twice_in_round_2():
    """Four tables of 4 in round 1: round 2 can take one player of each, and does (local search)."""
    _, state = _tournament(16, 2)
    first, second = state["history"]
    met = {frozenset(p) for t in first["tables"] for p in itertools.combinations(t["players"], 2)}
    for table in second["tables"]:
        assert not {frozenset(p) for p in itertools.combinations(table["players"], 2)} & met


def test_trn_025_trn_026_seat_0_goes_round_the_field():
    """12 players, 3 tables, 4 rounds: 12 first seats, one each."""
    _, state = _tournament(12, 4)
    firsts = [t["players"][0] for rnd in state["history"] for t in rnd["tables"]]
    assert sorted(firsts) == sorted(state["players"])


def test_trn_026_each_table_repeats_the_least_seats_it_can():
    """Beyond seat 0 the order is the one that repeats least the seats each player
    already had: no other order of the same table (with a valid seat 0) does better."""
    _, state = _tournament(13, 5, chooser=7)
    seats: dict[str, list[int]] = {p: [0] * 6 for p in state["players"]}
    for rnd in state["history"]:
        for t in rnd["tables"]:
            players = t["players"]
            fewest = min(seats[p][0] for p in players)
            assert seats[players[0]][0] == fewest

            def cost(order):
                return sum(seats[p][i] for i, p in enumerate(order))

            best = min(cost(o) for o in itertools.permutations(players) if seats[o[0]][0] == fewest)
            assert cost(players) == best
        for t in rnd["tables"]:
            for i, p in enumerate(t["players"]):
                seats[p][i] += 1


def test_trn_020_pairing_is_deterministic_and_uses_its_round_domain():
    events, state = _tournament(13, 3)
    for r in (1, 2, 3):
        before = {**state, "history": state["history"][: r - 1]}
        recorded = next(e for e in events if getattr(e, "round", None) == r and e.TYPE == "RoundPaired")
        assert pairing.pair(before, Rng(SEED, pairing.round_domain(r))) == recorded
        assert pairing.pair(before, Rng(SEED, pairing.round_domain(r))) == recorded


def test_trn_023_table_1_holds_the_leader_and_tables_follow_the_standings():
    """Tables are numbered from the one holding the best-placed player."""
    from service.tournaments import standings

    _, state = _tournament(24, 3)
    for r in (2, 3):
        before = {**state, "history": state["history"][: r - 1]}
        place = {p: i for i, p in enumerate(standings.order(before))}
        bests = [min(place[p] for p in t["players"]) for t in state["history"][r - 1]["tables"]]
        assert bests[0] == 0
        assert bests == sorted(bests)
