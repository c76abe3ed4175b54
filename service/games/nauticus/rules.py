"""``decide``: what a command causes, with every automatic step that follows it.

``decide`` accepts exactly the commands ``legal`` lists: it looks the command up in that list, and only when it
is missing asks :func:`refusals.explain` for the rule that refuses it.  Follow-up events that need no choice
(ship completion, forfeited gift, end of turn / phase / round, layout draw, final scoring) are found by folding
the command's events into a copy of the state and asking :func:`_auto` until it has nothing to add.
"""

from __future__ import annotations

from typing import Any

from service.games.base import SEAT_FORFEITED, Command, Event, State, check_forfeit, clone_state, forfeited
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
    TakeGift,
    Transport,
    UseExtraAction,
    WithdrawMoney,
)
from service.games.nauticus.data import (
    ACTIONS,
    BONUSES,
    CROWN_CAP,
    EXTRA_WORKERS,
    PASS_TILES,
    SPACES,
    WITHDRAW_TALER,
)
from service.games.nauticus.evolve import evolve
from service.games.nauticus.legal import gift_options, legal, to_act
from service.games.nauticus.refusals import explain, refuse
from service.games.nauticus.scoring import crowns, final_result
from service.games.nauticus.state import blue_at, current_act, extra_available, price, running_act, turntable_blue
from service.games.rng import Rng


def _next_seat(state: State, s: int) -> int | None:
    """NAU-025: the next player clockwise, or None when every player has had a turn this phase;
    NAU-Q10: a seat that left the game is passed over."""
    n = state["players"]
    out = forfeited(state)
    for k in range(1, n):
        nxt = (s + k) % n
        if nxt == state["start_player"]:
            return None
        if nxt not in out:
            return nxt
    return None


def _next_start_player(state: State, s: int) -> int:
    """NAU-028: the figure passes clockwise; NAU-Q10: never to a seat that left the game."""
    n = state["players"]
    out = forfeited(state)
    for k in range(1, n + 1):
        nxt = (s + k) % n
        if nxt not in out:
            return nxt
    return (s + 1) % n  # pragma: no cover - the platform ends a game before every seat has left


def _primary(state: State, s: int, cmd: Command) -> list[Event]:
    """The events of the command itself (already known to be legal)."""
    seat = state["seats"][s]
    turn = state["turn"]
    if isinstance(cmd, ChooseAction):
        # NAU-023: the bonus of the space, whatever the start player does next; NAU-024: nobody else gets it.
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
                    "bonus_forfeited": "item" in bonus and not cmd.bonus_item,  # NAU-038
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
        # NAU-152, NAU-A02: the highest penalty tile first; NAU-154, NAU-Q09: none left to turn -> 0.
        n = seat["passes"]
        return [Event("ActionPassed", {"seat": s, "pass_tile": -PASS_TILES[n] if n < len(PASS_TILES) else 0})]
    act = current_act(turn)
    if isinstance(cmd, TakeGift):
        return [Event("GiftTaken", {"seat": s, "item": cmd.item})]
    blue = act["blue"] > 0  # NAU-042: blue workers are spent first
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
    # ScoreCrowns: NAU-140, NAU-141 (crowns x 1 use), NAU-142 (the cap; the extra action has its own, NAU-A11).
    # Crowns gained from rewards count at once but never lift a cap already reached (NAU-A18).
    c = crowns(seat)
    used = act["crown_vp"] if act["is_extra"] else seat["crown_vp_round"]
    vp = min(c, max(CROWN_CAP - used, 0))
    return [Event("CrownsScored", {"seat": s, "crowns": c, "vp": vp, "blue": blue, "wasted": vp < c})]


def _auto(state: State, rng: Rng) -> Event | None:
    """The next event that follows without anyone's choice, or None."""
    step = state["step"]
    if step == "act":
        s = state["acting"]
        if s in forfeited(state):
            # NAU-Q10: the turn of a seat that leaves ends at once (pending rewards and gift lost).
            return Event("TurnEnded", {"seat": s, "next": _next_seat(state, s)})
        seat = state["seats"][s]
        turn = state["turn"]
        if turn["rewards"] is not None:
            return None
        for k, ship in enumerate(seat["ships"]):
            if not ship["complete"] and hulls.is_complete(ship):  # NAU-160, NAU-161, NAU-165
                return Event("ShipCompleted", {"seat": s, "ship": k, "rewards": len(ship["hull"])})
        act = running_act(turn)
        if act is not None:
            if act["gift"] == 1 and not gift_options(state, seat, act):
                return Event("GiftForfeited", {"seat": s})  # NAU-A06, NAU-Q03
            return None
        if extra_available(seat, turn):  # NAU-Q05: the turn stays open for the extra action
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
                "start_player": _next_start_player(state, state["start_player"]),  # NAU-028, NAU-Q10
            },
        )
    if step == "round_end":
        # NAU-180: lose the pass tiles not turned (6/3/1/0); no income at a round change (NAU-029).
        penalties = [sum(PASS_TILES[min(seat["passes"], 3) :]) for seat in state["seats"]]
        return Event("RoundEnded", {"round": state["round"], "penalties": penalties})
    if step == "layout":
        return layout_event(state, rng)
    if step == "scoring":
        return Event("GameEnded", {"result": final_result(state)})  # NAU-183
    return None


def layout_event(state: State, rng: Rng) -> Event:
    """NAU-018, NAU-184: turn the turntable to the anchor tile, shuffle the 8 tiles, lay them out from there.

    The shuffle is the only random draw of the game; the new round's first start player is whoever holds the
    figure (NAU-185)."""
    anchor = state["anchor_tile"] if state["anchor_tile"] is not None else state["turntable_anchor"]
    order = rng.shuffled(ACTIONS)
    layout = [""] * SPACES
    for i, action in enumerate(order):
        layout[(anchor + i) % SPACES] = action
    blue = [turntable_blue(anchor, sp) for sp in range(SPACES)]
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
    if t == SEAT_FORFEITED:
        return False
    if t == "ActionPassed":  # the turn stays open only while the extra action can still follow
        return extra_available(state["seats"][event.data["seat"]], state["turn"])
    if t == "TileTransported":
        return False
    if t == "ItemBought":
        if event.data["to"] != "warehouse":
            return False
        act = current_act(state["turn"])
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
    for given in events:
        evolve(work, given)
    while True:
        e = _auto(work, rng)
        if e is None:
            return events
        if e.type == "RoundEnded":
            work = clone_state(work)  # it changes every seat
        evolve(work, e)
        events.append(e)


def forfeit(state: State, s: int, rng: Rng) -> list[Event]:
    """NAU-Q10 (our decision; the rulebook has no forfeit): a seat that resigns or runs out of time
    leaves the game.  Everything it owns stays with it, out of play (nothing returns to the stacks);
    its turns are passed over (NAU-025 goes on to the next seat still playing) and the start
    player's figure never goes to it (NAU-028); if it is acting, its turn ends at once, and if it
    holds the figure before choosing an action tile, the figure passes clockwise.  It keeps the
    pass-tile penalties of the rounds it is seated for (NAU-180); the platform ranks it last."""
    check_forfeit(state, s, state["players"], state["step"] == "over")
    data: dict[str, Any] = {"seat": s}
    if state["step"] == "choose" and state["start_player"] == s:
        out = [*forfeited(state), s]
        n = state["players"]
        data["start_player"] = next(((s + k) % n for k in range(1, n) if (s + k) % n not in out), s)
    return follow_ups(state, s, [Event(SEAT_FORFEITED, data)], rng)


def decide(state: State, s: int, cmd: Command, rng: Rng) -> list[Event]:
    """The events ``cmd`` of seat ``s`` causes, automatic follow-ups included; never mutates ``state``."""
    if state["step"] == "over":
        raise refuse("game_over")
    if COMMANDS.get(getattr(cmd, "type", "")) is not type(cmd):
        raise refuse("unknown_command")
    if s not in to_act(state):
        raise refuse("not_your_turn")
    if cmd not in legal(state, s, cmd):
        raise explain(state, s, cmd)
    return follow_ups(state, s, _primary(state, s, cmd), rng)
