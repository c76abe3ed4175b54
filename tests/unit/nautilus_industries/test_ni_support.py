"""The Nautilus Industries test helpers (``support.nautilus_industries``) build valid positions."""

from __future__ import annotations

from support.nautilus_industries import E, clear_tiles, give, new_state, set_tile, to_sell_step


def test_helpers_build_valid_positions() -> None:
    """The helpers conserve every gem (NIN-002), so invariants hold on built positions."""
    s = new_state(3)
    clear_tiles(s)
    set_tile(s, 0, B=2, O=1)
    give(s, 1, Y=1)
    E.check_invariants(s)
    give(s, 1, Y=3)  # over capacity: only possible inside a market step (NIN-A16)
    assert s["tiles"][0]["gems"]["B"] == 2 and s["players"][1]["gems"]["Y"] == 3
    to_sell_step(s, 1)
    E.check_invariants(s)
    assert E.to_act(s) == [1]


def test_invariants_catch_a_lost_gem() -> None:
    """check_invariants fails when a gem disappears (NIN-002 conservation)."""
    s = new_state(2)
    s["bag"]["Y"] -= 1
    try:
        E.check_invariants(s)
    except AssertionError:
        return
    raise AssertionError("a lost gem was not noticed")
