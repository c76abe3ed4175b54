"""Every refusal of Nautilus Industries: a stable code and one sentence in one style.

Style: the sentence says what is wrong (and, where it helps, what to do instead), then
names the rules it applies in parentheses: ``"<text> (NIN-041)."``.  Callers ``raise``
what these functions return; the codes are part of the API and never change.
Everything in this game is public (NIN-007), so a message may name any fact of the position.
"""

from __future__ import annotations

from typing import Any

from service.games.base import RuleViolation
from service.games.nautilus_industries import data as D


def _refuse(code: str, text: str, *rules: str) -> RuleViolation:
    """The one place the message format is built."""
    cited = f" ({', '.join(rules)})" if rules else ""
    return RuleViolation(code, f"{text}{cited}.")


# --- setup ---------------------------------------------------------------------------------------


def invalid_player_count(players: Any) -> RuleViolation:
    return _refuse(
        "invalid_player_count",
        f"Nautilus Industries is for {D.MIN_PLAYERS}–{D.MAX_PLAYERS} players, not {players!r}",
        "NIN-001",
    )


def invalid_options() -> RuleViolation:
    return _refuse("invalid_options", "Nautilus Industries has no options")


# --- any intent ----------------------------------------------------------------------------------


def game_over() -> RuleViolation:
    return _refuse("game_over", "The game is over; no more intents are accepted", "NIN-120")


def no_such_seat(seat: Any) -> RuleViolation:
    return _refuse("no_such_seat", f"There is no seat {seat!r} in this game")


def unknown_command(name: str) -> RuleViolation:
    return _refuse("unknown_command", f"{name} is not an intent of Nautilus Industries", "NIN-Q03")


def not_your_action(seat: int | None) -> RuleViolation:
    return _refuse(
        "not_your_turn", f"It is seat {seat}'s action; actions are taken one at a time in turn order", "NIN-030"
    )


def not_your_sell_step(seat: int | None) -> RuleViolation:
    return _refuse(
        "not_your_turn", f"It is seat {seat}'s sell step at this tile; players sell in turn order", "NIN-095"
    )


def wrong_phase(what: str, needed: str, phase: str, rule: str) -> RuleViolation:
    """``what`` (a gerund phrase) is only possible in the ``needed`` phase."""
    return _refuse("wrong_phase", f"{what} is only possible in the {needed} phase; it is the {phase} phase", rule)


def upgrade_pending() -> RuleViolation:
    return _refuse(
        "action_in_progress", "Finish the action you started first: choose the sub's upgrade or decline it", "NIN-043"
    )


def switch_pending() -> RuleViolation:
    return _refuse(
        "action_in_progress", "Finish the action you started first: choose the second gem of the switch", "NIN-060"
    )


def no_sub_to_upgrade() -> RuleViolation:
    return _refuse(
        "no_action_in_progress",
        "There is no sub just placed to upgrade; the upgrade is part of placing a sub",
        "NIN-043",
    )


def no_first_gem() -> RuleViolation:
    return _refuse("no_action_in_progress", "Choose the first gem of the switch with switch_gem_from first", "NIN-060")


def no_such_tile(name: str, tile: Any, players: int) -> RuleViolation:
    return _refuse(
        "no_such_tile",
        f"The {name} {tile!r} is not a mining zone tile; the tile ids are 0 to {players - 1}",
        "NIN-012",
        "NIN-Q04",
    )


def no_such_colour(what: str, colour: Any) -> RuleViolation:
    return _refuse("no_such_colour", f"The {what} {colour!r} is not one of Y, B, K, O, G", "NIN-002")


# --- action phase --------------------------------------------------------------------------------


def no_free_sub() -> RuleViolation:
    return _refuse("no_free_sub", f"All {D.SUBS_PER_PLAYER} of your subs are already placed this round", "NIN-040")


def spot_taken() -> RuleViolation:
    return _refuse("spot_taken", "That colour spot already holds a sub; each spot holds at most one", "NIN-041")


def cannot_afford_upgrade() -> RuleViolation:
    return _refuse(
        "insufficient_funds", f"A sub upgrade costs ${D.UPGRADE_COST}; you cannot afford it", "NIN-043", "NIN-044"
    )


def colour_not_in_bag() -> RuleViolation:
    return _refuse("colour_not_in_bag", "There is no gem of that colour left in the bag for the upgrade", "NIN-044")


def capacity_at_maximum() -> RuleViolation:
    return _refuse(
        "capacity_at_maximum", f"Your warehouse capacity is already {D.MAX_CAPACITY}, the maximum", "NIN-050"
    )


def no_such_gem() -> RuleViolation:
    return _refuse("no_such_gem", "That tile has no gem of that colour to switch", "NIN-060")


def no_gem_to_switch_with() -> RuleViolation:
    return _refuse(
        "no_gem_to_switch_with",
        "No other tile has a gem of another colour to switch it with",
        "NIN-060",
        "NIN-061",
    )


def second_gem_same_tile() -> RuleViolation:
    return _refuse("same_tile", "The second gem must come from a different tile", "NIN-060")


def same_colour() -> RuleViolation:
    return _refuse("same_colour", "Switching two gems of the same colour changes nothing", "NIN-061", "NIN-A05")


def switch_same_tile() -> RuleViolation:
    return _refuse("same_tile", "Switching the mining order needs two different tiles", "NIN-070")


def tiles_not_ordered() -> RuleViolation:
    return _refuse("tiles_not_ordered", "Name the pair with tile_a < tile_b; each pair has one intent", "NIN-Q03")


def tile_already_moved() -> RuleViolation:
    return _refuse("tile_already_moved", "A tile may be moved only once per action phase", "NIN-071", "NIN-A12")


def no_such_certificate(shares: Any) -> RuleViolation:
    return _refuse(
        "no_such_certificate", f"Certificates have {D.SHARES[0]} to {D.SHARES[-1]} shares, not {shares!r}", "NIN-004"
    )


def certificate_sold() -> RuleViolation:
    return _refuse("certificate_sold", "That certificate has already been bought", "NIN-080")


def cannot_afford_certificate(price: int) -> RuleViolation:
    return _refuse("insufficient_funds", f"That certificate costs ${price}; you cannot afford it", "NIN-081")


# --- market phase, step 2 ------------------------------------------------------------------------


def invalid_count() -> RuleViolation:
    return _refuse("invalid_count", "Sell at least 1 gem", "NIN-095")


def not_enough_gems(held: int) -> RuleViolation:
    return _refuse("not_enough_gems", f"You hold only {held} gem(s) of that colour", "NIN-095")


def over_capacity(held: int, capacity: int) -> RuleViolation:
    return _refuse(
        "over_capacity", f"You hold {held} gems but your warehouse keeps {capacity}: sell the excess", "NIN-096"
    )
