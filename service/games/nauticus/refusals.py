"""Every refusal of Nauticus: a stable code and the sentence a player reads.

One style for all of them: a sentence saying what is wrong or what to do instead, then the rules it rests on in
parentheses (IDs of ``docs/rules/nauticus.md``) when a rule applies.  :data:`TEXTS` holds every text by a reason
key; several reasons may share a code (the codes are the stable part, the texts may be reworded).  ``setup`` and
``rules.decide`` raise through :func:`refuse`; :func:`explain` finds the reason for a command that ``legal``
does not list, the most specific rule first.  Nauticus has no hidden information, so a refusal may name
anything.
"""

from __future__ import annotations

from typing import Any

from service.games.base import Command, RuleViolation, State
from service.games.nauticus import hulls
from service.games.nauticus.commands import (
    BuyItem,
    ChooseAction,
    ChooseReward,
    DeliverGoods,
    EndExtraAction,
    EndTurn,
    PassAction,
    ScoreCrowns,
    TakeGift,
    Transport,
    UseExtraAction,
    WithdrawMoney,
)
from service.games.nauticus.data import (
    ACTIONS,
    DELIVER_GOODS,
    GOODS,
    ITEMS_OF,
    REWARD_MAX_EACH,
    REWARDS,
    SCORE_CROWNS,
    SPACES,
    TRANSPORT,
    WITHDRAW_MONEY,
)
from service.games.nauticus.state import price, running_act

#: reason -> (code, text); ``{...}`` fields are filled in by :func:`refuse`.
TEXTS: dict[str, tuple[str, str]] = {
    # --- setup and any time
    "invalid_player_count": ("invalid_player_count", "Nauticus is for {low} to {high} players (NAU-001)."),
    "invalid_options": ("invalid_options", "Nauticus has no options (NAU-Q08)."),
    "game_over": ("game_over", "The game is over (NAU-183)."),
    "unknown_command": ("unknown_command", "Nauticus does not know that command."),
    "not_your_turn": (
        "not_your_turn",
        "It is not your turn: the start player chooses, then everyone acts in turn clockwise (NAU-022, NAU-025).",
    ),
    "illegal_command": ("illegal_command", "That command is not possible now (NAU-025)."),
    # --- choosing the action
    "choose_action_first": ("choose_action_first", "The start player must first choose an action tile (NAU-022)."),
    "invalid_space": ("invalid_space", "Action spaces are numbered 0 to 7 (NAU-006)."),
    "tile_face_down": ("tile_face_down", "That action tile is face down for the rest of the round (NAU-026)."),
    "invalid_bonus_item": (
        "invalid_bonus_item",
        "Name one regular mast, sail or good that can go into your warehouse as the bonus; leave it empty only "
        "when none can be received, or for a bonus without a tile (NAU-031, NAU-032, NAU-035, NAU-038, NAU-Q02).",
    ),
    "action_already_chosen": (
        "action_already_chosen",
        "An action is being carried out; wait for the next phase (NAU-022).",
    ),
    # --- rewards
    "reward_pending": ("reward_pending", "A ship was completed: choose its rewards first (NAU-161)."),
    "unknown_reward": ("invalid_reward", "The rewards are {rewards} (NAU-162)."),
    "reward_limit": ("reward_limit", "Each reward may be taken at most {limit} times per completed ship (NAU-163)."),
    "reward_goods": (
        "invalid_reward",
        "The goods reward is 2 different goods, named in slot order: coffee, grain, fish, salt (NAU-162, NAU-Q07).",
    ),
    "reward_unavailable": (
        "reward_unavailable",
        "That reward's tiles cannot be received: the stack is empty or the warehouse full (NAU-A06, NAU-003, NAU-113).",
    ),
    "reward_without_goods": ("invalid_reward", "Only the goods reward names goods (NAU-162)."),
    "no_reward_pending": ("no_reward_pending", "Rewards come only when a ship is completed (NAU-161)."),
    # --- the gift
    "gift_pending": ("gift_pending", "Take the gift for buying all 4 types first (NAU-055, NAU-Q03)."),
    "gift_item": ("invalid_item", "The gift is a regular item of the tile you bought from (NAU-055)."),
    "stack_empty": ("stack_empty", "That stack is empty (NAU-003)."),
    "gift_no_room": (
        "warehouse_full",
        "The gift goes to the warehouse, which has no room for it (NAU-057, NAU-113).",
    ),
    "no_gift": (
        "no_gift",
        "A gift comes only for buying all 4 types in one action, and only once (NAU-055, NAU-056).",
    ),
    # --- the extra action, passing, ending
    "extra_tile_gone": ("extra_action_used", "Your extra-action tile has already been used (NAU-175)."),
    "extra_this_turn": ("extra_action_used", "The extra action was already used this turn (NAU-170)."),
    "invalid_action": ("invalid_action", "Choose one of the 8 actions (NAU-172)."),
    "extra_action_unusable": (
        "extra_action_unusable",
        "That action could not be used even once as the extra action now (NAU-Q04).",
    ),
    "cannot_pass": (
        "cannot_pass",
        "You can pass only instead of carrying out the action, before using it (NAU-150, NAU-A01).",
    ),
    "no_use_made": (
        "no_use_made",
        "Carry out the action at least once or pass; an extra action must be used at least once (NAU-A01, NAU-Q04).",
    ),
    "no_extra_action": (
        "no_extra_action",
        "There is no extra action before the board action to end (NAU-A13).",
    ),
    "finish_extra_action": (
        "finish_extra_action",
        "End the extra action first, then carry out or pass the action (NAU-A13).",
    ),
    # --- uses of an action
    "action_finished": (
        "action_finished",
        "You have finished (or passed) this action; end your turn (NAU-025, NAU-Q05).",
    ),
    "wrong_action": ("wrong_action", "The action being carried out is {action} (NAU-025, NAU-172)."),
    "no_workers": ("no_workers", "Every use needs a worker, and you have none left (NAU-050, NAU-043)."),
    "no_such_ship": ("no_such_ship", "There is no such ship in your shipyard (NAU-Q06)."),
    "ship_not_complete": ("ship_not_complete", "Only a completed ship can deliver (NAU-130)."),
    "ship_not_loaded": (
        "ship_not_loaded",
        "A ship delivers only with a good under every hull part (NAU-130, NAU-131).",
    ),
    "delivery_workers": ("no_workers", "Delivering needs 1 worker per good of the ship (NAU-131)."),
    "invalid_destination": (
        "invalid_destination",
        "The destination to is warehouse, new_ship or ship; ship and position are given only with ship (NAU-Q06).",
    ),
    "not_for_sale": ("invalid_item", "The {action} action sells only {items} (NAU-052, NAU-080, NAU-090)."),
    "insufficient_funds": ("insufficient_funds", "That item costs {price} Taler now (NAU-052, NAU-054)."),
    "warehouse_full": (
        "warehouse_full",
        "Your warehouse has no room for it; masts need 2 spaces (NAU-111, NAU-113).",
    ),
    "golden_rule": (
        "golden_rule",
        "A tile bought for 0 Taler is free and must go to the warehouse first (NAU-057, NAU-059).",
    ),
    "buy_placement": (
        "illegal_placement",
        "That shipyard position is not legal for it (NAU-060, NAU-072, NAU-073, NAU-074, NAU-081, NAU-082, "
        "NAU-091, NAU-092, NAU-093, NAU-101).",
    ),
    "not_in_warehouse": ("not_in_warehouse", "Transport moves a tile that is in your warehouse (NAU-110)."),
    "transport_placement": (
        "illegal_placement",
        "That shipyard position is not legal for it (NAU-110, NAU-072, NAU-073, NAU-074, NAU-081, NAU-082, "
        "NAU-091, NAU-092, NAU-093, NAU-101, NAU-102).",
    ),
}

_DESTINATIONS = ("warehouse", "new_ship", "ship")


def refuse(reason: str, **fields: Any) -> RuleViolation:
    """The :class:`RuleViolation` for ``reason`` (a key of :data:`TEXTS`), its text filled in with ``fields``."""
    code, text = TEXTS[reason]
    return RuleViolation(code, text.format(**fields))


def explain(state: State, s: int, cmd: Command) -> RuleViolation:
    """Why ``cmd``, which ``legal`` does not list for seat ``s`` (who is to act), is refused."""
    step = state["step"]
    seat = state["seats"][s]
    if step == "choose":
        if not isinstance(cmd, ChooseAction):
            return refuse("choose_action_first")
        if not 0 <= cmd.space < SPACES:
            return refuse("invalid_space")
        if state["face_down"][cmd.space]:
            return refuse("tile_face_down")
        return refuse("invalid_bonus_item")
    if isinstance(cmd, ChooseAction):
        return refuse("action_already_chosen")
    turn = state["turn"]
    rewards = turn["rewards"]
    if rewards is not None:
        if not isinstance(cmd, ChooseReward):
            return refuse("reward_pending")
        if cmd.reward not in REWARDS:
            return refuse("unknown_reward", rewards=", ".join(REWARDS))
        if rewards["taken"].get(cmd.reward, 0) >= REWARD_MAX_EACH:
            return refuse("reward_limit", limit=REWARD_MAX_EACH)
        if cmd.reward == "goods" and (
            len(cmd.goods) != 2
            or not set(cmd.goods) <= set(GOODS)
            or GOODS.index(cmd.goods[0]) >= GOODS.index(cmd.goods[1])
        ):
            return refuse("reward_goods")
        if cmd.reward in ("crown_mast", "crown_sail", "goods"):
            return refuse("reward_unavailable")
        return refuse("reward_without_goods")
    if isinstance(cmd, ChooseReward):
        return refuse("no_reward_pending")
    act = running_act(turn)
    if act is not None and act["gift"] == 1:
        if not isinstance(cmd, TakeGift):
            return refuse("gift_pending")
        if cmd.item not in ITEMS_OF[act["action"]]:
            return refuse("gift_item")
        if state["stacks"][cmd.item] <= 0:
            return refuse("stack_empty")
        return refuse("gift_no_room")
    if isinstance(cmd, TakeGift):
        return refuse("no_gift")
    if isinstance(cmd, UseExtraAction):
        if not seat["extra_tile"]:
            return refuse("extra_tile_gone")
        if turn["extra"] is not None:
            return refuse("extra_this_turn")
        if cmd.action not in ACTIONS:
            return refuse("invalid_action")
        return refuse("extra_action_unusable")
    if isinstance(cmd, PassAction):
        return refuse("cannot_pass")
    if isinstance(cmd, EndTurn | EndExtraAction):
        if act is not None and act["uses"] == 0:
            return refuse("no_use_made")
        if isinstance(cmd, EndExtraAction):
            return refuse("no_extra_action")
        return refuse("finish_extra_action")
    return _explain_use(state, seat, act, cmd)


def _explain_use(state: State, seat: dict[str, Any], act: dict[str, Any] | None, cmd: Command) -> RuleViolation:
    """Why one use of an action (buy, transport, withdraw, deliver, score) is refused."""
    wanted = {
        BuyItem: None,
        Transport: TRANSPORT,
        WithdrawMoney: WITHDRAW_MONEY,
        DeliverGoods: DELIVER_GOODS,
        ScoreCrowns: SCORE_CROWNS,
    }.get(type(cmd), "?")
    if wanted == "?":
        return refuse("illegal_command")
    if act is None:
        return refuse("action_finished")
    action = act["action"]
    if (wanted is None and action not in ITEMS_OF) or (wanted is not None and wanted != action):
        return refuse("wrong_action", action=action)
    if not act["blue"] and not seat["workers"]:
        return refuse("no_workers")
    if isinstance(cmd, DeliverGoods):
        if not 0 <= cmd.ship < len(seat["ships"]):
            return refuse("no_such_ship")
        ship = seat["ships"][cmd.ship]
        if not ship["complete"]:
            return refuse("ship_not_complete")
        if not hulls.is_loaded(ship):
            return refuse("ship_not_loaded")
        return refuse("delivery_workers")
    if isinstance(cmd, BuyItem | Transport) and (
        cmd.to not in _DESTINATIONS or (cmd.to != "ship" and (cmd.ship or cmd.position))
    ):
        return refuse("invalid_destination")
    if isinstance(cmd, BuyItem):
        if cmd.item not in ITEMS_OF[action]:
            return refuse("not_for_sale", action=action, items=", ".join(ITEMS_OF[action]))
        if state["stacks"][cmd.item] <= 0:
            return refuse("stack_empty")
        p = price(state, act, cmd.item)
        if seat["taler"] < p:
            return refuse("insufficient_funds", price=p)
        if cmd.to == "warehouse":
            return refuse("warehouse_full")
        if p == 0:
            return refuse("golden_rule")
        return refuse("buy_placement")
    if isinstance(cmd, Transport):
        if seat["warehouse"].get(cmd.item, 0) <= 0:
            return refuse("not_in_warehouse")
        return refuse("transport_placement")
    return refuse("illegal_command")
