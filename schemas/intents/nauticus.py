"""Intent schemas for Nauticus: one per command type; ``post_load`` builds the engine's command."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, post_load, validate

from service.games.base import Command
from service.games.nauticus import commands as C
from service.games.nauticus import data as D

_BUYABLE = [*D.HULL_PARTS, *D.MASTS, *D.SAILS, *D.GOODS]
_DESTINATIONS = ["warehouse", "new_ship", "ship"]
_MAX_SHIPS = 200  # far above what the stacks allow (NAU-002)


def _item(choices: list[str]) -> fields.String:
    return fields.String(required=True, validate=validate.OneOf(choices))


def _to() -> fields.String:
    return fields.String(required=True, validate=validate.OneOf(_DESTINATIONS))


def _ship(required: bool = False) -> fields.Integer:
    """A ship number; 0 may be left out where it is unused (to "warehouse" / "new_ship")."""
    if required:
        return fields.Integer(required=True, strict=True, validate=validate.Range(min=0, max=_MAX_SHIPS))
    return fields.Integer(load_default=0, strict=True, validate=validate.Range(min=0, max=_MAX_SHIPS))


def _position() -> fields.Integer:
    """A hull index: 0..3 (NAU-072: at most 4 hull parts)."""
    return fields.Integer(load_default=0, strict=True, validate=validate.Range(min=0, max=3))


class _CommandSchema(Schema):
    command: type[Command]

    @post_load
    def make(self, data: dict[str, Any], **_: Any) -> Command:
        return self.command(**data)


class ChooseActionSchema(_CommandSchema):
    command = C.ChooseAction
    space = fields.Integer(required=True, strict=True, validate=validate.Range(min=0, max=D.SPACES - 1))
    bonus_item = fields.String(load_default="", validate=validate.OneOf(["", *D.MASTS, *D.SAILS, *D.GOODS]))


class PassActionSchema(_CommandSchema):
    command = C.PassAction


class BuyItemSchema(_CommandSchema):
    command = C.BuyItem
    item = _item(_BUYABLE)
    to = _to()
    ship = _ship()
    position = _position()


class TakeGiftSchema(_CommandSchema):
    command = C.TakeGift
    item = _item(_BUYABLE)


class TransportSchema(_CommandSchema):
    command = C.Transport
    item = _item(D.ALL_ITEMS)
    to = _to()
    ship = _ship()
    position = _position()


class WithdrawMoneySchema(_CommandSchema):
    command = C.WithdrawMoney


class DeliverGoodsSchema(_CommandSchema):
    command = C.DeliverGoods
    ship = _ship(required=True)


class ScoreCrownsSchema(_CommandSchema):
    command = C.ScoreCrowns


class ChooseRewardSchema(_CommandSchema):
    command = C.ChooseReward
    reward = fields.String(required=True, validate=validate.OneOf(D.REWARDS))
    goods = fields.List(
        fields.String(validate=validate.OneOf(D.GOODS)), load_default=list, validate=validate.Length(max=2)
    )


class UseExtraActionSchema(_CommandSchema):
    command = C.UseExtraAction
    action = fields.String(required=True, validate=validate.OneOf(D.ACTIONS))


class EndExtraActionSchema(_CommandSchema):
    command = C.EndExtraAction


class EndTurnSchema(_CommandSchema):
    command = C.EndTurn


SCHEMAS: dict[str, type[Schema]] = {
    C.ChooseAction.type: ChooseActionSchema,
    C.PassAction.type: PassActionSchema,
    C.BuyItem.type: BuyItemSchema,
    C.TakeGift.type: TakeGiftSchema,
    C.Transport.type: TransportSchema,
    C.WithdrawMoney.type: WithdrawMoneySchema,
    C.DeliverGoods.type: DeliverGoodsSchema,
    C.ScoreCrowns.type: ScoreCrownsSchema,
    C.ChooseReward.type: ChooseRewardSchema,
    C.UseExtraAction.type: UseExtraActionSchema,
    C.EndExtraAction.type: EndExtraActionSchema,
    C.EndTurn.type: EndTurnSchema,
}
