"""What a seat may do now (``legal``) and what a command causes (``decide``).

``decide`` accepts exactly the commands ``legal`` lists: it looks the command up in that list, and only
when it is missing asks :func:`_diagnose` for the rule that refuses it.  Follow-up events that need no choice
(ship completion, forfeited gift, end of turn / phase / round, layout draw, final scoring) are found by
folding the command's events into a copy of the state and asking :func:`_auto` until it has nothing to add.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from service.games.base import Command, Event, RuleViolation, State, clone_state
from service.games.nauticus import hulls
from service.games.nauticus.commands import (
    COMMANDS,
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
    CROWN_CAP,
    CROWN_MAST,
    CROWN_SAIL,
    DELIVER_GOODS,
    EXTRA_PRICE,
    EXTRA_WORKERS,
    GOODS,
    ITEMS_OF,
    PASS_TILES,
    PRICES,
    REPEAT_PRICE,
    REWARD_MAX_EACH,
    REWARDS,
    SCORE_CROWNS,
    SIZE,
    SPACES,
    TRANSPORT,
    TURNTABLE,
    WAREHOUSE_CAPACITY,
    WITHDRAW_MONEY,
    WITHDRAW_TALER,
)
from service.games.nauticus.scoring import crowns, final_result
from service.games.nauticus.state import evolve, running_act
from service.games.rng import Rng

_WITHDRAW = WithdrawMoney()
_SCORE = ScoreCrowns()
_PASS = PassAction()
_END_TURN = EndTurn()
_END_EXTRA = EndExtraAction()
_DESTINATIONS = ("warehouse", "new_ship", "ship")


# --- small helpers shared by legal, decide and the diagnosis ---------------------------------------------


def blue_at(state: State, space: int) -> int:
    """NAU-040/NAU-184: blue workers at a space = the turntable segment pointing at it."""
    return TURNTABLE[(space - state["turntable_anchor"]) % SPACES]


def fits(seat: dict[str, Any], item: str) -> bool:
    """NAU-111/113: room in the warehouse (masts take 2 spaces)."""
    return WAREHOUSE_CAPACITY - seat["wh_used"] >= SIZE[item]


def price(state: State, act: dict[str, Any], item: str) -> int:
    """NAU-052/053/054/173: printed price (or 2 in the extra action) for the first copy, 4 for the others."""
    if act["bought"].get(item):
        return REPEAT_PRICE
    if act["is_extra"]:
        return EXTRA_PRICE
    return PRICES[state["space"]][ITEMS_OF[act["action"]].index(item)]


def to_act(state: State) -> list[int]:
    step = state["step"]
    if step == "choose":
        return [state["start_player"]]
    if step == "act":
        return [state["acting"]]
    return []


def extra_available(seat: dict[str, Any], turn: dict[str, Any]) -> bool:
    """NAU-170: once per game (tile still held), once in this turn."""
    return seat["extra_tile"] and turn["extra"] is None


# --- legal ------------------------------------------------------------------------------------------------


def _choose_options(state: State, seat: dict[str, Any]) -> list[Command]:
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
        else:  # NAU-038: forfeited
            out.append(ChooseAction(space, ""))
    return out


def _uses(state: State, seat: dict[str, Any], act: dict[str, Any], only: str | None = None) -> list[Command]:
    """Every single use of the running action possible now (NAU-050: each needs a worker).  ``only``
    restricts bought/transported tiles to that item (``decide`` checks one command)."""
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
            if fits(seat, item):
                out.append(BuyItem(item, "warehouse", 0, 0))
            if p > 0:  # NAU-057/058: only a tile paid with >= 1 Taler may go straight to the shipyard
                for to, k, pos in hulls.positions(seat["ships"], item):
                    out.append(BuyItem(item, to, k, pos))
    elif action == TRANSPORT:
        for item in seat["warehouse"]:
            if only is not None and item != only:
                continue
            for to, k, pos in hulls.positions(seat["ships"], item):
                out.append(Transport(item, to, k, pos))
    elif action == WITHDRAW_MONEY:
        out.append(_WITHDRAW)
    elif action == DELIVER_GOODS:
        workers = act["blue"] + seat["workers"]
        for k, ship in enumerate(seat["ships"]):
            if ship["complete"] and hulls.is_loaded(ship) and len(ship["hull"]) <= workers:
                out.append(DeliverGoods(k))
    else:
        out.append(_SCORE)
    return out


def _extra_feasible(state: State, seat: dict[str, Any], action: str) -> bool:
    """NAU-Q04: at least one use of ``action`` is possible once the 2 extra workers are taken."""
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
    return [UseExtraAction(a) for a in ACTIONS if _extra_feasible(state, seat, a)]


def _reward_options(state: State, seat: dict[str, Any], rewards: dict[str, Any]) -> list[Command]:
    """NAU-162/163 and NAU-A06: each reward at most twice per ship, tile rewards only if they can be received."""
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


def _gift_options(state: State, seat: dict[str, Any], act: dict[str, Any]) -> list[Command]:
    """NAU-055: one more item of that tile's category, of the player's choice, into the warehouse."""
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
    if act is None:  # the board action is over (passed or finished); only the extra action may follow
        out: list[Command] = _extra_options(state, seat) if extra_available(seat, turn) else []
        out.append(_END_TURN)
        return out
    if act["gift"] == 1:
        return _gift_options(state, seat, act)
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
        if act["uses"]:
            out.append(_END_TURN if turn["main"]["done"] else _END_EXTRA)
        return out
    if act["uses"]:
        out.append(_END_TURN)
    else:
        out.append(_PASS)  # NAU-150, NAU-A01
    if extras and extra_available(seat, turn):
        out.extend(_extra_options(state, seat))
    return out


# --- decide -----------------------------------------------------------------------------------------------


def _violation(code: str, message: str) -> RuleViolation:
    return RuleViolation(code, message)


def _diagnose(state: State, s: int, cmd: Command) -> RuleViolation:
    """Why a command that ``legal`` does not list is refused: the most specific rule first."""
    step = state["step"]
    seat = state["seats"][s]
    if step == "choose":
        if not isinstance(cmd, ChooseAction):
            return _violation("choose_action_first", "NAU-022: the start player must first choose an action tile.")
        if not 0 <= cmd.space < SPACES:
            return _violation("invalid_space", "NAU-006: action spaces are numbered 0 to 7.")
        if state["face_down"][cmd.space]:
            return _violation("tile_face_down", "NAU-026: that action tile is face down for the rest of the round.")
        return _violation(
            "invalid_bonus_item",
            "NAU-031/032/035/038: name one regular mast, sail or good that can go into your warehouse as the "
            "bonus (empty only when none can be received, or for a bonus without a tile).",
        )
    if isinstance(cmd, ChooseAction):
        return _violation("action_already_chosen", "NAU-022: an action is being carried out; wait for the next phase.")
    turn = state["turn"]
    rewards = turn["rewards"]
    if rewards is not None:
        if not isinstance(cmd, ChooseReward):
            return _violation("reward_pending", "NAU-161: a ship was completed; choose its rewards first.")
        if cmd.reward not in REWARDS:
            return _violation("invalid_reward", "NAU-162: the rewards are " + ", ".join(REWARDS) + ".")
        if rewards["taken"].get(cmd.reward, 0) >= REWARD_MAX_EACH:
            return _violation("reward_limit", "NAU-163: each reward at most 2 times per completed ship.")
        if cmd.reward == "goods" and (
            len(cmd.goods) != 2
            or not set(cmd.goods) <= set(GOODS)
            or GOODS.index(cmd.goods[0]) >= GOODS.index(cmd.goods[1])
        ):
            return _violation(
                "invalid_reward",
                "NAU-162: the goods reward is 2 different goods, named in slot order (coffee, grain, fish, salt).",
            )
        if cmd.reward in ("crown_mast", "crown_sail", "goods"):
            return _violation(
                "reward_unavailable",
                "NAU-A06/NAU-003/NAU-113: that reward's tiles cannot be received (stack empty or warehouse full).",
            )
        return _violation("invalid_reward", "NAU-162: only the goods reward names goods.")
    if isinstance(cmd, ChooseReward):
        return _violation("no_reward_pending", "NAU-161: rewards come only when a ship is completed.")
    act = running_act(turn)
    if act is not None and act["gift"] == 1:
        if not isinstance(cmd, TakeGift):
            return _violation("gift_pending", "NAU-055: take the gift for buying all 4 types first.")
        if cmd.item not in ITEMS_OF[act["action"]]:
            return _violation("invalid_item", "NAU-055: the gift is a regular item of the tile you bought from.")
        if state["stacks"][cmd.item] <= 0:
            return _violation("stack_empty", "NAU-003: that stack is empty.")
        return _violation("warehouse_full", "NAU-057/113: the gift goes to the warehouse, which has no room.")
    if isinstance(cmd, TakeGift):
        return _violation("no_gift", "NAU-055/056: a gift comes only for buying all 4 types in one action, once.")
    if isinstance(cmd, UseExtraAction):
        if not seat["extra_tile"]:
            return _violation("extra_action_used", "NAU-175: your extra-action tile has already been used.")
        if turn["extra"] is not None:
            return _violation("extra_action_used", "NAU-170: the extra action was already used this turn.")
        if cmd.action not in ACTIONS:
            return _violation("invalid_action", "NAU-172: choose one of the 8 actions.")
        return _violation(
            "extra_action_unusable", "NAU-Q04: that action could not be used even once as the extra action now."
        )
    if isinstance(cmd, PassAction):
        return _violation(
            "cannot_pass", "NAU-150/NAU-A01: you can pass only instead of carrying out the action, before using it."
        )
    if isinstance(cmd, EndTurn | EndExtraAction):
        if act is not None and act["uses"] == 0:
            return _violation(
                "no_use_made", "NAU-A01: carry out the action at least once or pass (extra action: NAU-Q04)."
            )
        if isinstance(cmd, EndExtraAction):
            return _violation("no_extra_action", "NAU-A13: no extra action before the board action is running.")
        return _violation("finish_extra_action", "NAU-A13: end the extra action, then carry out or pass the action.")
    # one use of an action
    wanted = {
        BuyItem: None,
        Transport: TRANSPORT,
        WithdrawMoney: WITHDRAW_MONEY,
        DeliverGoods: DELIVER_GOODS,
        ScoreCrowns: SCORE_CROWNS,
    }.get(type(cmd), "?")
    if wanted == "?":
        return _violation("illegal_command", "That command is not possible now.")
    if act is None:
        return _violation("action_finished", "NAU-025: you have finished (or passed) this action; end your turn.")
    action = act["action"]
    if (wanted is None and action not in ITEMS_OF) or (wanted is not None and wanted != action):
        return _violation("wrong_action", f"NAU-025/172: the action being carried out is {action}.")
    if not act["blue"] and not seat["workers"]:
        return _violation("no_workers", "NAU-050/043: every use needs a worker; you have none left.")
    if isinstance(cmd, DeliverGoods):
        if not 0 <= cmd.ship < len(seat["ships"]):
            return _violation("no_such_ship", "There is no such ship in your shipyard.")
        ship = seat["ships"][cmd.ship]
        if not ship["complete"]:
            return _violation("ship_not_complete", "NAU-130: only a completed ship can deliver.")
        if not hulls.is_loaded(ship):
            return _violation("ship_not_loaded", "NAU-130/131: a ship delivers only with a good under every hull part.")
        return _violation("no_workers", "NAU-131: delivering needs 1 worker per good of the ship.")
    if isinstance(cmd, BuyItem | Transport) and (
        cmd.to not in _DESTINATIONS or (cmd.to != "ship" and (cmd.ship or cmd.position))
    ):
        return _violation(
            "invalid_destination", "to is warehouse, new_ship or ship (ship and position only with ship)."
        )
    if isinstance(cmd, BuyItem):
        if cmd.item not in ITEMS_OF[action]:
            return _violation("invalid_item", f"NAU-052/080/090: {action} sells only " + ", ".join(ITEMS_OF[action]))
        if state["stacks"][cmd.item] <= 0:
            return _violation("stack_empty", "NAU-003: that stack is empty.")
        p = price(state, act, cmd.item)
        if seat["taler"] < p:
            return _violation("insufficient_funds", f"NAU-052/054: that item costs {p} Taler now.")
        if cmd.to == "warehouse":
            return _violation("warehouse_full", "NAU-113: your warehouse has no room for it (masts need 2 spaces).")
        if p == 0:
            return _violation(
                "golden_rule", "NAU-057/059: a tile bought for 0 Taler is free and must go to the warehouse first."
            )
        return _violation("illegal_placement", "NAU-073..093/NAU-060: that shipyard position is not legal for it.")
    if isinstance(cmd, Transport):
        if seat["warehouse"].get(cmd.item, 0) <= 0:
            return _violation("not_in_warehouse", "NAU-110: transport moves a tile that is in your warehouse.")
        return _violation("illegal_placement", "NAU-110/073..103: that shipyard position is not legal for it.")
    return _violation("illegal_command", "That command is not possible now.")


def _next_seat(state: State, s: int) -> int | None:
    nxt = (s + 1) % state["players"]
    return None if nxt == state["start_player"] else nxt


def _primary(state: State, s: int, cmd: Command) -> list[Event]:
    seat = state["seats"][s]
    turn = state["turn"]
    if isinstance(cmd, ChooseAction):
        bonus = BONUSES[cmd.space]
        return [
            Event(
                "ActionChosen",
                {
                    "seat": s,
                    "space": cmd.space,
                    "action": state["layout"][cmd.space],
                    "blue": blue_at(state, cmd.space),
                    "bonus_workers": bonus.get("workers", 0),
                    "bonus_vp": bonus.get("vp", 0),
                    "bonus_taler": bonus.get("taler", 0),
                    "bonus_item": cmd.bonus_item,
                    "bonus_forfeited": "item" in bonus and not cmd.bonus_item,
                },
            )
        ]
    if isinstance(cmd, ChooseReward):
        return [Event("RewardTaken", {"seat": s, "reward": cmd.reward, "goods": list(cmd.goods)})]
    if isinstance(cmd, UseExtraAction):
        return [Event("ExtraActionStarted", {"seat": s, "action": cmd.action, "workers": EXTRA_WORKERS})]
    if isinstance(cmd, EndExtraAction):
        return [Event("ExtraActionEnded", {"seat": s})]
    if isinstance(cmd, EndTurn):
        return [Event("TurnEnded", {"seat": s, "next": _next_seat(state, s)})]
    if isinstance(cmd, PassAction):
        n = seat["passes"]
        return [Event("ActionPassed", {"seat": s, "pass_tile": -PASS_TILES[n] if n < len(PASS_TILES) else 0})]
    act = running_act(turn)
    if isinstance(cmd, TakeGift):
        return [Event("GiftTaken", {"seat": s, "item": cmd.item})]
    blue = act["blue"] > 0
    if isinstance(cmd, BuyItem):
        data = {"seat": s, "item": cmd.item, "price": price(state, act, cmd.item), "blue": blue}
        data.update(to=cmd.to, ship=cmd.ship, position=cmd.position, extra=act["is_extra"])
        return [Event("ItemBought", data)]
    if isinstance(cmd, Transport):
        data = {"seat": s, "item": cmd.item, "blue": blue, "to": cmd.to, "ship": cmd.ship, "position": cmd.position}
        return [Event("TileTransported", data)]
    if isinstance(cmd, WithdrawMoney):
        return [Event("MoneyWithdrawn", {"seat": s, "taler": WITHDRAW_TALER, "blue": blue})]
    if isinstance(cmd, DeliverGoods):
        ship = seat["ships"][cmd.ship]
        n = len(ship["goods"])
        b = min(act["blue"], n)
        return [
            Event(
                "GoodsDelivered",
                {"seat": s, "ship": cmd.ship, "goods": list(ship["goods"]), "blue": b, "own": n - b},
            )
        ]
    # ScoreCrowns: NAU-141/142 (the extra action has its own cap, NAU-A11)
    c = crowns(seat)
    used = act["crown_vp"] if act["is_extra"] else seat["crown_vp_round"]
    vp = min(c, max(CROWN_CAP - used, 0))
    return [Event("CrownsScored", {"seat": s, "crowns": c, "vp": vp, "blue": blue, "wasted": vp < c})]


def _auto(state: State, rng: Rng) -> Event | None:
    """The next event that follows without anyone's choice, or None."""
    step = state["step"]
    if step == "act":
        s = state["acting"]
        seat = state["seats"][s]
        turn = state["turn"]
        if turn["rewards"] is not None:
            return None
        for k, ship in enumerate(seat["ships"]):
            if not ship["complete"] and hulls.is_complete(ship):  # NAU-160/161/165
                return Event("ShipCompleted", {"seat": s, "ship": k, "rewards": len(ship["hull"])})
        act = running_act(turn)
        if act is not None:
            if act["gift"] == 1 and not _gift_options(state, seat, act):
                return Event("GiftForfeited", {"seat": s})  # NAU-A06
            return None
        if extra_available(seat, turn):
            return None
        return Event("TurnEnded", {"seat": s, "next": _next_seat(state, s)})
    if step == "phase_end":
        first = state["phase"] == 0
        return Event(
            "PhaseEnded",
            {
                "round": state["round"],
                "phase": state["phase"] + 1,
                "space": state["space"],
                "anchor_tile": state["space"] if first else None,  # NAU-027
                "start_player": (state["start_player"] + 1) % state["players"],  # NAU-028
            },
        )
    if step == "round_end":
        penalties = [sum(PASS_TILES[min(seat["passes"], 3) :]) for seat in state["seats"]]  # NAU-180
        return Event("RoundEnded", {"round": state["round"], "penalties": penalties})
    if step == "layout":
        return layout_event(state, rng)
    if step == "scoring":
        return Event("GameEnded", {"result": final_result(state)})
    return None


def layout_event(state: State, rng: Rng) -> Event:
    """NAU-018/NAU-184: turn the turntable to the anchor tile, shuffle the 8 tiles, lay them out from there."""
    anchor = state["anchor_tile"] if state["anchor_tile"] is not None else state["turntable_anchor"]
    order = rng.shuffled(ACTIONS)
    layout = [""] * SPACES
    for i, action in enumerate(order):
        layout[(anchor + i) % SPACES] = action
    blue = [TURNTABLE[(sp - anchor) % SPACES] for sp in range(SPACES)]
    return Event(
        "ActionTilesLaidOut",
        {"round": state["round"], "turntable_anchor": anchor, "order": order, "layout": layout, "blue": blue},
    )


def _work_copy(state: State, s: int) -> State:
    """A copy that the events of seat ``s``'s command may change: only that seat, the turn, the stacks and
    the face-down flags are deep-copied (speed); events touching every seat take a full copy first."""
    work = dict(state)
    seats = list(state["seats"])
    seats[s] = clone_state(seats[s])
    work["seats"] = seats
    work["stacks"] = dict(state["stacks"])
    work["face_down"] = list(state["face_down"])
    if state["turn"] is not None:
        work["turn"] = clone_state(state["turn"])
    return work


def _quiet(state: State, event: Event) -> bool:
    """True when ``event`` cannot be followed by an automatic event (skips the copy: speed).  Only a
    placement in the shipyard (completion), a purchase that may earn the gift, the last reward (a pending
    gift may be forfeited), a pass (end of turn) and the last turn of a phase can be."""
    t = event.type
    if t == "ActionPassed":  # the turn stays open only while the extra action can still follow
        return extra_available(state["seats"][event.data["seat"]], state["turn"])
    if t == "TileTransported":
        return False
    if t == "ItemBought":
        if event.data["to"] != "warehouse":
            return False
        act = running_act(state["turn"])
        bought = act["bought"]
        return act["gift"] != 0 or len(bought) + (event.data["item"] not in bought) < 4
    if t == "RewardTaken":
        return state["turn"]["rewards"]["left"] > 1
    if t == "TurnEnded":
        return event.data["next"] is not None
    return True


def follow_ups(state: State, s: int, events: list[Event], rng: Rng) -> list[Event]:
    """Fold ``events`` into a copy of ``state`` and append every automatic follow-up."""
    if len(events) == 1 and _quiet(state, events[0]):
        return events
    work = _work_copy(state, s)
    for e in events:
        evolve(work, e)
    while True:
        e = _auto(work, rng)
        if e is None:
            return events
        if e.type == "RoundEnded":
            work = clone_state(work)  # it changes every seat
        evolve(work, e)
        events.append(e)


def decide(state: State, s: int, cmd: Command, rng: Rng) -> list[Event]:
    if state["step"] == "over":
        raise RuleViolation("game_over", "The game is over (NAU-183).")
    if COMMANDS.get(getattr(cmd, "type", None)) is not type(cmd):
        raise RuleViolation("unknown_command", "Nauticus does not know that command.")
    if s not in to_act(state):
        raise RuleViolation("not_your_turn", "It is not your turn (NAU-022/025: start player, then clockwise).")
    if cmd not in legal(state, s, cmd):
        raise _diagnose(state, s, cmd)
    return follow_ups(state, s, _primary(state, s, cmd), rng)
