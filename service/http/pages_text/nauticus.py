"""Nauticus in words (events: docs/games/nauticus.md, "Events")."""

from typing import Any

NAMES: dict[str, str] = {
    # hull parts, masts, sails, goods (NAU-070, NAU-080, NAU-090, NAU-100)
    "single": "single hull",
    "bow": "bow",
    "center": "centre piece",
    "stern": "stern",
    **{
        f"mast_{c}": f"{w} mast"
        for c, w in (
            ("whale", "whale"),
            ("anchor", "anchor"),
            ("crestC", "crest C"),
            ("crestD", "crest D"),
            ("crown", "crown"),
        )
    },
    **{
        f"sail_{c}": f"{w} sail"
        for c, w in (
            ("whale", "whale"),
            ("anchor", "anchor"),
            ("crestC", "crest C"),
            ("crestD", "crest D"),
            ("crown", "crown"),
        )
    },
    "coffee": "coffee",
    "grain": "grain",
    "fish": "fish",
    "salt": "salt",
    # actions (NAU-006)
    "buy_hulls": "Buy hull parts",
    "buy_masts": "Buy masts",
    "buy_sails": "Buy sails",
    "buy_goods": "Buy goods",
    "transport": "Transport",
    "withdraw_money": "Withdraw money",
    "deliver_goods": "Deliver goods",
    "score_crowns": "Score crowns",
    # where a tile goes
    "warehouse": "into the warehouse",
    "new_ship": "to start a new ship",
    "ship": "onto a ship",
    # ship rewards (NAU-162)
    "crown_mast": "a crown mast",
    "crown_sail": "a crown sail",
    "victory_points": "3 victory points",
    "taler": "7 Taler",
    "workers": "3 workers",
    "goods": "two goods",
}

SENTENCES: dict[str, str | list[str]] = {
    "GameStarted": "A game of Nauticus for {players} players began: {rounds} rounds, {start_player:player} starts",
    "ActionTilesLaidOut": "Round {round}: the action tiles were laid out around the turntable",
    "ActionChosen": [
        "{seat:player} chose {action:name} on space {space:num1} and took {bonus_item:a} as bonus",
        "{seat:player} chose {action:name} on space {space:num1}",
    ],
    "ActionPassed": [
        "{seat:player} passed (pass tile {pass_tile} VP)",
    ],
    "ItemBought": "{seat:player} bought {item:a} for {price} Taler, {to:name}{blue:if: (a blue worker paid)}",
    "GiftTaken": "{seat:player} took {item:a} as the gift for buying all four kinds",
    "GiftForfeited": "{seat:player}'s gift was forfeited: it could not be received",
    "TileTransported": "{seat:player} moved {item:a} from the warehouse {to:name}",
    "MoneyWithdrawn": "{seat:player} withdrew {taler} Taler{blue:if: with a blue worker}",
    "GoodsDelivered": "{seat:player} delivered {goods:name} from ship {ship:num1}",
    "CrownsScored": "{seat:player} scored {crowns:n:crown/crowns} for {vp:n:victory point/victory points}",
    "ShipCompleted": "{seat:player} completed ship {ship:num1}: {rewards:n:reward/rewards} to take",
    "RewardTaken": [
        "{seat:player} took {goods:name} as a ship reward",
        "{seat:player} took {reward:name} as a ship reward",
    ],
    "ExtraActionStarted": "{seat:player} played the extra action tile: {action:name}, with {workers} more workers",
    "ExtraActionEnded": "{seat:player} finished the extra action",
    "TurnEnded": [
        "{seat:player} ended the turn; {next:player} is next",
        "{seat:player} ended the turn",
    ],
    "PhaseEnded": "Round {round}, phase {phase} ended; {start_player:player} now holds the start player figure",
    "RoundEnded": "Round {round} ended",
    "GameEnded": "The game ended; {result:winner} won",
    "SeatForfeited": "{seat:player} left the game",
}

# -- intents: what the seat may do, in words (the actions panel of the game page) --------------
#: Where a bought or transported tile goes, by ``to``.
_WHERE = {"warehouse": "into the warehouse", "new_ship": "to start a new ship"}


def intent_facts(intent: dict[str, Any], view: dict[str, Any], seat: int) -> dict[str, Any]:
    """Words an intent's fields do not carry: the action on a space, where a tile goes."""
    facts: dict[str, Any] = {}
    layout = view.get("layout") or []
    if intent.get("type") == "choose_action" and isinstance(intent.get("space"), int) and intent["space"] < len(layout):
        facts["action"] = layout[intent["space"]]
    if intent.get("to"):
        to = intent["to"]
        facts["where"] = _WHERE.get(to) or (
            f"onto ship {int(intent.get('ship', 0)) + 1}, place {int(intent.get('position', 0)) + 1}"
        )
    return facts


def intent_targets(intent: dict[str, Any], view: dict[str, Any], seat: int) -> list[str]:
    """The board's elements an intent names (``data-target`` in ``boards/nauticus.html``)."""
    kind = intent.get("type")
    out = []
    if kind == "choose_action":
        out.append(f"space:{intent['space']}")
    if kind == "use_extra_action":
        out += [f"space:{i}" for i, a in enumerate(view.get("layout") or []) if a == intent.get("action")]
    if kind == "transport":
        out.append(f"wh:{seat}:{intent['item']}")
    if intent.get("to") == "ship" or kind == "deliver_goods":
        out.append(f"ship:{seat}:{intent.get('ship', 0)}")
    return out


INTENTS: dict[str, dict[str, Any]] = {
    "choose_action": {
        "group": "Choose an action",
        "text": [
            "{action:name} (space {space:num1}), taking {bonus_item:a} as bonus",
            "{action:name} (space {space:num1})",
            "Space {space:num1}",
        ],
        "steps": [["{action:name} (space {space:num1})", "Space {space:num1}"], ["{bonus_item:a} as bonus", "no item"]],
    },
    "pass": {"group": "Pass", "text": "Pass: turn a pass tile"},
    "buy_item": {
        "group": "Buy",
        "text": "Buy {item:a} {where}",
        "steps": ["{item:name}", "{where}"],
    },
    "take_gift": {"group": "Take the gift", "text": "Take {item:a} as the gift", "steps": ["{item:name}"]},
    "transport": {
        "group": "Transport",
        "text": "Move {item:a} from the warehouse {where}",
        "steps": ["{item:name}", "{where}"],
    },
    "withdraw_money": {"group": "Withdraw money", "text": "Withdraw money"},
    "deliver_goods": {"group": "Deliver goods", "text": "Deliver the goods of ship {ship:num1}"},
    "score_crowns": {"group": "Score crowns", "text": "Score crowns"},
    "choose_reward": {
        "group": "Ship reward",
        "text": ["Take {goods:name} as the reward", "Take {reward:name} as the reward"],
        "steps": ["{reward:name}", ["{goods:name}", ""]],
    },
    "use_extra_action": {
        "group": "Extra action",
        "text": "Play the extra action tile: {action:name}",
    },
    "end_extra_action": {"group": "Extra action", "text": "Finish the extra action"},
    "end_turn": {"group": "End the turn", "text": "End the turn"},
}
