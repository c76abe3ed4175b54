"""Why a command is refused: a stable code and a sentence naming the rule.

Only public facts and the sender's own secrets are used, so a refusal never tells whether
another seat has chosen its crew card, or what (hidden information, WON-040).
"""

from __future__ import annotations

from service.games.base import Command, RuleViolation, State
from service.games.waters_of_nereus import commands as c


def explain(state: State, seat: int, cmd: Command) -> RuleViolation:
    """Why ``cmd`` is refused.  Uses only public facts and the seat's own secrets."""
    phase = state["phase"]
    if phase == "over":
        return RuleViolation("game_over", "The game is over (WON-073).")
    if phase == "choose":
        if not isinstance(cmd, c.ChooseCrew):
            return RuleViolation(
                "wrong_phase", "Every player is choosing a crew card now; only choose_crew is allowed (WON-040)."
            )
        return RuleViolation(
            "crew_unavailable",
            f"'{cmd.crew}' is not a crew card in your hand; each crew card is played once a day (WON-044).",
        )
    if seat != state["active"]:
        return RuleViolation("not_your_turn", "It is not your turn (WON-041).")
    turn = state["turn"]
    me = state["seats"][seat]
    if phase == "corners":
        return RuleViolation("corner_taken", "Choose a free corner water space, 0-3 (WON-012).")
    if phase == "explorer_offer":
        if isinstance(cmd, c.TakeExplorerTurn):
            if me["gold"] < turn["cost"]:
                return RuleViolation(
                    "insufficient_gold", f"The explorer-phase turn costs {turn['cost']} gold (WON-061)."
                )
            return RuleViolation(
                "crew_unavailable",
                "Play a crew card from your hand, not played today, whose row has a free space (WON-062).",
            )
        return RuleViolation("wrong_phase", "Take or decline your explorer-phase turn (WON-062/WON-063).")
    if phase == "final":
        if isinstance(cmd, c.FinishScoring):
            return RuleViolation("treasures_unplaced", "Place every treasure in your hands first (WON-055).")
        if isinstance(cmd, c.PlayScience):
            return RuleViolation(
                "science_unplayable",
                "At game end only 'game end' cards from your hand may be played, with science power "
                "left, before selling (WON-127, WON-141).",
            )
        return RuleViolation("not_allowed", "Not allowed during final scoring (WON-141, WON-097).")
    if turn["space"] is None:
        if isinstance(cmd, c.PlaceMarker):
            return RuleViolation(
                "space_unavailable", f"Action space {cmd.space} of the {turn['crew']} row is not free (WON-042)."
            )
        return RuleViolation("marker_first", "Place your action marker first (WON-042, WON-Q03).")
    if turn["discard"]:
        return RuleViolation("discard_first", "Discard a science card first (WON-124).")
    move = turn["move"]
    if (
        move is not None
        and move["steps"]
        and not isinstance(cmd, c.SailShip | c.DropAnchor | c.BuyMoves | c.BuyTurns | c.SellTreasure)
    ):
        return RuleViolation("ship_moving", "Finish the ship's move first: sail on or drop anchor (WON-Q04).")
    if isinstance(cmd, c.SailShip):
        if move is None:
            return RuleViolation("no_move", "You have no ship move available (WON-100, WON-106).")
        return RuleViolation(
            "illegal_step",
            "That step is not allowed: straight line (WON-101) or orthogonal turns paid for (WON-107), "
            "on the board, each space once (WON-A02), fees payable and a legal stop reachable (WON-102).",
        )
    if isinstance(cmd, c.DropAnchor):
        return RuleViolation("occupied_space", "A ship may not stop on a space with another ship (WON-102).")
    if isinstance(cmd, c.BuyMoves | c.BuyTurns | c.BuyTreasureMove | c.BuyTreasure | c.BuyVp | c.BuyResearch):
        if turn["gold_used"]:
            return RuleViolation("gold_action_used", "Only one gold action per turn (WON-051).")
        return RuleViolation(
            "gold_action_unavailable",
            f"That is not the {turn['crew']}'s gold action now, or you lack the gold (WON-051, WON-A06).",
        )
    if isinstance(cmd, c.PerformAction):
        if not turn["basic"]:
            return RuleViolation("no_basic_action", "No basic action of this kind is available (WON-050).")
        return RuleViolation("insufficient_gold", "You cannot pay for this basic action (WON-119, WON-A11).")
    if isinstance(cmd, c.Explore):
        return RuleViolation(
            "no_treasure",
            "No such treasure you may take orthogonally next to your ship (WON-109, WON-110).",
        )
    if isinstance(cmd, c.PlaceTreasure):
        return RuleViolation(
            "treasure_does_not_fit",
            "That treasure is not in your hands or does not fit that cabin space (WON-080, WON-090, WON-093).",
        )
    if isinstance(cmd, c.UnloadTreasure):
        return RuleViolation("no_treasure_move", "No treasure move left, or nothing movable there (WON-113, WON-092).")
    if isinstance(cmd, c.PlayScience):
        return RuleViolation(
            "science_unplayable",
            "You need the card in hand, science power above 0, and an 'on your turn' card (WON-125..WON-127).",
        )
    if isinstance(cmd, c.EndTurn):
        if me["pending"]:
            return RuleViolation(
                "treasures_unplaced", "All acquired treasures must be placed in the cabin (WON-055, WON-A09)."
            )
        return RuleViolation("ship_moving", "Finish the ship's move first (WON-101).")
    if isinstance(cmd, c.ExchangeTreasures | c.SellTreasure | c.TakeGem):
        return RuleViolation("storage_rule", "Storage does not allow that now (WON-093..WON-096).")
    return RuleViolation("not_allowed", f"'{cmd.type}' is not allowed now.")
