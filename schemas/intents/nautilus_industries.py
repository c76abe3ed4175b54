"""Intent schemas for Nautilus Industries (one per command type, NIN-Q03)."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, post_load, validate

from service.games.nautilus_industries import commands as C
from service.games.nautilus_industries import data as D

_colour = validate.OneOf(D.COLOURS)
_tile = validate.Range(min=0, max=D.MAX_PLAYERS - 1)


def _colour_field() -> fields.String:
    return fields.String(required=True, validate=_colour)


def _tile_field() -> fields.Integer:
    return fields.Integer(required=True, strict=True, validate=_tile)


class _CommandSchema(Schema):
    command: type[C.Command]

    @post_load
    def make(self, data: dict[str, Any], **_: Any) -> C.Command:
        return self.command(**data)


class PlaceSubSchema(_CommandSchema):
    command = C.PlaceSub
    tile = _tile_field()
    colour = _colour_field()


class UpgradeSubSchema(_CommandSchema):
    command = C.UpgradeSub
    colour = _colour_field()


class DeclineUpgradeSchema(_CommandSchema):
    command = C.DeclineUpgrade


class UpgradeWarehouseSchema(_CommandSchema):
    command = C.UpgradeWarehouse


class SwitchGemFromSchema(_CommandSchema):
    command = C.SwitchGemFrom
    tile = _tile_field()
    colour = _colour_field()


class SwitchGemWithSchema(_CommandSchema):
    command = C.SwitchGemWith
    tile = _tile_field()
    colour = _colour_field()


class SwitchTilesSchema(_CommandSchema):
    command = C.SwitchTiles
    tile_a = _tile_field()
    tile_b = _tile_field()


class BuyStockSchema(_CommandSchema):
    command = C.BuyStock
    company = _colour_field()
    shares = fields.Integer(required=True, strict=True, validate=validate.OneOf(D.SHARES))


class SellSchema(_CommandSchema):
    command = C.Sell
    colour = _colour_field()
    # 100 gems exist in all (NIN-002); a hand is far smaller, the engine checks the real count.
    count = fields.Integer(required=True, strict=True, validate=validate.Range(min=1, max=100))


class HoldSchema(_CommandSchema):
    command = C.Hold


SCHEMAS: dict[str, type[Schema]] = {
    C.PlaceSub.type: PlaceSubSchema,
    C.UpgradeSub.type: UpgradeSubSchema,
    C.DeclineUpgrade.type: DeclineUpgradeSchema,
    C.UpgradeWarehouse.type: UpgradeWarehouseSchema,
    C.SwitchGemFrom.type: SwitchGemFromSchema,
    C.SwitchGemWith.type: SwitchGemWithSchema,
    C.SwitchTiles.type: SwitchTilesSchema,
    C.BuyStock.type: BuyStockSchema,
    C.Sell.type: SellSchema,
    C.Hold.type: HoldSchema,
}

assert set(SCHEMAS) == set(C.COMMANDS), "one schema per command"
