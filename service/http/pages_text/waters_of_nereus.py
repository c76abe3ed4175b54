"""Waters of Nereus in words (events: docs/games/waters-of-nereus.md, "Flow and events").

Hidden cards arrive redacted (null) for viewers who may not see them: each such
event has a second, vaguer template."""

from typing import Any

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
