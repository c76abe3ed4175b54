"""Nautilus Industries as a client reads it: events, view, result (see ``schemas/games/__init__.py``).

Everything is open information (docs/rules/nautilus-industries.md, NIN-007):
every viewer gets every event and the whole state.  Colours (gems, subs,
companies) are one-letter codes: Y, B, K, O, G.
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
from service.games.nautilus_industries import data as D

_C = D.COLOURS


def _colour(description: str = "A colour: Y, B, K, O or G.", allow_none: bool = False) -> fields.String:
    return string(_C, description, allow_none=allow_none)


def _by_colour(description: str = "") -> fields.Dict:
    return counts(_C, description)


# -- events -------------------------------------------------------------------
EVENTS: dict[str, type[Schema]] = {
    "GameStarted": schema(
        "NautilusIndustriesGameStarted",
        "Setup begins: the player count and the options.",
        players=integer(),
        options=fields.Dict(required=True),
    ),
    "FirstPlayerChosen": schema("NautilusIndustriesFirstPlayerChosen", "Who starts.", seat=seat()),
    "MarkersSetAside": schema(
        "NautilusIndustriesMarkersSetAside", "Marker gems taken from the bag at setup.", gems=_by_colour()
    ),
    "GemsDrawn": schema(
        "NautilusIndustriesGemsDrawn",
        "Gems drawn from the bag onto a zone tile.",
        tile=integer("The tile id."),
        gems=listing(_colour(), "The gems drawn, in draw order (may be empty: the bag ran out)."),
    ),
    "CommodityValuesSet": schema(
        "NautilusIndustriesCommodityValuesSet",
        "The commodity chart's opening values.",
        counts=_by_colour("Gems of each colour on the tiles."),
        values=_by_colour("The value of each colour."),
    ),
    "RoundStarted": schema(
        "NautilusIndustriesRoundStarted", "A round begins.", round=integer(), first=seat(description="First player.")
    ),
    "SubPlaced": schema(
        "NautilusIndustriesSubPlaced",
        "A sub was placed on a tile's colour spot.",
        seat=seat(),
        tile=integer(),
        colour=_colour(),
        upgrade_offered=boolean("The seat may now upgrade the sub (then `upgrade_sub` or `decline_upgrade`)."),
    ),
    "SubUpgraded": schema(
        "NautilusIndustriesSubUpgraded",
        "A placed sub was upgraded to collect a second colour.",
        seat=seat(),
        tile=integer(),
        colour=_colour(),
        upgrade=_colour("The extra colour collected."),
        cost=integer(),
    ),
    "UpgradeDeclined": schema(
        "NautilusIndustriesUpgradeDeclined", "The upgrade was declined.", seat=seat(), tile=integer(), colour=_colour()
    ),
    "WarehouseUpgraded": schema(
        "NautilusIndustriesWarehouseUpgraded", "Warehouse capacity went up.", seat=seat(), capacity=integer()
    ),
    "GemChosen": schema(
        "NautilusIndustriesGemChosen",
        "The first gem of a gem switch was chosen.",
        seat=seat(),
        tile=integer(),
        colour=_colour(),
    ),
    "GemsSwitched": schema(
        "NautilusIndustriesGemsSwitched",
        "Two gems on two tiles changed places.",
        seat=seat(),
        tile_a=integer(),
        colour_a=_colour(),
        tile_b=integer(),
        colour_b=_colour(),
    ),
    "TilesSwitched": schema(
        "NautilusIndustriesTilesSwitched",
        "Two zone tiles changed places in the line.",
        seat=seat(),
        tile_a=integer(),
        tile_b=integer(),
        line=listing(fields.Integer(strict=True), "The line of tile ids afterwards."),
    ),
    "StockPurchased": schema(
        "NautilusIndustriesStockPurchased",
        "A stock certificate was bought.",
        seat=seat(),
        company=_colour("The company (a colour)."),
        shares=integer(),
        price=integer(),
    ),
    "ActionForfeited": schema(
        "NautilusIndustriesActionForfeited",
        "A seat with no legal action lost it.",
        seat=seat(),
        reason=string(description="Why, naming the rule."),
    ),
    "MarketPhaseStarted": schema("NautilusIndustriesMarketPhaseStarted", "The market phase begins.", round=integer()),
    "TileResolutionStarted": schema(
        "NautilusIndustriesTileResolutionStarted",
        "The market resolves the tile at a line position.",
        tile=integer(),
        position=integer(),
    ),
    "SubCollected": schema(
        "NautilusIndustriesSubCollected",
        "A sub collected its gems from a tile.",
        tile=integer(),
        colour=_colour(),
        seat=seat(),
        own=integer("Gems of the sub's colour collected."),
        upgrade=_colour("The upgrade's colour, or null.", allow_none=True),
        upgrade_gems=integer(),
    ),
    "SellTurnStarted": schema(
        "NautilusIndustriesSellTurnStarted",
        "A seat may now sell gems (`sell`) or keep them (`hold`).",
        seat=seat(),
        index=integer(),
        tile=integer(),
    ),
    "GemsSold": schema(
        "NautilusIndustriesGemsSold",
        "Gems sold at the commodity value.",
        seat=seat(),
        colour=_colour(),
        count=integer(),
        price=integer(),
        money=integer("Money received."),
    ),
    "GemsHeld": schema(
        "NautilusIndustriesGemsHeld", "A seat kept its gems.", seat=seat(), gems=_by_colour("Gems now held.")
    ),
    "MarketAdjusted": schema(
        "NautilusIndustriesMarketAdjusted",
        "Commodity value and stock price moved after a sale.",
        tile=integer(),
        colour=_colour(),
        sold=integer(),
        commodity_before=integer(),
        commodity_after=integer(),
        stock_before=integer(),
        stock_after=integer(),
    ),
    "SoldGemsReturned": schema(
        "NautilusIndustriesSoldGemsReturned", "Sold gems went back to the bag.", gems=_by_colour()
    ),
    "UpkeepPhaseStarted": schema("NautilusIndustriesUpkeepPhaseStarted", "Upkeep begins.", round=integer()),
    "GameEndTriggered": schema(
        "NautilusIndustriesGameEndTriggered",
        "A stock reached the end of its track: the game ends.",
        tile=integer(),
        colours=listing(_colour()),
    ),
    "SeatForfeited": schema(
        "NautilusIndustriesSeatForfeited",
        "A seat left the game (resigned or ran out of time): its subs came off the tiles, its gems went back"
        " to the bag.",
        seat=seat(),
        subs=listing(fields.List(fields.Raw()), "The subs removed: [tile, colour, upgrade colour or null]."),
        gems=counts(_C, "Gems returned to the bag (only colours held appear)."),
    ),
    "FinalSale": schema(
        "NautilusIndustriesFinalSale",
        "At the end, a seat's gems were sold.",
        seat=seat(),
        gems=counts(_C, "Gems sold, by colour (only colours sold appear)."),
        money=integer(),
    ),
}

# -- result -------------------------------------------------------------------
_Stock = schema(
    "NautilusIndustriesStockValue",
    "One company's shares held and what they are worth.",
    shares=integer(),
    space=integer(),
    multiplier=integer(),
    value=integer(),
)
_Breakdown = schema(
    "NautilusIndustriesBreakdown",
    "One seat's final score: money plus stock value.",
    money=integer(),
    stock_value=integer(),
    stocks=fields.Dict(keys=fields.String(), values=fields.Nested(_Stock), required=True),
)
RESULT = schema(
    "NautilusIndustriesResult",
    "The result of a finished Nautilus Industries game.",
    **result_fields(_Breakdown, string(description="Which tie-break decided, or null.", allow_none=True)),
)
EVENTS["GameEnded"] = schema(
    "NautilusIndustriesGameEnded", "Final scoring: the result (also in GameFinished).", result=nested(RESULT)
)

# -- view ---------------------------------------------------------------------
_Tile = schema(
    "NautilusIndustriesTile",
    "A zone tile: gems on it, the sub on each colour spot (a seat or null), upgrades.",
    gems=_by_colour(),
    subs=fields.Dict(keys=fields.String(), values=fields.Integer(strict=True, allow_none=True), required=True),
    upgrades=fields.Dict(keys=fields.String(), values=fields.String(allow_none=True), required=True),
    moved=boolean("Switched this round."),
)
_Player = schema(
    "NautilusIndustriesPlayer",
    "A seat's money, warehouse capacity, unused subs and gems held.",
    money=integer(),
    capacity=integer(),
    subs=integer(),
    gems=_by_colour(),
)
_Pending = schema(
    "NautilusIndustriesPending",
    "A half-done action of the seat to act.",
    kind=string(["upgrade", "switch"]),
    tile=integer(),
    colour=_colour(),
)
_Market = schema(
    "NautilusIndustriesMarket",
    "The market phase's progress.",
    position=integer(),
    next_index=integer(),
    seller=seat(allow_none=True),
    sold=_by_colour("The sold pool."),
)
VIEW = schema(
    "NautilusIndustriesView",
    "The whole Nautilus Industries state (nothing is hidden), plus `to_act` and multipliers.",
    n=integer("Player count."),
    round=integer(),
    phase=string(["setup", "action", "market", "upkeep", "over"]),
    first=seat(description="The first player."),
    line=listing(fields.Integer(strict=True), "Tile ids in line order."),
    tiles=listing(fields.Nested(_Tile), "By tile id."),
    bag=_by_colour("Gems in the bag."),
    markers=boolean(),
    commodity=_by_colour("Commodity value by colour (1-10)."),
    stock=_by_colour("Stock track space by company (0-24)."),
    certs=fields.Dict(
        keys=fields.String(),
        values=fields.List(fields.Integer(strict=True, allow_none=True)),
        required=True,
        metadata={"description": "By company: the owner seat of shares 1-6, or null (for sale)."},
    ),
    players=listing(fields.Nested(_Player), "By seat."),
    actions_done=integer(),
    pending=nested(_Pending, allow_none=True),
    market=nested(_Market, allow_none=True),
    locked=boolean("The game end has locked the tracks."),
    result=nested(RESULT, allow_none=True),
    forfeited=forfeited_field(),
    to_act=listing(fields.Integer(strict=True)),
    multipliers=_by_colour("Each company's multiplier now."),
    viewer=fields.Raw(
        required=True, allow_none=True, metadata={"description": "The seat, 'admin' or null (spectator)."}
    ),
)
