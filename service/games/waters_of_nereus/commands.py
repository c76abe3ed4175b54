"""The intents of Waters of Nereus: small atomic commands, one step of a turn each."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from service.games.base import Command


@dataclass(frozen=True)
class ChooseCorner(Command):
    """WON-012: put your ship on a free corner (0 NW, 1 NE, 2 SE, 3 SW)."""

    type: ClassVar[str] = "choose_corner"
    corner: int


@dataclass(frozen=True)
class ChooseCrew(Command):
    """WON-040, WON-I01: secretly choose the crew card for this cycle (committed, revealed when all chose)."""

    type: ClassVar[str] = "choose_crew"
    crew: str


@dataclass(frozen=True)
class PlaceMarker(Command):
    """WON-042: place an action marker on an available space (1 = leftmost) of your crew's row."""

    type: ClassVar[str] = "place_marker"
    space: int


@dataclass(frozen=True)
class SailShip(Command):
    """WON-101, WON-106: move the ship one space in a direction (N, NE, E, ...)."""

    type: ClassVar[str] = "sail_ship"
    direction: str


@dataclass(frozen=True)
class DropAnchor(Command):
    """WON-103: end the ship's move and pick up the treasures where it stops."""

    type: ClassVar[str] = "drop_anchor"


@dataclass(frozen=True)
class Explore(Command):
    """WON-109: take one treasure from a space orthogonally next to your ship."""

    type: ClassVar[str] = "explore"
    row: int
    col: int
    treasure: str


@dataclass(frozen=True)
class PerformAction(Command):
    """The basic action of the boatswain, purser, merchant or scientist space taken.
    ``option`` is "" except on the scientist's "science OR card" space."""

    type: ClassVar[str] = "perform_action"
    option: str = ""


@dataclass(frozen=True)
class BuyMoves(Command):
    """WON-104 captain gold action: 2 gold for +1 space, 3 gold for +2 spaces."""

    type: ClassVar[str] = "buy_moves"
    spaces: int


@dataclass(frozen=True)
class BuyTurns(Command):
    """WON-107 pilot gold action: 2 gold to change direction during this move."""

    type: ClassVar[str] = "buy_turns"


@dataclass(frozen=True)
class BuyTreasureMove(Command):
    """WON-114 boatswain gold action: 1 gold to move one more treasure."""

    type: ClassVar[str] = "buy_treasure_move"


@dataclass(frozen=True)
class BuyTreasure(Command):
    """WON-117 purser gold action: 3 gold to draw a random treasure from the bag."""

    type: ClassVar[str] = "buy_treasure"


@dataclass(frozen=True)
class BuyVp(Command):
    """WON-120 merchant gold action: 1 gold for 1 VP."""

    type: ClassVar[str] = "buy_vp"


@dataclass(frozen=True)
class BuyResearch(Command):
    """WON-123 scientist gold action: 3 gold for science +1 ("science") or a card ("card")."""

    type: ClassVar[str] = "buy_research"
    option: str


@dataclass(frozen=True)
class DrawScienceEnhanced(Command):
    """WON-124 scientist enhanced action: draw a science card, then discard one."""

    type: ClassVar[str] = "draw_science_enhanced"


@dataclass(frozen=True)
class DiscardScience(Command):
    """WON-124: discard a science card from your hand (after the enhanced draw)."""

    type: ClassVar[str] = "discard_science"
    card: str


@dataclass(frozen=True)
class PlayScience(Command):
    """WON-125, WON-126, WON-127: play a science card, lowering science power by 1."""

    type: ClassVar[str] = "play_science"
    card: str


@dataclass(frozen=True)
class PlaceTreasure(Command):
    """WON-080, WON-081, WON-I02: put a treasure in your hands (acquired this turn) into the cabin.
    ``area`` is "storage", "chest" or "hold"; ``crew``/``slot`` name the hold icon."""

    type: ClassVar[str] = "place_treasure"
    treasure: str
    area: str
    crew: str = ""
    slot: int = 0


@dataclass(frozen=True)
class UnloadTreasure(Command):
    """WON-113, WON-A21, WON-Q11: take a treasure out of a hold or storage to move it (1 treasure move)."""

    type: ClassVar[str] = "unload_treasure"
    treasure: str
    area: str
    crew: str = ""
    slot: int = 0


@dataclass(frozen=True)
class TakeGem(Command):
    """WON-095: take a gem out of storage to place it on another treasure space (free)."""

    type: ClassVar[str] = "take_gem"


@dataclass(frozen=True)
class ExchangeTreasures(Command):
    """WON-094: return 2 same-coloured storage treasures to the bag for a gem."""

    type: ClassVar[str] = "exchange_treasures"
    treasure: str


@dataclass(frozen=True)
class SellTreasure(Command):
    """WON-096: sell a storage treasure (2 gold) or a gem ("*", 5 gold)."""

    type: ClassVar[str] = "sell_treasure"
    treasure: str


@dataclass(frozen=True)
class EndTurn(Command):
    """End your turn (every acquired treasure must be in the cabin, WON-055)."""

    type: ClassVar[str] = "end_turn"


@dataclass(frozen=True)
class TakeExplorerTurn(Command):
    """WON-062: pay the explorer-phase cost and play another crew card."""

    type: ClassVar[str] = "take_explorer_turn"
    crew: str


@dataclass(frozen=True)
class DeclineExplorerTurn(Command):
    """WON-063: decline the explorer-phase extra turn."""

    type: ClassVar[str] = "decline_explorer_turn"


@dataclass(frozen=True)
class FinishScoring(Command):
    """WON-141: done with game-end cards and gem moves; your storage is then sold."""

    type: ClassVar[str] = "finish_scoring"


ALL_COMMANDS: list[type[Command]] = [
    ChooseCorner,
    ChooseCrew,
    PlaceMarker,
    SailShip,
    DropAnchor,
    Explore,
    PerformAction,
    BuyMoves,
    BuyTurns,
    BuyTreasureMove,
    BuyTreasure,
    BuyVp,
    BuyResearch,
    DrawScienceEnhanced,
    DiscardScience,
    PlayScience,
    PlaceTreasure,
    UnloadTreasure,
    TakeGem,
    ExchangeTreasures,
    SellTreasure,
    EndTurn,
    TakeExplorerTurn,
    DeclineExplorerTurn,
    FinishScoring,
]
COMMANDS: dict[str, type[Command]] = {c.type: c for c in ALL_COMMANDS}
#: The gold actions, one per crew (WON-051; the explorer's is the Phase-3 turn, WON-111).
GOLD_ACTIONS = (BuyMoves, BuyTurns, BuyTreasureMove, BuyTreasure, BuyVp, BuyResearch)
