"""Nautilus Industries: components and setup (NIN-001..018)."""

from __future__ import annotations

import pytest
from support.nautilus_industries import SEED, E, new_state

from service.games.base import ADMIN, Event, RuleViolation, fold
from service.games.nautilus_industries import data as D
from service.games.rng import Rng


@pytest.mark.parametrize("n", [1, 7, 0])
def test_NIN_001_player_count(n: int) -> None:
    """NIN-001: 2–6 players; other counts are refused."""
    with pytest.raises(RuleViolation) as info:
        E.setup(n, {}, Rng(SEED))
    assert info.value.code == "invalid_player_count"
    assert (E.min_players, E.max_players) == (2, 6)


def test_no_options() -> None:
    """The game has no options: any non-empty options are refused."""
    with pytest.raises(RuleViolation) as info:
        E.setup(3, {"variant": True}, Rng(SEED))
    assert info.value.code == "invalid_options"
    assert E.name == "nautilus-industries" and E.version == "1.0.0"


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_NIN_002_003_012_014_017_setup_counts(n: int) -> None:
    """NIN-002 100 gems (20 a colour); NIN-003/NIN-012 N zone tiles with 5 colour spots in a
    line; NIN-014 5 gems drawn per tile; NIN-017 bag = 100 - 10 - 5N; NIN-013 markers out."""
    s = new_state(n)
    assert len(s["tiles"]) == n and sorted(s["line"]) == list(range(n))
    for tile in s["tiles"]:
        assert set(tile["gems"]) == set(D.COLOURS) and set(tile["subs"]) == set(D.COLOURS)
        assert sum(tile["gems"].values()) == 5
    assert sum(s["bag"].values()) == 100 - 10 - 5 * n
    assert s["markers"] is True
    E.check_invariants(s)


def test_NIN_004_018_certificates() -> None:
    """NIN-004: 30 certificates, companies Y B K O G × shares 1–6; NIN-018: all available."""
    s = new_state(3)
    assert sorted(s["certs"]) == sorted(D.COLOURS)
    assert all(owners == [None] * 6 for owners in s["certs"].values())
    assert sum(len(v) for v in D.CERT_PRICE.values()) == 30
    assert D.CERT_PRICE["G"][6] == 24 and D.CERT_PRICE["Y"][1] == 4  # NIN-D02


def test_NIN_005_010_player_start() -> None:
    """NIN-005 / NIN-010: each player has 3 subs in hand, warehouse capacity 1, $0 (NIN-D03)."""
    s = new_state(4)
    for p in s["players"]:
        assert p == {"money": 0, "capacity": 1, "subs": 3, "gems": dict.fromkeys(D.COLOURS, 0)}


def test_NIN_006_bank_unlimited() -> None:
    """NIN-006: the bank never runs out: money is only a player attribute, payouts always happen."""
    s = new_state(2)
    assert "bank" not in s
    assert all(p["money"] >= 0 for p in s["players"])


def test_NIN_007_all_information_public() -> None:
    """NIN-007: every viewer sees the whole position; events are never redacted."""
    s = new_state(3)
    views = [E.view(s, v) for v in (0, 1, 2, None, ADMIN)]
    for v in views:
        assert v["players"] == s["players"] and v["bag"] == s["bag"] and v["tiles"] == s["tiles"]
    event = Event("GemsDrawn", {"tile": 0, "gems": ["Y"]})
    assert all(E.redact_event(event, v) is event for v in (0, None, ADMIN))


def test_NIN_011_first_player_is_seeded() -> None:
    """NIN-011: the first player is drawn from the seeded rng and recorded in an event."""
    firsts = set()
    for i in range(20):
        events = E.setup(4, {}, Rng(bytes([i]) * 32))
        chosen = next(e for e in events if e.type == "FirstPlayerChosen").data["seat"]
        assert fold(E, events)["first"] == chosen
        firsts.add(chosen)
    assert len(firsts) > 1
    assert E.setup(4, {}, Rng(SEED)) == E.setup(4, {}, Rng(SEED))


def test_NIN_013_stock_markers_on_zero() -> None:
    """NIN-013: one marker gem per colour on stock space 0; out of circulation."""
    s = new_state(2)
    assert s["stock"] == dict.fromkeys(D.COLOURS, 0)
    assert D.MULTIPLIER[0] == 0


def test_NIN_014_015_016_commodity_values_from_the_draw() -> None:
    """NIN-014: the setup draws are recorded per tile; NIN-015/NIN-016: values by scarcity."""
    events = E.setup(5, {}, Rng(SEED))
    counts = dict.fromkeys(D.COLOURS, 0)
    for e in events:
        if e.type == "GemsDrawn":
            assert len(e.data["gems"]) == 5
            for c in e.data["gems"]:
                counts[c] += 1
    values = next(e for e in events if e.type == "CommodityValuesSet").data["values"]
    ordered = sorted(D.COLOURS, key=lambda c: counts[c])
    for c in D.COLOURS:
        fewer = sum(1 for o in ordered if counts[o] < counts[c])
        assert values[c] == 6 - fewer


def test_NIN_016_ties_share_the_highest_value() -> None:
    """NIN-016: all tied colours take the best value of the tie, the covered ranks stay empty."""
    from service.games.nautilus_industries.setup import commodity_values

    assert commodity_values({"Y": 5, "B": 5, "K": 5, "O": 5, "G": 5}) == dict.fromkeys(D.COLOURS, 6)
    assert commodity_values({"Y": 1, "B": 1, "K": 9, "O": 9, "G": 9}) == {
        "Y": 6,
        "B": 6,
        "K": 4,
        "O": 4,
        "G": 4,
    }


def test_NIN_017_markers_are_chosen_not_drawn() -> None:
    """NIN-017 (and NIN-Q01): the 10 marker gems are set aside by colour, before the draws."""
    events = E.setup(2, {}, Rng(SEED))
    kinds = [e.type for e in events]
    assert kinds.index("MarkersSetAside") < kinds.index("GemsDrawn")
    assert events[kinds.index("MarkersSetAside")].data["gems"] == dict.fromkeys(D.COLOURS, 2)


def test_NIN_020_021_round_starts_with_actions() -> None:
    """NIN-020: a round starts with the action phase; NIN-021: rounds go on until the end."""
    s = new_state(2)
    assert s["phase"] == "action" and s["round"] == 1 and E.result(s) is None
    assert E.to_act(s) == [s["first"]]
