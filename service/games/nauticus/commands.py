"""Nauticus commands: the small atomic intents a seat sends (wire names in ``type``).

Placement fields shared by ``buy_item`` and ``transport``: ``to`` is ``"warehouse"``, ``"new_ship"`` or
``"ship"``; with ``"ship"``, ``ship`` is the ship's index in the player's shipyard and ``position`` the hull
index the tile goes to (for a hull part: 0 = joined at the bow end, len(hull) = joined at the stern end).
Unused fields are 0 (NAU-Q06).  Each command is one small step: one use of an action per intent (NAU-050).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from service.games.base import Command


@dataclass(frozen=True)
class ChooseAction(Command):
    """NAU-022, NAU-023: the start player chooses the face-up action tile on ``space`` and takes its bonus;
    ``bonus_item`` names the mast / sail / good of a tile bonus (NAU-031, NAU-032, NAU-035, NAU-Q02), else ""."""

    type: ClassVar[str] = "choose_action"
    space: int
    bonus_item: str = ""


@dataclass(frozen=True)
class PassAction(Command):
    """NAU-150, NAU-151: do not carry out the current action; turn a pass tile."""

    type: ClassVar[str] = "pass"


@dataclass(frozen=True)
class BuyItem(Command):
    """One use of a paid action (NAU-052): buy one item and put it into the warehouse or the shipyard."""

    type: ClassVar[str] = "buy_item"
    item: str
    to: str = "warehouse"
    ship: int = 0
    position: int = 0


@dataclass(frozen=True)
class TakeGift(Command):
    """NAU-055, NAU-Q03: the free item for buying all 4 types in one action (goes to the warehouse)."""

    type: ClassVar[str] = "take_gift"
    item: str


@dataclass(frozen=True)
class Transport(Command):
    """NAU-110: one use of transport: one tile from the warehouse into the shipyard."""

    type: ClassVar[str] = "transport"
    item: str
    to: str = "ship"
    ship: int = 0
    position: int = 0


@dataclass(frozen=True)
class WithdrawMoney(Command):
    """NAU-120: one use of withdraw money: +2 Taler."""

    type: ClassVar[str] = "withdraw_money"


@dataclass(frozen=True)
class DeliverGoods(Command):
    """NAU-130, NAU-131: deliver the whole cargo of one ship (1 use per good)."""

    type: ClassVar[str] = "deliver_goods"
    ship: int


@dataclass(frozen=True)
class ScoreCrowns(Command):
    """NAU-140, NAU-141: one use of score crowns: VP equal to the crowns owned, within the cap (NAU-142)."""

    type: ClassVar[str] = "score_crowns"


@dataclass(frozen=True)
class ChooseReward(Command):
    """NAU-161, NAU-162: one reward for a completed ship; ``goods`` names the 2 different goods of that reward
    in slot order (NAU-Q07)."""

    type: ClassVar[str] = "choose_reward"
    reward: str
    goods: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class UseExtraAction(Command):
    """NAU-170: play the extra-action tile: +2 workers (NAU-171), then carry out ``action`` (NAU-172)."""

    type: ClassVar[str] = "use_extra_action"
    action: str


@dataclass(frozen=True)
class EndExtraAction(Command):
    """NAU-A13: finish an extra action taken before the current action and go back to it."""

    type: ClassVar[str] = "end_extra_action"


@dataclass(frozen=True)
class EndTurn(Command):
    """Finish this turn (after at least one use of the current action, or after passing: NAU-Q05)."""

    type: ClassVar[str] = "end_turn"


COMMANDS: dict[str, type[Command]] = {
    c.type: c
    for c in (
        ChooseAction,
        PassAction,
        BuyItem,
        TakeGift,
        Transport,
        WithdrawMoney,
        DeliverGoods,
        ScoreCrowns,
        ChooseReward,
        UseExtraAction,
        EndExtraAction,
        EndTurn,
    )
}
