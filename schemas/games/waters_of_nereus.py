"""Waters of Nereus as a client reads it: events, view, result (see ``schemas/games/__init__.py``).

Hidden information (docs/rules/waters-of-nereus.md, section 4): science hands
(the owner only; others see a count), the crew card chosen before the reveal
(the owner only), the order of the science deck, the discovery stack and the
neutral deck (nobody while the game runs).  Events carrying them keep their
shape for other viewers, with ``null`` in place of each hidden card; a crew
choice reaches other viewers as an empty object.  Once the game has finished,
everyone sees everything.

Cells are integers ``row * size + col``.  Treasure colours are W, Y, G, R, P,
K; ``*`` is a gem.
"""

from __future__ import annotations

from marshmallow import Schema, fields

from schemas.games import (
    boolean,
    counts,
    forfeited_field,
    integer,
    listing,
    nested,
    result_fields,
    schema,
    seat,
    string,
)
from service.games.waters_of_nereus import data as D

_CREW = D.CREWS
_TREASURE = [*D.COLOURS, D.GEM]
_HIDDEN = "null for every viewer but the organiser while the game runs."


def _crew(description: str = "", required: bool = True) -> fields.String:
    return string(_CREW, description, required=required)


def _cards(description: str) -> fields.List:
    return listing(fields.String(allow_none=True), description)


def _treasure(description: str = "") -> fields.String:
    return string(_TREASURE, description)


EVENTS: dict[str, type[Schema]] = {
    "GameStarted": schema(
        "WatersOfNereusGameStarted",
        "Setup: player count, the neutral ship, board size and spaces per action row.",
        players=integer(),
        neutral=boolean(),
        size=integer("The board is size x size cells."),
        spaces=integer("Spaces per crew row."),
    ),
    "StartingPlayerDrawn": schema("WatersOfNereusStartingPlayerDrawn", "Who starts.", seat=seat()),
    "DiscoveryStackShuffled": schema(
        "WatersOfNereusDiscoveryStackShuffled",
        "The discovery stack was shuffled and 2 cards removed.",
        stack=_cards(f"The stack, top card last; {_HIDDEN}"),
        removed=_cards(f"The removed cards; {_HIDDEN}"),
    ),
    "ScienceDeckShuffled": schema(
        "WatersOfNereusScienceDeckShuffled", "The science deck was shuffled.", deck=_cards(f"Top card last; {_HIDDEN}")
    ),
    "ScienceCardsDealt": schema(
        "WatersOfNereusScienceCardsDealt",
        "Science cards dealt to a seat.",
        seat=seat(),
        cards=_cards("The cards; null for other viewers while the game runs."),
    ),
    "NeutralDeckShuffled": schema(
        "WatersOfNereusNeutralDeckShuffled",
        "The neutral ship's crew deck was shuffled.",
        deck=_cards(f"Top card last; {_HIDDEN}"),
    ),
    "NeutralShipPlaced": schema("WatersOfNereusNeutralShipPlaced", "The neutral ship's start cell.", cell=integer()),
    "ShipPlaced": schema(
        "WatersOfNereusShipPlaced",
        "A seat placed its ship on a corner.",
        seat=seat(),
        corner=integer(),
        cell=integer(),
        next=seat(allow_none=True, description="Who places next, or null."),
    ),
    "TreasuresPlaced": schema(
        "WatersOfNereusTreasuresPlaced",
        "Treasures drawn onto cells.",
        cells=listing(fields.List(fields.Raw()), "Pairs [cell, colour]."),
    ),
    "DayStarted": schema("WatersOfNereusDayStarted", "A day begins.", day=integer()),
    "DiscoveryCardFlipped": schema(
        "WatersOfNereusDiscoveryCardFlipped", "The day's discovery card.", card=string(description="Card id.")
    ),
    "CycleStarted": schema("WatersOfNereusCycleStarted", "A cycle begins.", cycle=integer(), hourglass=integer()),
    "CrewChosen": schema(
        "WatersOfNereusCrewChosen",
        "A seat chose its crew card in secret: other viewers get `crew` null until the reveal (older servers"
        " sent them `{}`).",
        seat=seat(required=False),
        crew=string(_CREW, "The crew card; null for other viewers until the reveal.", required=False, allow_none=True),
    ),
    "CrewRevealed": schema(
        "WatersOfNereusCrewRevealed", "Every seat's chosen crew, revealed (by seat).", cards=listing(_crew())
    ),
    "NeutralCardFlipped": schema(
        "WatersOfNereusNeutralCardFlipped",
        "The neutral ship's crew card.",
        crew=_crew(),
        space=fields.Integer(required=True, allow_none=True, strict=True),
        from_explorer=fields.Integer(required=True, allow_none=True, strict=True),
    ),
    "NeutralDieRolled": schema(
        "WatersOfNereusNeutralDieRolled",
        "The neutral ship's die.",
        roll=integer(),
        compass=integer(),
        direction=string(D.COMPASS),
    ),
    "NeutralShipMoved": schema(
        "WatersOfNereusNeutralShipMoved",
        "The neutral ship moved; treasures on its cell went back to the bag.",
        cell=integer(),
        returned=listing(_treasure()),
    ),
    "TurnStarted": schema(
        "WatersOfNereusTurnStarted",
        "A seat's turn with its revealed crew.",
        seat=seat(),
        crew=_crew(),
        order=listing(fields.Integer(strict=True), "Turn order of this cycle."),
    ),
    "MarkerPlaced": schema(
        "WatersOfNereusMarkerPlaced",
        "A marker on a crew row space.",
        seat=seat(),
        crew=_crew(),
        space=integer(),
        enhanced=boolean(),
    ),
    "ShipSailed": schema(
        "WatersOfNereusShipSailed",
        "A ship moved one cell.",
        seat=seat(),
        direction=string(D.COMPASS),
        cell=integer(),
        fees=listing(fields.Integer(strict=True), "Seats paid a fee for passing them."),
    ),
    "AnchorDropped": schema(
        "WatersOfNereusAnchorDropped",
        "A ship ended its move.",
        seat=seat(),
        cell=integer(),
        treasures=listing(_treasure()),
    ),
    "TreasureExplored": schema(
        "WatersOfNereusTreasureExplored",
        "A treasure taken from a cell.",
        seat=seat(),
        cell=integer(),
        treasure=_treasure(),
        allowance=integer(),
    ),
    "ActionPerformed": schema(
        "WatersOfNereusActionPerformed",
        "A crew action carried out.",
        seat=seat(),
        crew=_crew(),
        space=integer(),
        option=string(description="The option chosen, or ''."),
    ),
    "GoldActionUsed": schema(
        "WatersOfNereusGoldActionUsed",
        "Gold paid for a crew's gold action.",
        seat=seat(),
        crew=_crew(),
        gold=integer(),
        spaces=integer("Extra spaces bought (captain).", required=False),
        option=string(["science", "card"], "What the research bought (scientist).", required=False),
    ),
    "GoldChanged": schema(
        "WatersOfNereusGoldChanged", "Gold gained or lost.", seat=seat(), delta=integer(), reason=string()
    ),
    "VPScored": schema(
        "WatersOfNereusVPScored", "Victory points scored.", seat=seat(), vp=integer(), category=string()
    ),
    "SciencePowerChanged": schema(
        "WatersOfNereusSciencePowerChanged", "Science power moved.", seat=seat(), delta=integer()
    ),
    "TreasureMovesGranted": schema(
        "WatersOfNereusTreasureMovesGranted", "Treasure moves to make.", seat=seat(), moves=integer()
    ),
    "TreasureDrawn": schema(
        "WatersOfNereusTreasureDrawn", "A treasure drawn from the bag.", seat=seat(), treasure=_treasure()
    ),
    "ScienceCardDrawn": schema(
        "WatersOfNereusScienceCardDrawn",
        "A science card drawn.",
        seat=seat(),
        card=fields.String(required=True, allow_none=True, metadata={"description": "null for other viewers."}),
    ),
    "EnhancedResearchUsed": schema(
        "WatersOfNereusEnhancedResearchUsed", "Enhanced research: a draw, then a discard.", seat=seat()
    ),
    "ScienceCardDiscarded": schema(
        "WatersOfNereusScienceCardDiscarded", "A science card discarded (face up).", seat=seat(), card=string()
    ),
    "ScienceCardPlayed": schema(
        "WatersOfNereusScienceCardPlayed", "A science card played (face up).", seat=seat(), card=string()
    ),
    "GemGained": schema("WatersOfNereusGemGained", "A gem gained.", seat=seat()),
    "TreasurePlaced": schema(
        "WatersOfNereusTreasurePlaced",
        "A pending treasure placed in a hold, the chest or storage.",
        seat=seat(),
        treasure=_treasure(),
        area=string(["hold", "chest", "storage"]),
        crew=string(["", *_CREW], "The hold's crew, or ''."),
        slot=integer(),
        gold=integer("Gold gained (chest).", required=False),
        vp=integer("Victory points gained (chest).", required=False),
    ),
    "HoldCompleted": schema(
        "WatersOfNereusHoldCompleted", "A hold was completed.", seat=seat(), crew=_crew(), vp=integer()
    ),
    "TreasureUnloaded": schema(
        "WatersOfNereusTreasureUnloaded",
        "A treasure taken back out of a hold or storage.",
        seat=seat(),
        treasure=_treasure(),
        area=string(["hold", "storage"]),
        crew=string(["", *_CREW]),
        slot=integer(),
        free=boolean(),
    ),
    "TreasuresExchanged": schema(
        "WatersOfNereusTreasuresExchanged",
        "Two treasures of a colour exchanged for a gem.",
        seat=seat(),
        treasure=_treasure(),
    ),
    "TreasureSold": schema(
        "WatersOfNereusTreasureSold", "A treasure sold for gold.", seat=seat(), treasure=_treasure(), gold=integer()
    ),
    "TurnEnded": schema("WatersOfNereusTurnEnded", "A seat's turn ended.", seat=seat()),
    "ExplorerPhaseStarted": schema(
        "WatersOfNereusExplorerPhaseStarted",
        "Explorer turns are offered.",
        queue=listing(fields.List(fields.Integer(strict=True)), "Pairs [seat, explorer position]."),
    ),
    "ExplorerTurnOffered": schema(
        "WatersOfNereusExplorerTurnOffered",
        "A seat may take an explorer turn.",
        seat=seat(),
        cost=integer(),
        pos=integer(),
    ),
    "ExplorerTurnTaken": schema(
        "WatersOfNereusExplorerTurnTaken", "An explorer turn taken.", seat=seat(), crew=_crew(), cost=integer()
    ),
    "ExplorerTurnDeclined": schema("WatersOfNereusExplorerTurnDeclined", "An explorer turn declined.", seat=seat()),
    "DayEnded": schema("WatersOfNereusDayEnded", "A day ended.", day=integer(), sun=integer()),
    "FinalScoringStarted": schema(
        "WatersOfNereusFinalScoringStarted", "Final turns begin, in this order.", order=listing(fields.Integer())
    ),
    "FinalTurnEnded": schema("WatersOfNereusFinalTurnEnded", "A seat's final turn ended.", seat=seat()),
    "SeatForfeited": schema(
        "WatersOfNereusSeatForfeited",
        "A seat left the game (resigned or ran out of time).",
        seat=seat(),
        ship=fields.Integer(required=True, allow_none=True, strict=True, metadata={"description": "Its ship's cell."}),
        returned=listing(_treasure(), "Its pending treasures, returned to the bag."),
    ),
    "CornerSkipped": schema(
        "WatersOfNereusCornerSkipped",
        "A forfeited seat's corner choice was skipped.",
        seat=seat(),
        next=seat(allow_none=True, description="Who places next, or null."),
    ),
    "ExplorerTurnSkipped": schema(
        "WatersOfNereusExplorerTurnSkipped", "A forfeited seat's explorer turn was skipped.", seat=seat(), pos=integer()
    ),
    "StorageSold": schema(
        "WatersOfNereusStorageSold",
        "At the end, storage was sold.",
        seat=seat(),
        treasures=listing(_treasure()),
        gems=integer(),
        gold=integer(),
    ),
}

# -- result -------------------------------------------------------------------
_Breakdown = schema(
    "WatersOfNereusBreakdown",
    "One seat's final score, by category.",
    holds=integer(),
    chest=integer(),
    actions=integer(),
    science=integer(),
    end_cards=integer(),
    gold=integer(),
    total=integer(),
    completed_holds=integer(),
    science_power=integer(),
    gold_left=integer(),
)
RESULT = schema(
    "WatersOfNereusResult",
    "The result of a finished Waters of Nereus game.",
    **result_fields(
        _Breakdown, string(["none", "completed_holds", "science_power", "shared"], "Which tie-break decided.")
    ),
)
# Waters of Nereus writes the result itself as the GameEnded data.
EVENTS["GameEnded"] = RESULT

# -- view ---------------------------------------------------------------------
_VpBy = counts(["holds", "chest", "actions", "science", "end_cards", "gold"], "Victory points by category.")
_Seat = schema(
    "WatersOfNereusSeat",
    "One seat's board.  `hand` and `chosen` only for the seat itself and the organiser; others get `hand_count`.",
    gold=integer(),
    vp=integer(),
    vp_by=_VpBy,
    science=integer("Science power."),
    hand=listing(fields.String(), "Science cards in hand (own seat only).", required=False),
    hand_count=integer("Cards in hand (other seats).", required=False),
    played=listing(_crew(), "Crew cards played this day."),
    chosen=string(_CREW, "Crew chosen and not yet revealed (own seat only).", required=False, allow_none=True),
    revealed=string(_CREW, "Crew revealed this cycle.", allow_none=True),
    holds=fields.Dict(
        keys=fields.String(),
        values=fields.List(fields.String(allow_none=True)),
        required=True,
        metadata={"description": "By crew: the treasure in each slot, or null."},
    ),
    completed=listing(_crew(), "Holds completed."),
    chest=listing(_treasure()),
    storage=listing(_treasure()),
    gems=integer(),
    pending=listing(_treasure(), "Treasures to place."),
    sold=boolean(),
    committed=boolean("Has laid a crew card face down this cycle (public; what it is is not).", required=False),
)
_Move = schema(
    "WatersOfNereusMove",
    "A ship move in progress.",
    left=integer("Steps left."),
    dirs=string(["any", "orth", "diag"]),
    turns=boolean("May change direction."),
    basic=boolean(),
    steps=integer(),
    dir=string(D.COMPASS, allow_none=True),
    visited=listing(fields.Integer(strict=True)),
)
_Turn = schema(
    "WatersOfNereusTurn",
    "The turn in progress.",
    seat=seat(),
    crew=string(["", *_CREW]),
    space=fields.Integer(required=True, allow_none=True, strict=True),
    explorer_pos=fields.Integer(required=True, allow_none=True, strict=True),
    cost=integer("What the explorer turn cost (explorer turns only).", required=False),
    enhanced=boolean(),
    gold_used=boolean(),
    basic=boolean(),
    move=nested(_Move, allow_none=True),
    explores=listing(fields.String(), "Colours still explorable, one string per allowance."),
    moves=integer("Treasure moves left."),
    research=boolean(),
    discard=boolean(),
)
_ORGANISER = "Organiser only (others get the `*_count`)."
VIEW = schema(
    "WatersOfNereusView",
    "The Waters of Nereus state as the caller may see it, plus `to_act`.",
    players=integer(),
    neutral=boolean(),
    size=integer(),
    spaces=integer(),
    phase=string(["setup", "corners", "choose", "turn", "explorer_offer", "final", "over"]),
    day=integer(),
    cycle=integer(),
    sun=integer(),
    hourglass=integer(),
    active=seat(allow_none=True),
    order=listing(fields.Integer(strict=True)),
    board=listing(fields.List(fields.String()), "By cell: the treasures on it."),
    ships=listing(fields.Integer(strict=True, allow_none=True), "Each seat's cell."),
    neutral_ship=fields.Integer(required=True, allow_none=True, strict=True),
    compass=integer(),
    neutral_deck=listing(_crew(), _ORGANISER, required=False),
    neutral_deck_count=integer(required=False),
    neutral_played=listing(_crew()),
    bag=counts(D.COLOURS, "Treasures in the bag."),
    gem_supply=integer(),
    discovery_stack=listing(fields.String(), _ORGANISER, required=False),
    discovery_stack_count=integer(required=False),
    discovery_removed=listing(fields.String(), _ORGANISER, required=False),
    discovery_current=string(allow_none=True),
    discovery_used=listing(fields.String()),
    science_deck=listing(fields.String(), _ORGANISER, required=False),
    science_deck_count=integer(required=False),
    science_discard=listing(fields.String()),
    rows=fields.Dict(
        keys=fields.String(),
        values=fields.List(fields.Integer(strict=True, allow_none=True)),
        required=True,
        metadata={"description": "By crew: the seat on each space (-1 the neutral ship), or null."},
    ),
    explorer_queue=listing(fields.List(fields.Integer(strict=True))),
    turn=nested(_Turn, allow_none=True),
    seats=listing(fields.Nested(_Seat)),
    result=nested(RESULT, allow_none=True),
    forfeited=forfeited_field(),
    to_act=listing(fields.Integer(strict=True)),
)
