"""Waters of Nereus in words (events: docs/games/waters-of-nereus.md, "Flow and events").

Hidden cards arrive redacted (null) for viewers who may not see them: each such
event has a second, vaguer template."""

from typing import Any

from service.games.waters_of_nereus.data import DIRECTIONS

NAMES: dict[str, str] = {
    # treasures (a gem is "*")
    "W": "white",
    "Y": "yellow",
    "G": "green",
    "R": "red",
    "P": "purple",
    "K": "black",
    "*": "gem",
    # corners (WON-012)
    "0": "north-west",
    "1": "north-east",
    "2": "south-east",
    "3": "south-west",
    # areas of the cabin
    "hold": "a hold",
    "chest": "the treasure chest",
    "storage": "storage",
    # science card effects, for the vaguer sentences
    "actions": "actions",
    "end_cards": "game-end cards",
    # the scientist's options (intents)
    "science": "science power +1",
    "card": "a science card",
}


def context(players: list[str]) -> dict[str, Any]:
    """The board's size, for cell names (WON-D01: 6×6 with 4 players, else 5×5)."""
    return {"size": 6 if len(players) >= 4 else 5}


SENTENCES: dict[str, str | list[str]] = {
    "GameStarted": "A game of Waters of Nereus for {players} players began on the {size}×{size} sea",
    "StartingPlayerDrawn": "{seat:player} was drawn as starting player",
    "DiscoveryStackShuffled": "The discovery cards were shuffled and {removed:len} removed unseen",
    "ScienceDeckShuffled": "The science deck of {deck:len} cards was shuffled",
    "ScienceCardsDealt": "{seat:player} was dealt {cards:len} science cards",
    "NeutralDeckShuffled": "The neutral player's crew cards were shuffled",
    "NeutralShipPlaced": "The neutral ship was placed at {cell:cell}",
    "ShipPlaced": "{seat:player} placed a ship in the {corner:name} corner, at {cell:cell}",
    "TreasuresPlaced": "{cells:len} treasures were placed on the sea",
    "DayStarted": "Day {day} began",
    "DiscoveryCardFlipped": "Discovery card {card} was turned up",
    "CycleStarted": "Cycle {cycle} began",
    "CrewChosen": ["{seat:player} chose {crew:name} in secret", "A crew card was chosen in secret"],
    "CrewRevealed": "The crew cards were revealed: {cards:name}",
    "NeutralCardFlipped": "The neutral player turned up {crew:name}, space {space}",
    "NeutralDieRolled": "The neutral player rolled {roll}: heading {direction}",
    "NeutralShipMoved": "The neutral ship moved to {cell:cell}",
    "TurnStarted": "{seat:player}'s turn with {crew:name}",
    "MarkerPlaced": [
        "{seat:player} placed a marker on {crew:name} space {space}{enhanced:if:, enhanced}",
    ],
    "ShipSailed": "{seat:player} sailed {direction} to {cell:cell}",
    "AnchorDropped": [
        "{seat:player} dropped anchor at {cell:cell} and picked up {treasures:tally}",
        "{seat:player} dropped anchor at {cell:cell}",
    ],
    "TreasureExplored": "{seat:player} explored {cell:cell} and took a {treasure:name} treasure",
    "ActionPerformed": "{seat:player} carried out the {crew:name} action of space {space}",
    "GoldActionUsed": "{seat:player} paid {gold} gold for the {crew:name} gold action",
    "GoldChanged": [
        "{seat:player} gained {delta} gold ({reason:name})",
    ],
    "VPScored": "{seat:player} scored {vp:n:victory point/victory points} ({category:name})",
    "SciencePowerChanged": "{seat:player}'s science power changed by {delta:signed}",
    "TreasureMovesGranted": "{seat:player} may move {moves:n:treasure/treasures} in the cabin",
    "TreasureDrawn": "{seat:player} drew a {treasure:name} treasure from the bag",
    "ScienceCardDrawn": ["{seat:player} drew science card {card}", "{seat:player} drew a science card"],
    "EnhancedResearchUsed": "{seat:player} used the enhanced research",
    "ScienceCardDiscarded": "{seat:player} discarded science card {card}",
    "ScienceCardPlayed": "{seat:player} played science card {card}",
    "GemGained": "{seat:player} gained a gem",
    "TreasurePlaced": [
        "{seat:player} put a {treasure:name} treasure in the {crew:name} hold",
        "{seat:player} put a {treasure:name} treasure in {area:name}",
    ],
    "HoldCompleted": "{seat:player} completed the {crew:name} hold for {vp:n:victory point/victory points}",
    "TreasureUnloaded": [
        "{seat:player} took a {treasure:name} treasure out of the {crew:name} hold",
        "{seat:player} took a {treasure:name} treasure out of {area:name}",
    ],
    "TreasuresExchanged": "{seat:player} exchanged two {treasure:name} treasures for a gem",
    "TreasureSold": "{seat:player} sold {treasure:a} for {gold} gold",
    "TurnEnded": "{seat:player} ended the turn",
    "ExplorerPhaseStarted": "The explorer phase began",
    "ExplorerTurnOffered": "{seat:player} is offered an explorer turn for {cost} gold",
    "ExplorerTurnTaken": "{seat:player} paid {cost} gold for an explorer turn with {crew:name}",
    "ExplorerTurnDeclined": "{seat:player} declined the explorer turn",
    "DayEnded": "Day {day} ended; the Sun passes to {sun:player}",
    "FinalScoringStarted": "Final scoring began",
    "FinalTurnEnded": "{seat:player} finished final scoring",
    "StorageSold": "{seat:player}'s storage was sold for {gold} gold",
    "GameEnded": "The game ended; {_all:winner} won",
    "SeatForfeited": "{seat:player} left the game",
    "CornerSkipped": "{seat:player} chose no corner (forfeited); {next:player} is next",
    "ExplorerTurnSkipped": "{seat:player}'s explorer turn was skipped (forfeited)",
}


# -- intents: what the seat may do, in words (the actions panel of the game page) --------------
_DIRECTION = {
    "N": "north",
    "NE": "north-east",
    "E": "east",
    "SE": "south-east",
    "S": "south",
    "SW": "south-west",
    "W": "west",
    "NW": "north-west",
}


def _cell_name(cell: int, size: int) -> str:
    row, col = divmod(cell, size)
    return f"{chr(ord('A') + col)}{row + 1}"


def _sail_to(intent: dict[str, Any], view: dict[str, Any], seat: int) -> int | None:
    size = int(view.get("size") or 5)
    ships = view.get("ships") or []
    at = ships[seat] if 0 <= seat < len(ships) else None
    step = DIRECTIONS.get(str(intent.get("direction")))
    if not isinstance(at, int) or step is None:
        return None
    row, col = divmod(at, size)
    row, col = row + step[0], col + step[1]
    return row * size + col if 0 <= row < size and 0 <= col < size else None


def _corner_cell(corner: int, size: int) -> int:
    last = size - 1
    return [0, last, size * size - 1, last * size][corner % 4]


def intent_facts(intent: dict[str, Any], view: dict[str, Any], seat: int) -> dict[str, Any]:
    """Words an intent's fields do not carry: the cell a ship sails to, the crew of a marker."""
    size = int(view.get("size") or 5)
    kind = intent.get("type")
    facts: dict[str, Any] = {}
    if kind == "sail_ship":
        facts["heading"] = _DIRECTION.get(str(intent.get("direction")), intent.get("direction"))
        to = _sail_to(intent, view, seat)
        if to is not None:
            facts["to_cell"] = _cell_name(to, size)
    if kind == "explore":
        facts["at"] = _cell_name(int(intent["row"]) * size + int(intent["col"]), size)
    if kind == "choose_corner":
        facts["at"] = _cell_name(_corner_cell(int(intent["corner"]), size), size)
    if kind == "place_marker":
        facts["crew"] = (view.get("turn") or {}).get("crew")
    if kind in ("place_treasure", "unload_treasure"):
        area = intent.get("area")
        facts["place"] = (
            f"the {intent.get('crew')} hold, space {int(intent.get('slot', 0)) + 1}"
            if area == "hold"
            else NAMES.get(str(area), str(area))
        )
    if kind == "sell_treasure":
        facts["gold"] = 5 if intent.get("treasure") == "*" else 2
    if kind == "buy_moves":
        facts["cost"] = 2 if intent.get("spaces") == 1 else 3
    return facts


def intent_targets(intent: dict[str, Any], view: dict[str, Any], seat: int) -> list[str]:
    """The board's elements an intent names (``data-target`` in ``boards/waters-of-nereus.html``)."""
    size = int(view.get("size") or 5)
    kind = intent.get("type")
    if kind == "sail_ship":
        to = _sail_to(intent, view, seat)
        return [f"cell:{to}"] if to is not None else []
    if kind == "explore":
        return [f"cell:{int(intent['row']) * size + int(intent['col'])}"]
    if kind == "choose_corner":
        return [f"cell:{_corner_cell(int(intent['corner']), size)}"]
    if kind in ("choose_crew", "take_explorer_turn"):
        return [f"crew:{intent['crew']}"]
    if kind == "place_marker":
        crew = (view.get("turn") or {}).get("crew")
        return [f"space:{crew}:{intent['space']}"] if crew else []
    if kind in ("place_treasure", "unload_treasure") and intent.get("area") == "hold":
        return [f"hold:{seat}:{intent.get('crew')}:{intent.get('slot', 0)}"]
    return []


INTENTS: dict[str, dict[str, Any]] = {
    "choose_corner": {
        "group": "Choose a corner",
        "text": "Put your ship in the {corner:name} corner ({at})",
    },
    "choose_crew": {"group": "Choose a crew card (in secret)", "text": "Choose the {crew:name}"},
    "place_marker": {
        "group": "Place your marker",
        "text": ["Place your marker on {crew:name} space {space}", "Place your marker on space {space}"],
    },
    "sail_ship": {"group": "Sail", "text": ["Sail {heading} to {to_cell}", "Sail {heading}"]},
    "drop_anchor": {"group": "Sail", "text": "Drop anchor and pick up the treasures here"},
    "explore": {
        "group": "Explore",
        "text": "Take {treasure:a} treasure from {at}",
        "steps": ["{at}", "{treasure:name}"],
    },
    "perform_action": {
        "group": "Your action",
        "text": ["Carry out the action: {option:name}", "Carry out the action"],
    },
    "buy_moves": {"group": "Gold actions", "text": "Pay {cost} gold to sail {spaces:n:more space/more spaces}"},
    "buy_turns": {"group": "Gold actions", "text": "Pay 2 gold to change direction"},
    "buy_treasure_move": {"group": "Gold actions", "text": "Pay 1 gold to move one more treasure"},
    "buy_treasure": {"group": "Gold actions", "text": "Pay 3 gold to draw a treasure from the bag"},
    "buy_vp": {"group": "Gold actions", "text": "Pay 1 gold for 1 victory point"},
    "buy_research": {"group": "Gold actions", "text": "Pay 3 gold for {option:name}"},
    "draw_science_enhanced": {"group": "Science", "text": "Draw a science card, then discard one"},
    "discard_science": {"group": "Science", "text": "Discard science card {card}"},
    "play_science": {"group": "Science", "text": "Play science card {card}"},
    "place_treasure": {
        "group": "Place your treasures",
        "text": "Put {treasure:a} treasure in {place}",
        "steps": ["{treasure:name}", "{area:name}", "{place}"],
    },
    "unload_treasure": {
        "group": "Move treasures",
        "text": "Take {treasure:a} treasure out of {place}",
        "steps": ["{treasure:name}", "{place}"],
    },
    "take_gem": {"group": "Move treasures", "text": "Take a gem out of storage"},
    "exchange_treasures": {"group": "Trade", "text": "Return two {treasure:name} treasures to the bag for a gem"},
    "sell_treasure": {"group": "Trade", "text": "Sell {treasure:a} for {gold} gold"},
    "end_turn": {"group": "End the turn", "text": "End the turn"},
    "take_explorer_turn": {
        "group": "Explorer turn",
        "text": "Pay for an explorer turn with the {crew:name}",
    },
    "decline_explorer_turn": {"group": "Explorer turn", "text": "Decline the explorer turn"},
    "finish_scoring": {"group": "Final scoring", "text": "Finish final scoring"},
}
