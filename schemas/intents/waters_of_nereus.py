"""Intent schemas for Waters of Nereus: one marshmallow schema per command (unknown fields refused)."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, post_load, validate

from service.games.waters_of_nereus import commands as c
from service.games.waters_of_nereus import data

_CREW = validate.OneOf(data.CREWS)
_DIRECTION = validate.OneOf(data.COMPASS)
_COLOUR = validate.OneOf(data.COLOURS)
_PIECE = validate.OneOf([*data.COLOURS, data.GEM])
_AREA = validate.OneOf(["storage", "chest", "hold"])
_HOLD_CREW = validate.OneOf(["", *data.CREWS])
_CARD = validate.OneOf(sorted(data.SCIENCE_CARDS))
_SPACE = validate.Range(min=1, max=max(data.SPACES_PER_ROW.values()))
_CELL = validate.Range(min=0, max=max(data.BOARD_SIZE.values()) - 1)
_SLOT = validate.Range(min=0, max=max(len(h) for h in data.HOLDS.values()) - 1)


def _schema(command: type[c.Command], **schema_fields: fields.Field) -> type[Schema]:
    """A schema whose load builds ``command`` from exactly ``schema_fields``."""

    def make(self: Schema, payload: dict[str, Any], **kwargs: Any) -> c.Command:
        return command(**payload)

    attrs: dict[str, Any] = dict(schema_fields)
    attrs["make"] = post_load(make)
    return type(f"{command.__name__}Schema", (Schema,), attrs)


ChooseCornerSchema = _schema(
    c.ChooseCorner, corner=fields.Integer(required=True, strict=True, validate=validate.Range(0, 3))
)
ChooseCrewSchema = _schema(c.ChooseCrew, crew=fields.String(required=True, validate=_CREW))
PlaceMarkerSchema = _schema(c.PlaceMarker, space=fields.Integer(required=True, strict=True, validate=_SPACE))
SailShipSchema = _schema(c.SailShip, direction=fields.String(required=True, validate=_DIRECTION))
DropAnchorSchema = _schema(c.DropAnchor)
ExploreSchema = _schema(
    c.Explore,
    row=fields.Integer(required=True, strict=True, validate=_CELL),
    col=fields.Integer(required=True, strict=True, validate=_CELL),
    treasure=fields.String(required=True, validate=_COLOUR),
)
PerformActionSchema = _schema(
    c.PerformAction, option=fields.String(load_default="", validate=validate.OneOf(["", "science", "card"]))
)
BuyMovesSchema = _schema(c.BuyMoves, spaces=fields.Integer(required=True, strict=True, validate=validate.OneOf([1, 2])))
BuyTurnsSchema = _schema(c.BuyTurns)
BuyTreasureMoveSchema = _schema(c.BuyTreasureMove)
BuyTreasureSchema = _schema(c.BuyTreasure)
BuyVpSchema = _schema(c.BuyVp)
BuyResearchSchema = _schema(
    c.BuyResearch, option=fields.String(required=True, validate=validate.OneOf(["science", "card"]))
)
DrawScienceEnhancedSchema = _schema(c.DrawScienceEnhanced)
DiscardScienceSchema = _schema(c.DiscardScience, card=fields.String(required=True, validate=_CARD))
PlayScienceSchema = _schema(c.PlayScience, card=fields.String(required=True, validate=_CARD))
PlaceTreasureSchema = _schema(
    c.PlaceTreasure,
    treasure=fields.String(required=True, validate=_PIECE),
    area=fields.String(required=True, validate=_AREA),
    crew=fields.String(load_default="", validate=_HOLD_CREW),
    slot=fields.Integer(load_default=0, strict=True, validate=_SLOT),
)
UnloadTreasureSchema = _schema(
    c.UnloadTreasure,
    treasure=fields.String(required=True, validate=_PIECE),
    area=fields.String(required=True, validate=validate.OneOf(["storage", "hold"])),
    crew=fields.String(load_default="", validate=_HOLD_CREW),
    slot=fields.Integer(load_default=0, strict=True, validate=_SLOT),
)
TakeGemSchema = _schema(c.TakeGem)
ExchangeTreasuresSchema = _schema(c.ExchangeTreasures, treasure=fields.String(required=True, validate=_COLOUR))
SellTreasureSchema = _schema(c.SellTreasure, treasure=fields.String(required=True, validate=_PIECE))
EndTurnSchema = _schema(c.EndTurn)
TakeExplorerTurnSchema = _schema(c.TakeExplorerTurn, crew=fields.String(required=True, validate=_CREW))
DeclineExplorerTurnSchema = _schema(c.DeclineExplorerTurn)
FinishScoringSchema = _schema(c.FinishScoring)

SCHEMAS: dict[str, type[Schema]] = {
    "choose_corner": ChooseCornerSchema,
    "choose_crew": ChooseCrewSchema,
    "place_marker": PlaceMarkerSchema,
    "sail_ship": SailShipSchema,
    "drop_anchor": DropAnchorSchema,
    "explore": ExploreSchema,
    "perform_action": PerformActionSchema,
    "buy_moves": BuyMovesSchema,
    "buy_turns": BuyTurnsSchema,
    "buy_treasure_move": BuyTreasureMoveSchema,
    "buy_treasure": BuyTreasureSchema,
    "buy_vp": BuyVpSchema,
    "buy_research": BuyResearchSchema,
    "draw_science_enhanced": DrawScienceEnhancedSchema,
    "discard_science": DiscardScienceSchema,
    "play_science": PlayScienceSchema,
    "place_treasure": PlaceTreasureSchema,
    "unload_treasure": UnloadTreasureSchema,
    "take_gem": TakeGemSchema,
    "exchange_treasures": ExchangeTreasuresSchema,
    "sell_treasure": SellTreasureSchema,
    "end_turn": EndTurnSchema,
    "take_explorer_turn": TakeExplorerTurnSchema,
    "decline_explorer_turn": DeclineExplorerTurnSchema,
    "finish_scoring": FinishScoringSchema,
}
assert set(SCHEMAS) == set(c.COMMANDS), "every command has a schema"
