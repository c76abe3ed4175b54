"""What a command causes (``decide``): one handler per command.

``decide`` accepts exactly the commands ``legal`` lists (it checks membership), explains a
refusal with a code naming the rule (``refusals.py``), and emits every automatic follow-up
(reveals, the neutral player, phase and day transitions, final scoring; ``flow.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.games.base import SEAT_FORFEITED, Command, Event, State, check_forfeit, forfeited
from service.games.rng import Rng
from service.games.waters_of_nereus import cabin, data, movement, scoring
from service.games.waters_of_nereus import commands as c
from service.games.waters_of_nereus.context import Ctx, draw_science, draw_treasure, gain_science, place_on_board
from service.games.waters_of_nereus.flow import (
    neutral_turn,
    next_corner_seat,
    run_explorer_queue,
    start_cycle,
    start_day,
    start_explorer_phase,
)
from service.games.waters_of_nereus.legal import legal
from service.games.waters_of_nereus.refusals import explain


def decide(state: State, seat: int, cmd: Command, rng: Rng) -> list[Event]:
    """The events ``cmd`` causes, follow-ups included; a command ``legal`` does not list is
    refused with the reason ``refusals.explain`` finds."""
    if cmd not in legal(state, seat, type(cmd)):
        raise explain(state, seat, cmd)
    ctx = Ctx(state, rng)
    HANDLERS[type(cmd)](ctx, seat, cmd)
    return ctx.events


# --- command handlers -----------------------------------------------------------------


def _choose_corner(ctx: Ctx, seat: int, cmd: c.ChooseCorner) -> None:
    """WON-012, WON-Q01: corners are chosen clockwise from the starting player."""
    s = ctx.s
    nxt = next_corner_seat(s, seat)
    ctx.emit("ShipPlaced", seat=seat, corner=cmd.corner, cell=movement.corner_cells(s["size"])[cmd.corner], next=nxt)
    if nxt is None:
        _corners_done(ctx)


def _corners_done(ctx: Ctx) -> None:
    # WON-015: fill every water space without a ship.
    s = ctx.s
    place_on_board(ctx, list(range(s["size"] * s["size"])))
    start_day(ctx)


def _choose_crew(ctx: Ctx, seat: int, cmd: c.ChooseCrew) -> None:
    # WON-I01, WON-Q02: the choice is committed (hidden) and may be changed until the last seat
    # has chosen; then all are revealed at once.
    out = forfeited(ctx.s)
    waiting = any(p["chosen"] is None for i, p in enumerate(ctx.s["seats"]) if i != seat and i not in out)
    ctx.emit("CrewChosen", seat=seat, crew=cmd.crew)
    if not waiting:
        _reveal(ctx)


def _reveal(ctx: Ctx) -> None:
    s = ctx.s
    # WON-040: everyone has chosen: reveal all at once (WON-Q15: a seat that left shows None).
    ctx.emit("CrewRevealed", cards=[p["chosen"] for p in s["seats"]])
    if s["neutral"]:
        neutral_turn(ctx, None)  # WON-132, WON-133: the neutral player acts first
    n = s["players"]
    h = s["hourglass"]
    out = forfeited(s)
    order = [(h + i) % n for i in range(n) if (h + i) % n not in out]  # WON-041, WON-Q15
    start_turn(ctx, order[0], order[1:])


def start_turn(ctx: Ctx, seat: int, rest: list[int]) -> None:
    ctx.emit("TurnStarted", seat=seat, crew=ctx.s["seats"][seat]["revealed"], order=rest)


def _place_marker(ctx: Ctx, seat: int, cmd: c.PlaceMarker) -> None:
    s = ctx.s
    turn = s["turn"]
    crew = turn["crew"]
    me = s["seats"][seat]
    # WON-052, WON-084: the hold was completed before this turn (the marker comes first).
    enhanced = crew in me["completed"]
    ctx.emit("MarkerPlaced", seat=seat, crew=crew, space=cmd.space, enhanced=enhanced)
    if enhanced:  # WON-A07: automatic enhanced gains happen when the card is played
        if crew == "purser":  # WON-118
            ctx.emit("GoldChanged", seat=seat, delta=data.PURSER_ENHANCED_GOLD, reason="purser_enhanced")
        elif crew == "merchant":  # WON-121
            ctx.emit("VPScored", seat=seat, vp=data.MERCHANT_ENHANCED_VP, category="actions")
        elif crew == "boatswain":
            draw_treasure(ctx, seat)  # WON-115


def _sail(ctx: Ctx, seat: int, cmd: c.SailShip) -> None:
    s = ctx.s
    move = s["turn"]["move"]
    cell = s["ships"][seat]
    # WON-102, WON-Q05: the fee is paid on leaving a space with another ship (not the start).
    fees = movement.ships_at(s, cell, seat) if move["steps"] else []
    nxt = movement.step(s["size"], cell, cmd.direction)
    ctx.emit("ShipSailed", seat=seat, direction=cmd.direction, cell=nxt, fees=fees)


def _anchor(ctx: Ctx, seat: int, cmd: c.DropAnchor) -> None:
    s = ctx.s
    cell = s["ships"][seat]
    moved = s["turn"]["move"]["steps"] > 0
    treasures = list(s["board"][cell]) if moved else []  # WON-103, WON-A04
    ctx.emit("AnchorDropped", seat=seat, cell=cell, treasures=treasures)


def _explore(ctx: Ctx, seat: int, cmd: c.Explore) -> None:
    s = ctx.s
    explores = s["turn"]["explores"]
    # WON-Q08: use the narrowest allowance containing the colour.
    idx = min((i for i, a in enumerate(explores) if cmd.treasure in a), key=lambda i: len(explores[i]))
    cell = cmd.row * s["size"] + cmd.col
    ctx.emit("TreasureExplored", seat=seat, cell=cell, treasure=cmd.treasure, allowance=idx)


def _perform(ctx: Ctx, seat: int, cmd: c.PerformAction) -> None:
    s = ctx.s
    turn = s["turn"]
    crew, i = turn["crew"], turn["space"] - 1
    ctx.emit("ActionPerformed", seat=seat, crew=crew, space=turn["space"], option=cmd.option)
    if crew == "boatswain":
        vp, moves = data.BOATSWAIN_SPACES[i]  # WON-113
        ctx.emit("VPScored", seat=seat, vp=vp, category="actions")
        ctx.emit("TreasureMovesGranted", seat=seat, moves=moves)
    elif crew == "purser":
        ctx.emit("GoldChanged", seat=seat, delta=data.PURSER_SPACES[i], reason="purser")  # WON-116
    elif crew == "merchant":
        cost, vp = data.MERCHANT_SPACES[i]  # WON-119
        ctx.emit("GoldChanged", seat=seat, delta=-cost, reason="merchant")
        ctx.emit("VPScored", seat=seat, vp=vp, category="actions")
    elif crew == "scientist":
        if cmd.option:  # WON-122: 2-3-player side space 3
            sci, cards = (1, 0) if cmd.option == "science" else (0, 1)
        else:
            sci, cards = data.SCIENTIST_SPACES[i]
        gain_science(ctx, seat, sci)
        for _ in range(cards):
            draw_science(ctx, seat)


def _gold_action(ctx: Ctx, seat: int, cmd: Command) -> None:
    """WON-051: one gold action per turn (WON-104, WON-107, WON-114, WON-117, WON-120, WON-123)."""
    s = ctx.s
    crew = s["turn"]["crew"]
    if isinstance(cmd, c.BuyMoves):
        ctx.emit("GoldActionUsed", seat=seat, crew=crew, gold=data.CAPTAIN_EXTRA[cmd.spaces], spaces=cmd.spaces)
    elif isinstance(cmd, c.BuyTurns):
        ctx.emit("GoldActionUsed", seat=seat, crew=crew, gold=data.PILOT_TURN_COST)
    elif isinstance(cmd, c.BuyTreasureMove):
        ctx.emit("GoldActionUsed", seat=seat, crew=crew, gold=data.BOATSWAIN_MOVE_COST)
    elif isinstance(cmd, c.BuyTreasure):
        ctx.emit("GoldActionUsed", seat=seat, crew=crew, gold=data.PURSER_DRAW_COST)
        draw_treasure(ctx, seat)
    elif isinstance(cmd, c.BuyVp):
        ctx.emit("GoldActionUsed", seat=seat, crew=crew, gold=data.MERCHANT_VP_COST)
        ctx.emit("VPScored", seat=seat, vp=data.MERCHANT_GOLD_VP, category="actions")
    elif isinstance(cmd, c.BuyResearch):
        ctx.emit("GoldActionUsed", seat=seat, crew=crew, gold=data.SCIENTIST_RESEARCH_COST, option=cmd.option)
        if cmd.option == "science":
            gain_science(ctx, seat, data.SCIENTIST_RESEARCH_STEPS)
        else:
            draw_science(ctx, seat)


def _research(ctx: Ctx, seat: int, cmd: c.DrawScienceEnhanced) -> None:
    """WON-124: draw now; the compulsory discard is the next command."""
    ctx.emit("EnhancedResearchUsed", seat=seat)
    draw_science(ctx, seat)


def _discard(ctx: Ctx, seat: int, cmd: c.DiscardScience) -> None:
    ctx.emit("ScienceCardDiscarded", seat=seat, card=cmd.card)


def _play_science(ctx: Ctx, seat: int, cmd: c.PlayScience) -> None:
    """WON-125, WON-128: pay 1 science power, then the card's effect (WON-D06)."""
    ctx.emit("ScienceCardPlayed", seat=seat, card=cmd.card)
    effect = data.SCIENCE_CARDS[cmd.card][1]
    if effect == "draw_treasures":
        for _ in range(data.SCIENCE_DRAW_TREASURES):
            draw_treasure(ctx, seat)
    elif effect == "gold":
        ctx.emit("GoldChanged", seat=seat, delta=data.SCIENCE_GOLD, reason="science")
    elif effect == "gem":
        ctx.emit("GemGained", seat=seat)
    elif effect == "vp":
        ctx.emit("VPScored", seat=seat, vp=data.SCIENCE_VP, category="science")
    elif effect == "draw_science":
        for _ in range(data.SCIENCE_DRAW_CARDS):
            draw_science(ctx, seat)
    elif data.SCIENCE_CARDS[cmd.card][0] == "end":
        s = ctx.s  # after paying the power (SC19 counts what is left)
        vp = scoring.end_card_vp(s, s["seats"][seat], cmd.card)
        ctx.emit("VPScored", seat=seat, vp=vp, category="end_cards")


def _place_treasure(ctx: Ctx, seat: int, cmd: c.PlaceTreasure) -> None:
    """WON-080, WON-081: one treasure from the hands into storage, the chest or a hold icon."""
    me = ctx.s["seats"][seat]
    if cmd.area == "chest":
        gold, vp, draws = cabin.chest_reward(me)  # WON-091
        ctx.emit("TreasurePlaced", seat=seat, treasure=cmd.treasure, area="chest", crew="", slot=0, gold=gold, vp=vp)
        for _ in range(draws):
            draw_treasure(ctx, seat)
        return
    complete = cmd.area == "hold" and cabin.completes_hold(me, cmd.crew, cmd.slot)
    ctx.emit("TreasurePlaced", seat=seat, treasure=cmd.treasure, area=cmd.area, crew=cmd.crew, slot=cmd.slot)
    if complete:  # WON-082
        ctx.emit("HoldCompleted", seat=seat, crew=cmd.crew, vp=data.HOLD_VP[cmd.crew])


def _unload(ctx: Ctx, seat: int, cmd: c.UnloadTreasure) -> None:
    """WON-113, WON-Q11: a treasure move takes a treasure into the hands; it is then placed."""
    ctx.emit(
        "TreasureUnloaded",
        seat=seat,
        treasure=cmd.treasure,
        area=cmd.area,
        crew=cmd.crew,
        slot=cmd.slot,
        free=False,
    )


def _take_gem(ctx: Ctx, seat: int, cmd: c.TakeGem) -> None:
    """WON-095, WON-Q11: taking a gem out of storage costs no treasure move."""
    ctx.emit("TreasureUnloaded", seat=seat, treasure=data.GEM, area="storage", crew="", slot=0, free=True)


def _exchange(ctx: Ctx, seat: int, cmd: c.ExchangeTreasures) -> None:
    """WON-094: two of a colour from storage for a gem."""
    ctx.emit("TreasuresExchanged", seat=seat, treasure=cmd.treasure)


def _sell(ctx: Ctx, seat: int, cmd: c.SellTreasure) -> None:
    """WON-096: a storage treasure sells for 2 gold, a gem for 5."""
    gold = data.SELL_GEM if cmd.treasure == data.GEM else data.SELL_TREASURE
    ctx.emit("TreasureSold", seat=seat, treasure=cmd.treasure, gold=gold)


def _end_turn(ctx: Ctx, seat: int, cmd: c.EndTurn) -> None:
    # Read what the follow-ups need before emitting: TurnEnded changes none of it, and the
    # common path then needs no copy of the state (speed).
    s = ctx.s
    explorer = s["turn"]["explorer_pos"] is not None
    order, cycle, hourglass = s["order"], s["cycle"], s["hourglass"]
    ctx.emit("TurnEnded", seat=seat)
    _next_turn(ctx, s, explorer, order, cycle, hourglass)


def _next_turn(ctx: Ctx, s: State, explorer: bool, order: list[int], cycle: int, hourglass: int) -> None:
    """After a turn: the explorer queue, the next seat of the cycle, the next cycle (WON-045) or
    the explorer phase.  ``s`` is read for what a ``TurnEnded`` does not change."""
    if explorer:
        run_explorer_queue(ctx)
        return
    out = forfeited(s)
    if out:
        order = [x for x in order if x not in out]  # WON-Q15: a seat that left has no turn
    if order:
        ctx.emit("TurnStarted", seat=order[0], crew=s["seats"][order[0]]["revealed"], order=order[1:])
    elif cycle < data.CYCLES:
        # WON-045: the hourglass passes one seat clockwise; the sun stays.
        start_cycle(ctx, cycle + 1, (hourglass + 1) % s["players"])
    else:
        start_explorer_phase(ctx)


def _take_explorer(ctx: Ctx, seat: int, cmd: c.TakeExplorerTurn) -> None:
    """WON-062: pay, play the crew card; the turn then starts with the marker (moved from the
    explorer row when it is placed)."""
    ctx.emit("ExplorerTurnTaken", seat=seat, crew=cmd.crew, cost=ctx.s["turn"]["cost"])


def _decline_explorer(ctx: Ctx, seat: int, cmd: c.DeclineExplorerTurn) -> None:
    """WON-063: no payment, no turn."""
    ctx.emit("ExplorerTurnDeclined", seat=seat)
    run_explorer_queue(ctx)


def _finish_scoring(ctx: Ctx, seat: int, cmd: c.FinishScoring) -> None:
    """WON-141, WON-Q10: the last seat's finish runs the automatic sale and the result."""
    ctx.emit("FinalTurnEnded", seat=seat)
    _next_final_turn(ctx)


def _next_final_turn(ctx: Ctx) -> None:
    """WON-Q10: the next seat's final turn; WON-Q15: a seat that left has none; after the last,
    the automatic sale and the result."""
    while (active := ctx.s["active"]) is not None and active in forfeited(ctx.s):
        ctx.emit("FinalTurnEnded", seat=active)
    if ctx.s["active"] is None:
        scoring.final_scoring(ctx)


def forfeit(state: State, seat: int, rng: Rng) -> list[Event]:
    """WON-Q15 (our decision; the rulebook has no forfeit): a seat that resigns or runs out of time
    leaves the game.  Its ship leaves the board (no fee is paid to it, no space is blocked), the
    treasures in its hands go back to the bag (a gem to the supply), and its cabin, gold, VP and
    science cards stay with it, out of play; markers it has placed stay until the day ends
    (WON-070).  From then on it chooses no crew card (the others are revealed once every seat still
    playing has chosen; a card it had laid face down is void), its turns, explorer-phase offer and
    final-scoring turn are passed over, and if it is choosing a corner the next seat chooses.  If
    it is to act, its turn ends at once.  The platform ranks it last."""
    check_forfeit(state, seat, state["players"], state["phase"] == "over")
    ctx = Ctx(state, rng)
    ctx.emit(SEAT_FORFEITED, seat=seat, ship=state["ships"][seat], returned=list(state["seats"][seat]["pending"]))
    s = ctx.s
    phase = s["phase"]
    if phase == "choose":
        if all(p["chosen"] is not None for i, p in enumerate(s["seats"]) if i not in s["forfeited"]):
            _reveal(ctx)
    elif s["active"] == seat:
        if phase == "corners":
            nxt = next_corner_seat(s, seat)
            ctx.emit("CornerSkipped", seat=seat, next=nxt)
            if nxt is None:
                _corners_done(ctx)
        elif phase == "turn":
            explorer = s["turn"]["explorer_pos"] is not None
            order, cycle, hourglass = list(s["order"]), s["cycle"], s["hourglass"]
            ctx.emit("TurnEnded", seat=seat)
            _next_turn(ctx, ctx.s, explorer, order, cycle, hourglass)
        elif phase == "explorer_offer":
            ctx.emit("ExplorerTurnDeclined", seat=seat)
            run_explorer_queue(ctx)
        elif phase == "final":
            ctx.emit("FinalTurnEnded", seat=seat)
            _next_final_turn(ctx)
    return ctx.events


HANDLERS: dict[type[Command], Callable[[Ctx, int, Any], None]] = {
    c.ChooseCorner: _choose_corner,
    c.ChooseCrew: _choose_crew,
    c.PlaceMarker: _place_marker,
    c.SailShip: _sail,
    c.DropAnchor: _anchor,
    c.Explore: _explore,
    c.PerformAction: _perform,
    c.BuyMoves: _gold_action,
    c.BuyTurns: _gold_action,
    c.BuyTreasureMove: _gold_action,
    c.BuyTreasure: _gold_action,
    c.BuyVp: _gold_action,
    c.BuyResearch: _gold_action,
    c.DrawScienceEnhanced: _research,
    c.DiscardScience: _discard,
    c.PlayScience: _play_science,
    c.PlaceTreasure: _place_treasure,
    c.UnloadTreasure: _unload,
    c.TakeGem: _take_gem,
    c.ExchangeTreasures: _exchange,
    c.SellTreasure: _sell,
    c.EndTurn: _end_turn,
    c.TakeExplorerTurn: _take_explorer,
    c.DeclineExplorerTurn: _decline_explorer,
    c.FinishScoring: _finish_scoring,
}
