"""Every refusal of Waters of Nereus: a stable code and one sentence naming the rule.

``REASONS`` maps a reason to its ``(code, message template)``; :func:`refuse` builds the
:class:`RuleViolation`.  ``setup`` and ``decide`` raise only through here, so every text has
one style: what is wrong or what to do, then the rule IDs in parentheses.  Several reasons may
share a code (the code is what clients match on).

:func:`explain` picks the reason for a command ``legal`` does not list.  It uses only public
facts and the sender's own secrets, so a refusal never tells whether another seat has chosen
its crew card, or what (hidden information, WON-040).
"""

from __future__ import annotations

from typing import Any

from service.games.base import Command, RuleViolation, State, forfeited, seat_forfeited
from service.games.waters_of_nereus import commands as c
from service.games.waters_of_nereus import data

REASONS: dict[str, tuple[str, str]] = {
    # setup
    "player_count": (
        "invalid_player_count",
        f"Waters of Nereus is for {data.MIN_PLAYERS} to {data.MAX_PLAYERS} players (WON-001).",
    ),
    "unknown_option": ("invalid_options", "The only option is 'neutral' (WON-001)."),
    "neutral_not_bool": ("invalid_options", "'neutral' must be true or false (WON-001)."),
    "neutral_needs_two": ("invalid_options", "The neutral player is a 2-player variant only (WON-001)."),
    # any phase
    "game_over": ("game_over", "The game is over (WON-073)."),
    "not_your_turn": ("not_your_turn", "It is not your turn (WON-041)."),
    "not_allowed": ("not_allowed", "'{command}' is not allowed now."),
    # stage 1 and corners
    "choosing": (
        "wrong_phase",
        "Every player is choosing a crew card now; only choose_crew is allowed (WON-040).",
    ),
    "crew_not_in_hand": (
        "crew_unavailable",
        "'{crew}' is not a crew card in your hand; each crew card is played once a day (WON-044).",
    ),
    "corner_taken": ("corner_taken", "Choose a free corner water space, 0-3 (WON-012)."),
    "crew_chosen": (
        "crew_already_chosen",
        "You have laid your crew card face down for this cycle; a choice is final (WON-Q02).",
    ),
    # explorer phase
    "explorer_cost": ("insufficient_gold", "The explorer-phase turn costs {cost} gold (WON-061)."),
    "explorer_crew": (
        "crew_unavailable",
        "Play a crew card from your hand, not played today, whose row has a free space (WON-062).",
    ),
    "explorer_offer": ("wrong_phase", "Take or decline your explorer-phase turn (WON-062, WON-063)."),
    # final scoring
    "final_unplaced": ("treasures_unplaced", "Place every treasure in your hands first (WON-055)."),
    "final_science": (
        "science_unplayable",
        "At game end only 'game end' cards from your hand may be played, with science power "
        "left, before selling (WON-127, WON-141).",
    ),
    "final_not_allowed": ("not_allowed", "Not allowed during final scoring (WON-141, WON-097)."),
    # a turn
    "space_unavailable": (
        "space_unavailable",
        "Action space {space} of the {crew} row is not free (WON-042).",
    ),
    "marker_first": ("marker_first", "Place your action marker first (WON-042, WON-Q03)."),
    "discard_first": ("discard_first", "Discard a science card first (WON-124)."),
    "ship_moving": ("ship_moving", "Finish the ship's move first: sail on or drop anchor (WON-Q04)."),
    "no_move": ("no_move", "You have no ship move available (WON-100, WON-106)."),
    "illegal_step": (
        "illegal_step",
        "That step is not allowed: straight line (WON-101) or orthogonal turns paid for (WON-107), "
        "on the board, each space once (WON-A02), fees payable and a legal stop reachable (WON-102).",
    ),
    "occupied_space": ("occupied_space", "A ship may not stop on a space with another ship (WON-102)."),
    "gold_action_used": ("gold_action_used", "Only one gold action per turn (WON-051)."),
    "gold_action_unavailable": (
        "gold_action_unavailable",
        "That is not the {crew}'s gold action now, or you lack the gold (WON-051, WON-A06).",
    ),
    "no_basic_action": ("no_basic_action", "No basic action of this kind is available (WON-050)."),
    "basic_unaffordable": ("insufficient_gold", "You cannot pay for this basic action (WON-119, WON-A11)."),
    "no_treasure": (
        "no_treasure",
        "No such treasure you may take orthogonally next to your ship (WON-109, WON-110).",
    ),
    "treasure_does_not_fit": (
        "treasure_does_not_fit",
        "That treasure is not in your hands or does not fit that cabin space (WON-080, WON-090, WON-093).",
    ),
    "no_treasure_move": (
        "no_treasure_move",
        "No treasure move left, or nothing movable there (WON-113, WON-092).",
    ),
    "science_unplayable": (
        "science_unplayable",
        "You need the card in hand, science power above 0, and an 'on your turn' card (WON-125, WON-126, WON-127).",
    ),
    "treasures_unplaced": (
        "treasures_unplaced",
        "All acquired treasures must be placed in the cabin (WON-055, WON-A09).",
    ),
    "move_unfinished": ("ship_moving", "Finish the ship's move first (WON-101)."),
    "storage_rule": (
        "storage_rule",
        "Storage does not allow that now (WON-093, WON-094, WON-095, WON-096).",
    ),
}

#: What a seat may still send while its ship is between steps (WON-Q04).
WHILE_MOVING = (c.SailShip, c.DropAnchor, c.BuyMoves, c.BuyTurns, c.SellTreasure)


def refuse(reason: str, **fields: Any) -> RuleViolation:
    """The :class:`RuleViolation` for ``reason``, its message filled in with ``fields``."""
    code, template = REASONS[reason]
    return RuleViolation(code, template.format(**fields))


def explain(state: State, seat: int, cmd: Command) -> RuleViolation:
    """Why ``cmd`` is refused.  Uses only public facts and the seat's own secrets."""
    phase = state["phase"]
    if phase == "over":
        return refuse("game_over")
    if seat in forfeited(state):
        return seat_forfeited(seat)  # WON-Q15
    if phase == "choose":
        if not isinstance(cmd, c.ChooseCrew):
            return refuse("choosing")
        if 0 <= seat < state["players"] and state["seats"][seat]["chosen"] is not None:
            return refuse("crew_chosen")
        return refuse("crew_not_in_hand", crew=cmd.crew)
    if seat != state["active"]:
        return refuse("not_your_turn")
    turn = state["turn"]
    me = state["seats"][seat]
    if phase == "corners":
        return refuse("corner_taken")
    if phase == "explorer_offer":
        if isinstance(cmd, c.TakeExplorerTurn):
            if me["gold"] < turn["cost"]:
                return refuse("explorer_cost", cost=turn["cost"])
            return refuse("explorer_crew")
        return refuse("explorer_offer")
    if phase == "final":
        if isinstance(cmd, c.FinishScoring):
            return refuse("final_unplaced")
        if isinstance(cmd, c.PlayScience):
            return refuse("final_science")
        return refuse("final_not_allowed")
    if turn["space"] is None:
        if isinstance(cmd, c.PlaceMarker):
            return refuse("space_unavailable", space=cmd.space, crew=turn["crew"])
        return refuse("marker_first")
    if turn["discard"]:
        return refuse("discard_first")
    move = turn["move"]
    if move is not None and move["steps"] and not isinstance(cmd, WHILE_MOVING):
        return refuse("ship_moving")
    if isinstance(cmd, c.SailShip):
        return refuse("no_move" if move is None else "illegal_step")
    if isinstance(cmd, c.DropAnchor):
        return refuse("occupied_space")
    if isinstance(cmd, c.GOLD_ACTIONS):
        if turn["gold_used"]:
            return refuse("gold_action_used")
        return refuse("gold_action_unavailable", crew=turn["crew"])
    if isinstance(cmd, c.PerformAction):
        return refuse("basic_unaffordable" if turn["basic"] else "no_basic_action")
    if isinstance(cmd, c.Explore):
        return refuse("no_treasure")
    if isinstance(cmd, c.PlaceTreasure):
        return refuse("treasure_does_not_fit")
    if isinstance(cmd, c.UnloadTreasure):
        return refuse("no_treasure_move")
    if isinstance(cmd, c.PlayScience):
        return refuse("science_unplayable")
    if isinstance(cmd, c.EndTurn):
        return refuse("treasures_unplaced" if me["pending"] else "move_unfinished")
    if isinstance(cmd, c.ExchangeTreasures | c.SellTreasure | c.TakeGem):
        return refuse("storage_rule")
    return refuse("not_allowed", command=cmd.type)
