"""Who is to act (``to_act``) and every command a seat may send now (``legal``).

``decide`` accepts exactly what ``legal`` lists (``rules.decide`` looks the command up here), so every rule that
allows or forbids a command lives in this module; ``refusals.explain`` only says why something is missing.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from service.games.base import Command, State
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
    BONUS_ITEMS,
    BONUSES,
    CROWN_MAST,
    CROWN_SAIL,
    DELIVER_GOODS,
    EXTRA_PRICE,
    EXTRA_WORKERS,
    GOODS,
    ITEMS_OF,
    REWARD_MAX_EACH,
    REWARDS,
    SIZE,
    SPACES,
    TRANSPORT,
    WAREHOUSE_CAPACITY,
    WITHDRAW_MONEY,
)
from service.games.nauticus.state import extra_available, fits, price, running_act

_WITHDRAW = WithdrawMoney()
_SCORE = ScoreCrowns()
_PASS = PassAction()
_END_TURN = EndTurn()
_END_EXTRA = EndExtraAction()


def to_act(state: State) -> list[int]:
    """NAU-022: the start player chooses; NAU-025: then each player in turn, clockwise; nobody once it is over."""
    step = state["step"]
    if step == "choose":
        return [state["start_player"]]
    if step == "act":
        return [state["acting"]]
    return []


def _choose_options(state: State, seat: dict[str, Any]) -> list[Command]:
    """NAU-022, NAU-A19: the start player must choose a face-up tile (NAU-026: not one turned this round)."""
    out: list[Command] = []
    stacks = state["stacks"]
    for space in range(SPACES):
        if state["face_down"][space]:
            continue
        kind = BONUSES[space].get("item")
        if kind is None:
            out.append(ChooseAction(space, ""))
            continue
        items = [i for i in BONUS_ITEMS[kind] if stacks[i] > 0 and fits(seat, i)]
        if items:  # NAU-Q02: a bonus tile that can be received is taken
            out.extend(ChooseAction(space, i) for i in items)
        else:  # NAU-038, NAU-A06: forfeited (NAU-003: an empty stack gives nothing)
            out.append(ChooseAction(space, ""))
    return out


def _uses(state: State, seat: dict[str, Any], act: dict[str, Any], only: str | None = None) -> list[Command]:
    """Every single use of the running action possible now.  ``only`` restricts bought/transported tiles to that
    item (``decide`` checks one command).

    NAU-050: each use needs a worker, blue or own; NAU-051: any number of uses while workers, Taler and stacks
    last (each use is checked when it is made, NAU-A17)."""
    if not act["blue"] and not seat["workers"]:
        return []
    action = act["action"]
    out: list[Command] = []
    if action in ITEMS_OF:
        stacks = state["stacks"]
        taler = seat["taler"]
        for item in ITEMS_OF[action]:
            if stacks[item] <= 0 or (only is not None and item != only):  # NAU-003
                continue
            p = price(state, act, item)
            if taler < p:
                continue
            # NAU-060, NAU-A05: a purchase needs a destination, the warehouse or the shipyard.
            if fits(seat, item):
                out.append(BuyItem(item, "warehouse", 0, 0))
            # NAU-057, NAU-059: a tile paid with 0 Taler is free and goes to the warehouse first; NAU-058 (and
            # NAU-083, NAU-094, NAU-101 for masts, sails, goods): one paid with >= 1 Taler may go straight
            # to the shipyard.
            if p > 0:
                for to, k, pos in hulls.positions(seat["ships"], item):
                    out.append(BuyItem(item, to, k, pos))
    elif action == TRANSPORT:
        # NAU-110: one warehouse tile per use; tiles already in the shipyard never move (NAU-076, NAU-103).
        for item in seat["warehouse"]:
            if only is not None and item != only:
                continue
            for to, k, pos in hulls.positions(seat["ships"], item):
                out.append(Transport(item, to, k, pos))
    elif action == WITHDRAW_MONEY:
        out.append(_WITHDRAW)  # NAU-120
    elif action == DELIVER_GOODS:
        # NAU-130: complete and fully loaded; NAU-131: workers for the whole cargo; NAU-132: any number of ships.
        workers = act["blue"] + seat["workers"]
        for k, ship in enumerate(seat["ships"]):
            if ship["complete"] and hulls.is_loaded(ship) and len(ship["hull"]) <= workers:
                out.append(DeliverGoods(k))
    else:
        out.append(_SCORE)  # NAU-141: always possible, even beyond the cap (NAU-A11: it then gives nothing)
    return out


def _extra_feasible(state: State, seat: dict[str, Any], action: str) -> bool:
    """NAU-Q04: at least one use of ``action`` is possible once the 2 extra workers are taken (NAU-171)."""
    if action in ITEMS_OF:
        if seat["taler"] < EXTRA_PRICE:
            return False
        for item in ITEMS_OF[action]:
            if state["stacks"][item] > 0 and (fits(seat, item) or hulls.positions(seat["ships"], item)):
                return True
        return False
    if action == TRANSPORT:
        return any(hulls.positions(seat["ships"], item) for item in seat["warehouse"])
    if action == DELIVER_GOODS:
        workers = seat["workers"] + EXTRA_WORKERS
        return any(s["complete"] and hulls.is_loaded(s) and len(s["hull"]) <= workers for s in seat["ships"])
    return True


def _extra_options(state: State, seat: dict[str, Any]) -> list[Command]:
    """NAU-172: any of the 8 actions, face down or not."""
    return [UseExtraAction(a) for a in ACTIONS if _extra_feasible(state, seat, a)]


def _reward_options(state: State, seat: dict[str, Any], rewards: dict[str, Any]) -> list[Command]:
    """NAU-162, NAU-163: each reward at most twice per ship; NAU-A06: tile rewards only if they can be received
    (NAU-003, NAU-113); NAU-Q07: the goods pair in slot order."""
    out: list[Command] = []
    taken = rewards["taken"]
    stacks = state["stacks"]
    free = WAREHOUSE_CAPACITY - seat["wh_used"]
    for reward in REWARDS:
        if taken.get(reward, 0) >= REWARD_MAX_EACH:
            continue
        if reward == "crown_mast":
            if stacks[CROWN_MAST] > 0 and free >= SIZE[CROWN_MAST]:
                out.append(ChooseReward(reward, []))
        elif reward == "crown_sail":
            if stacks[CROWN_SAIL] > 0 and free >= SIZE[CROWN_SAIL]:
                out.append(ChooseReward(reward, []))
        elif reward == "goods":
            if free >= 2:
                for a, b in combinations(GOODS, 2):
                    if stacks[a] > 0 and stacks[b] > 0:
                        out.append(ChooseReward(reward, [a, b]))
        else:
            out.append(ChooseReward(reward, []))
    return out


def gift_options(state: State, seat: dict[str, Any], act: dict[str, Any]) -> list[Command]:
    """NAU-055: one more item of that tile's category, of the player's choice, into the warehouse (NAU-057)."""
    stacks = state["stacks"]
    return [TakeGift(i) for i in ITEMS_OF[act["action"]] if stacks[i] > 0 and fits(seat, i)]


def legal(state: State, seat_index: int, focus: Command | None = None) -> list[Command]:
    """Every command ``seat_index`` may send now.  With ``focus`` (used by ``decide``) the list may leave
    out commands of other kinds than ``focus``; it never leaves out one equal to it."""
    step = state["step"]
    if step == "choose":
        if seat_index != state["start_player"]:
            return []
        return _choose_options(state, state["seats"][seat_index])
    if step != "act" or seat_index != state["acting"]:
        return []
    seat = state["seats"][seat_index]
    turn = state["turn"]
    if turn["rewards"] is not None:  # NAU-161: the turn is interrupted for the rewards
        return _reward_options(state, seat, turn["rewards"])
    act = running_act(turn)
    if act is None:  # the board action is over (passed or finished); only the extra action may follow (NAU-Q05)
        out: list[Command] = _extra_options(state, seat) if extra_available(seat, turn) else []
        out.append(_END_TURN)
        return out
    if act["gift"] == 1:  # NAU-Q03: the gift comes first
        return gift_options(state, seat, act)
    if focus is None:
        out = _uses(state, seat, act)
    elif isinstance(focus, BuyItem | Transport):
        out = _uses(state, seat, act, focus.item)
    elif isinstance(focus, WithdrawMoney | DeliverGoods | ScoreCrowns):
        out = _uses(state, seat, act)
    else:
        out = []
    extras = focus is None or isinstance(focus, UseExtraAction)
    if act["is_extra"]:
        if act["uses"]:  # NAU-Q04: an extra action is used at least once
            out.append(_END_TURN if turn["main"]["done"] else _END_EXTRA)
        return out
    if act["uses"]:
        out.append(_END_TURN)  # NAU-Q05
    else:
        out.append(_PASS)  # NAU-150, NAU-A01: pass instead of carrying out, before any use
    # NAU-170, NAU-A13: the extra action before the board action or after it, never between two of its uses
    # (playing it after a use ends the board action).
    if extras and extra_available(seat, turn):
        out.extend(_extra_options(state, seat))
    return out
