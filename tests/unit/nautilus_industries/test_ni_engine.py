"""Nautilus Industries: the package shape (the engine template, one refusal style, the stored result)."""

from __future__ import annotations

import inspect
import re

import pytest
from support.nautilus_industries import E, act, give, new_state, to_sell_step

from service.games.base import GameEngine, RuleViolation
from service.games.nautilus_industries import refusals
from service.games.nautilus_industries.commands import Sell

#: "<Sentence> (NIN-xxx, NIN-yyy)." or "<Sentence>." — the one style of every refusal text.
STYLE = re.compile(r"^[A-Z][^\n]*[^.\s](?: \(NIN-[A-Z]?\d{2,3}(?:, NIN-[A-Z]?\d{2,3})*\))?\.$")

#: Every refusal builder: sample arguments and the code it must carry (codes are API, never changed).
SAMPLES: dict[str, tuple[tuple, str]] = {
    "invalid_player_count": ((7,), "invalid_player_count"),
    "invalid_options": ((), "invalid_options"),
    "game_over": ((), "game_over"),
    "no_such_seat": ((6,), "no_such_seat"),
    "unknown_command": (("Pass",), "unknown_command"),
    "not_your_action": ((1,), "not_your_turn"),
    "not_your_sell_step": ((1,), "not_your_turn"),
    "wrong_phase": (("Selling gems", "market", "action", "NIN-099"), "wrong_phase"),
    "upgrade_pending": ((), "action_in_progress"),
    "switch_pending": ((), "action_in_progress"),
    "no_sub_to_upgrade": ((), "no_action_in_progress"),
    "no_first_gem": ((), "no_action_in_progress"),
    "no_such_tile": (("tile", 6, 3), "no_such_tile"),
    "no_such_colour": (("colour", "Z"), "no_such_colour"),
    "no_free_sub": ((), "no_free_sub"),
    "spot_taken": ((), "spot_taken"),
    "cannot_afford_upgrade": ((), "insufficient_funds"),
    "colour_not_in_bag": ((), "colour_not_in_bag"),
    "capacity_at_maximum": ((), "capacity_at_maximum"),
    "no_such_gem": ((), "no_such_gem"),
    "no_gem_to_switch_with": ((), "no_gem_to_switch_with"),
    "second_gem_same_tile": ((), "same_tile"),
    "same_colour": ((), "same_colour"),
    "switch_same_tile": ((), "same_tile"),
    "tiles_not_ordered": ((), "tiles_not_ordered"),
    "tile_already_moved": ((), "tile_already_moved"),
    "no_such_certificate": ((7,), "no_such_certificate"),
    "certificate_sold": ((), "certificate_sold"),
    "cannot_afford_certificate": ((8,), "insufficient_funds"),
    "invalid_count": ((), "invalid_count"),
    "not_enough_gems": ((1,), "not_enough_gems"),
    "over_capacity": ((3, 2), "over_capacity"),
}


def test_engine_is_the_template() -> None:
    """The package builds its ENGINE from its modules (no hand-written engine class)."""
    assert type(E) is GameEngine
    assert (E.name, E.version, E.min_players, E.max_players) == ("nautilus-industries", "1.0.0", 2, 6)  # NIN-001


def test_every_refusal_has_one_style() -> None:
    """Every refusal text is one sentence naming its rules in parentheses at the end; codes are unchanged."""
    public = {
        name
        for name, fn in inspect.getmembers(refusals, inspect.isfunction)
        if not name.startswith("_") and fn.__module__ == refusals.__name__
    }
    assert public == set(SAMPLES), "every refusal builder has a sample here"
    for name, (args, code) in SAMPLES.items():
        violation = getattr(refusals, name)(*args)
        assert isinstance(violation, RuleViolation)
        assert violation.code == code, name
        assert STYLE.match(violation.message), violation.message
        assert violation.details == {}


def test_refusals_raised_by_decide_come_from_the_module() -> None:
    """decide raises the texts of the refusals module (NIN-095 as the example)."""
    s = new_state(2)
    a = s["first"]
    give(s, a, Y=2)
    to_sell_step(s, a)
    with pytest.raises(RuleViolation) as info:
        E.decide(s, a, Sell("Y", 3), None)  # type: ignore[arg-type]
    assert info.value.code == "not_enough_gems"
    assert info.value.message == refusals.not_enough_gems(2).message


def test_result_is_stored_and_every_caller_gets_a_copy() -> None:
    """The result is computed once at the game end (NIN-124) and stored; result() hands out copies."""
    s = new_state(2)
    seller = (s["first"] - 1) % 2  # last in turn order
    s["stock"]["Y"] = 22
    s["players"][seller]["capacity"] = 6
    give(s, seller, Y=4)
    to_sell_step(s, seller, position=1)
    s, _ = act(s, seller, Sell("Y", 4))  # 22 + 4 = 26, capped at 24: the game ends (NIN-120)
    first = E.result(s)
    assert first is not None and first == s["result"] and first is not s["result"]
    first["scores"]["0"] = -1
    assert E.result(s)["scores"]["0"] == s["result"]["scores"]["0"] != -1
