"""Waters of Nereus setup and components (WON-001 to WON-019)."""

from __future__ import annotations

import pytest
from support.waters_of_nereus import SEED, act, new_game, start

from service.games.base import RuleViolation
from service.games.rng import Rng
from service.games.waters_of_nereus import ENGINE, data
from service.games.waters_of_nereus import commands as c


def test_won_001_player_counts_and_neutral_option():
    """WON-001: 2-4 players; the neutral variant only with 2; other options refused."""
    assert (ENGINE.min_players, ENGINE.max_players) == (2, 4)
    for bad in (1, 5):
        with pytest.raises(RuleViolation) as err:
            ENGINE.setup(bad, {}, Rng(SEED))
        assert err.value.code == "invalid_player_count"
    for players, options in ((3, {"neutral": True}), (2, {"colour": "red"}), (2, {"neutral": "yes"})):
        with pytest.raises(RuleViolation) as err:
            ENGINE.setup(players, options, Rng(SEED))
        assert err.value.code == "invalid_options"
    assert new_game(2, neutral=True)["neutral"] is True
    assert new_game(2)["neutral"] is False


@pytest.mark.parametrize(("players", "size", "spaces"), [(2, 5, 3), (3, 5, 3), (4, 6, 4)])
def test_won_002_won_010_board_side(players, size, spaces):
    """WON-002, WON-010 (WON-D01, WON-D02): 5x5 side with 3 spaces a row for 2-3, 6x6 with 4 for 4."""
    s = new_game(players)
    assert s["size"] == size and len(s["board"]) == size * size
    assert all(len(row) == spaces for row in s["rows"].values())


def test_won_003_won_014_treasures_in_bag():
    """WON-003, WON-014: 96 treasures; all but the players' white ones start in the bag."""
    s = new_game(3)
    assert sum(data.TREASURES.values()) == 96
    assert sum(s["bag"].values()) == 96 - 3
    assert s["bag"]["W"] == 23 - 3


def test_won_004_gems_limited():
    """WON-004: 12 gems in a limited supply."""
    s = new_game(4)
    assert s["gem_supply"] == 12
    s["gem_supply"] = 0
    s["seats"][0]["gems"] = 0
    with pytest.raises(AssertionError):
        ENGINE.check_invariants(s)


def test_won_005_player_components():
    """WON-005: each player has 7 crew cards, one hold per crew, 1 ship, 4 action markers."""
    s = start(4)
    for seat in range(4):
        assert len(ENGINE.legal(s, seat)) == 7
        assert set(s["seats"][seat]["holds"]) == set(data.CREWS)
    assert len(s["ships"]) == 4 and None not in s["ships"]


def test_won_006_won_016_discovery_cards():
    """WON-006, WON-016: 6 discovery cards per side, 2 removed unseen, 4 stacked."""
    s = new_game(4)
    assert len(s["discovery_stack"]) == 4 and len(s["discovery_removed"]) == 2
    cards = s["discovery_stack"] + s["discovery_removed"]
    assert sorted(cards) == sorted(k for k in data.DISCOVERY_CARDS if k.startswith("4p"))
    s3 = new_game(3)
    assert all(k.startswith("3p") for k in s3["discovery_stack"] + s3["discovery_removed"])
    assert "discovery_removed" not in ENGINE.view(s, 0)


def test_won_007_won_018_science_cards_dealt():
    """WON-007, WON-018: 22 science cards; 3 dealt face down to each player."""
    assert len(data.SCIENCE_CARDS) == 22
    s = new_game(4)
    assert all(len(p["hand"]) == 3 for p in s["seats"])
    assert len(s["science_deck"]) == 22 - 12
    ENGINE.check_invariants(s)


def test_won_011_won_017_starting_values():
    """WON-011, WON-017: science 0, score 0, 3 gold."""
    s = new_game(2)
    for p in s["seats"]:
        assert (p["science"], p["vp"], p["gold"]) == (0, 0, 3)


def test_won_012_ship_corners_chosen_in_turn_order():
    """WON-012: ships go on different corners, chosen one seat at a time from the starting player."""
    s = new_game(4)
    first = s["sun"]
    assert ENGINE.to_act(s) == [first]
    act(s, first, c.ChooseCorner(2))
    assert s["ships"][first] == 35
    nxt = (first + 1) % 4
    assert ENGINE.to_act(s) == [nxt]
    assert c.ChooseCorner(2) not in ENGINE.legal(s, nxt)
    with pytest.raises(RuleViolation) as err:
        ENGINE.decide(s, nxt, c.ChooseCorner(2), Rng(SEED))
    assert err.value.code == "corner_taken"
    while s["phase"] == "corners":
        act(s, s["active"], ENGINE.legal(s, s["active"])[0])
    assert len(set(s["ships"])) == 4
    assert set(s["ships"]) == {0, 5, 30, 35}


def test_won_013_white_treasure_in_storage():
    """WON-013: each player starts with 1 white treasure in storage."""
    s = new_game(4)
    assert all(p["storage"] == ["W"] for p in s["seats"])


def test_won_015_setup_fill():
    """WON-015: every water space without a ship gets exactly 1 random treasure."""
    s = start(4)
    ships = set(s["ships"])
    discovery = {r * 6 + col for r, col in data.DISCOVERY_CARDS[s["discovery_current"]] if r * 6 + col not in ships}
    for i, pile in enumerate(s["board"]):
        if i in ships:
            assert pile == []
        else:
            assert len(pile) == (2 if i in discovery else 1)


def test_won_019_starting_player_has_sun_and_hourglass():
    """WON-019: the starting player takes the Sun and the Hourglass (a seeded draw)."""
    seen = set()
    for seed in range(12):
        s = new_game(4, seed=seed)
        assert s["sun"] == s["hourglass"]
        seen.add(s["sun"])
    assert len(seen) > 1
