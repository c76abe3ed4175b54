"""What happens when a seat acts (``decide``) and the automatic steps that follow.

``decide`` accepts exactly the commands ``legal.legal`` lists (it checks them with the same
predicates) and refuses everything else with a :mod:`refusals` text.  It returns every event
the command causes, including the automatic steps (forfeited actions, the market phase's
collection and adjustment, upkeep draws, the game end), so that afterwards the game is over
or the seat to act has a legal command.  Round structure (NIN-020): action phase, market
phase, upkeep phase; rounds go on until the game-end trigger (NIN-021).
"""

from __future__ import annotations

from typing import Any

from service.games.base import SEAT_FORFEITED, Command, Event, State, check_forfeit, clone_state, forfeited
from service.games.nautilus_industries import data as D
from service.games.nautilus_industries import refusals as R
from service.games.nautilus_industries.commands import (
    BuyStock,
    DeclineUpgrade,
    Hold,
    PlaceSub,
    Sell,
    SwitchGemFrom,
    SwitchGemWith,
    SwitchTiles,
    UpgradeSub,
    UpgradeWarehouse,
)
from service.games.nautilus_industries.evolve import evolve
from service.games.nautilus_industries.legal import actor, can_switch_from, has_action, held, is_colour, is_int
from service.games.nautilus_industries.scoring import final_result
from service.games.rng import Rng

COLOURS = D.COLOURS

# --- decide --------------------------------------------------------------------------------------


class _Journal:
    """Events decided so far, folded into a private copy of the state so that the
    automatic follow-ups see the position they act on."""

    __slots__ = ("events", "state")

    def __init__(self, state: State):
        self.state = clone_state(state)
        self.events: list[Event] = []

    def emit(self, type_: str, data: dict[str, Any]) -> None:
        event = Event(type_, data)
        self.events.append(event)
        evolve(self.state, event)


def decide(state: State, seat: int, command: Command, rng: Rng) -> list[Event]:
    """Every event ``command`` of ``seat`` causes, automatic steps included; refuses with
    :class:`~service.games.base.RuleViolation` (a :mod:`refusals` text) what ``legal`` does not list."""
    phase = state["phase"]
    if phase == "over":
        raise R.game_over()
    if not is_int(seat) or not 0 <= seat < state["n"]:
        raise R.no_such_seat(seat)
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise R.unknown_command(type(command).__name__)
    if seat != actor(state):
        # NIN-030: actions one at a time in turn order; NIN-095 / NIN-A10: sell steps likewise.
        raise R.not_your_sell_step(actor(state)) if phase == "market" else R.not_your_action(actor(state))
    primary = handler(state, seat, command)
    events = _without_follow_ups(state, seat, primary)
    if events is not None:
        return events
    j = _Journal(state)
    for type_, data in primary:
        j.emit(type_, data)
    _advance(j, rng)
    return j.events


def play(state: State, seat: int, command: Command, rng: Rng) -> State:
    """``Engine.play``: the state after ``decide``.  Where ``decide`` simulates the automatic steps it
    has already folded its events into its journal's copy, which is the answer; they are not folded
    into ``state`` a second time."""
    phase = state["phase"]
    if phase == "over" or not is_int(seat) or not 0 <= seat < state["n"] or seat != actor(state):
        return _fold(state, decide(state, seat, command, rng))  # decide's refusal, raised as it would be
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise R.unknown_command(type(command).__name__)
    primary = handler(state, seat, command)
    events = _without_follow_ups(state, seat, primary)
    if events is not None:
        return _fold(state, events)
    j = _Journal(state)
    for type_, data in primary:
        j.emit(type_, data)
    _advance(j, rng)
    return j.state


def _fold(state: State, events: list[Event]) -> State:
    for event in events:
        state = evolve(state, event)
    return state


#: Events that complete an action of the action phase.
_ACTION_DONE = frozenset(
    ("SubUpgraded", "UpgradeDeclined", "WarehouseUpgraded", "GemsSwitched", "TilesSwitched", "StockPurchased")
)


def _without_follow_ups(state: State, seat: int, primary: Primary) -> list[Event] | None:
    """The events of ``primary`` when it provably causes no automatic step, judged on the
    state before it; None when the full simulation (``_Journal`` + ``_advance``) is needed.
    Only a speed-up: it must answer None whenever in doubt."""
    type_, data = primary[-1]
    events = [Event(t, d) for t, d in primary]
    if type_ == "GemChosen" or (type_ == "SubPlaced" and data["upgrade_offered"]):
        return events  # the same seat completes its action next
    if type_ in _ACTION_DONE or type_ == "SubPlaced":
        n = state["n"]
        done = state["actions_done"] + 1
        if done >= D.ACTIONS_PER_PLAYER * n:
            return None  # the market phase starts
        if (state["first"] + done) % n in forfeited(state):
            return None  # NIN-Q07: the next seat's actions are forfeited
        nxt = state["players"][(state["first"] + done) % n]
        # The acting seat's action cannot change the next seat's capacity, and takes at most
        # one free spot: either fact alone guarantees the next seat an action (NIN-033).
        if nxt["capacity"] < D.MAX_CAPACITY:
            return events
        if nxt["subs"]:
            free = sum(1 for tile in state["tiles"] for s in tile["subs"].values() if s is None)
            if free >= 2:
                return events
        return None
    if type_ == "GemsSold":
        before = held(state["players"][seat])
        return events if before > data["count"] else None  # the seller goes on selling
    if type_ == "GemsHeld":
        # Other players' gems do not change when one holds: the next seller can be found now.
        m = state["market"]
        n = state["n"]
        players = state["players"]
        for k in range(m["next_index"], n):
            other = (state["first"] + k) % n
            if held(players[other]):
                tile = state["line"][m["position"]]
                events.append(Event("SellTurnStarted", {"seat": other, "index": k, "tile": tile}))
                return events
        return None  # step 3 follows
    return None


# --- checks shared by the handlers ---------------------------------------------------------------


def _need_phase(state: State, phase: str, what: str, rule: str) -> None:
    """``what`` (a gerund phrase for the message) needs ``phase``; ``rule`` is the rule that says so."""
    if state["phase"] != phase:
        raise R.wrong_phase(what, phase, state["phase"], rule)


def _need_no_pending(state: State) -> None:
    """An action started with a two-step intent (NIN-Q03) is finished before another starts."""
    pending = state["pending"]
    if pending is not None:
        raise R.upgrade_pending() if pending["kind"] == "upgrade" else R.switch_pending()


def _need_pending(state: State, kind: str, what: str) -> dict[str, Any]:
    """The half-done action ``kind`` ("upgrade" or "switch") the command completes."""
    _need_phase(state, "action", what, "NIN-030")
    pending = state["pending"]
    if pending is None or pending["kind"] != kind:
        raise R.no_sub_to_upgrade() if kind == "upgrade" else R.no_first_gem()
    return pending


def _check_tile(state: State, tile: Any, name: str = "tile") -> None:
    """A tile id of this game (NIN-012: one tile per player; NIN-Q04: named by id)."""
    if not is_int(tile) or not 0 <= tile < state["n"]:
        raise R.no_such_tile(name, tile, state["n"])


def _check_colour(colour: Any, what: str = "colour") -> None:
    if not is_colour(colour):
        raise R.no_such_colour(what, colour)


Primary = list[tuple[str, dict[str, Any]]]


# --- the action phase ----------------------------------------------------------------------------


def _do_place_sub(state: State, seat: int, cmd: PlaceSub) -> Primary:
    """Place sub (NIN-040, NIN-041, NIN-042)."""
    _need_phase(state, "action", "Placing a sub", "NIN-030")
    _need_no_pending(state)
    _check_tile(state, cmd.tile)
    _check_colour(cmd.colour)
    player = state["players"][seat]
    if not player["subs"]:
        raise R.no_free_sub()
    if state["tiles"][cmd.tile]["subs"][cmd.colour] is not None:
        raise R.spot_taken()
    # NIN-043, NIN-044: the optional upgrade is offered if it could be paid for and a gem exists.
    offered = player["money"] >= D.UPGRADE_COST and any(state["bag"].values())
    return [
        (
            "SubPlaced",
            {"seat": seat, "tile": cmd.tile, "colour": cmd.colour, "upgrade_offered": offered},
        )
    ]


def _do_upgrade_sub(state: State, seat: int, cmd: UpgradeSub) -> Primary:
    """The optional upgrade of the sub just placed (NIN-043, NIN-044)."""
    pending = _need_pending(state, "upgrade", "Upgrading a sub")
    _check_colour(cmd.colour, "upgrade colour")
    if state["players"][seat]["money"] < D.UPGRADE_COST:
        raise R.cannot_afford_upgrade()
    if not state["bag"][cmd.colour]:
        raise R.colour_not_in_bag()
    return [
        (
            "SubUpgraded",
            {
                "seat": seat,
                "tile": pending["tile"],
                "colour": pending["colour"],
                "upgrade": cmd.colour,
                "cost": D.UPGRADE_COST,
            },
        )
    ]


def _do_decline_upgrade(state: State, seat: int, cmd: DeclineUpgrade) -> Primary:
    """No upgrade: the upgrade is optional (NIN-043)."""
    pending = _need_pending(state, "upgrade", "Declining an upgrade")
    return [("UpgradeDeclined", {"seat": seat, "tile": pending["tile"], "colour": pending["colour"]})]


def _do_upgrade_warehouse(state: State, seat: int, cmd: UpgradeWarehouse) -> Primary:
    """Upgrade warehouse capacity (NIN-050)."""
    _need_phase(state, "action", "Upgrading the warehouse", "NIN-030")
    _need_no_pending(state)
    cap = state["players"][seat]["capacity"]
    if cap >= D.MAX_CAPACITY:
        raise R.capacity_at_maximum()
    return [("WarehouseUpgraded", {"seat": seat, "capacity": cap + 1})]


def _do_switch_gem_from(state: State, seat: int, cmd: SwitchGemFrom) -> Primary:
    """Switch two gems, the first gem (NIN-060, NIN-061, NIN-Q03)."""
    _need_phase(state, "action", "Switching gems", "NIN-030")
    _need_no_pending(state)
    _check_tile(state, cmd.tile)
    _check_colour(cmd.colour)
    if not state["tiles"][cmd.tile]["gems"][cmd.colour]:
        raise R.no_such_gem()
    if not can_switch_from(state, cmd.tile, cmd.colour):
        raise R.no_gem_to_switch_with()
    return [("GemChosen", {"seat": seat, "tile": cmd.tile, "colour": cmd.colour})]


def _do_switch_gem_with(state: State, seat: int, cmd: SwitchGemWith) -> Primary:
    """Switch two gems, the second gem: another tile (NIN-060), another colour (NIN-061, NIN-A05)."""
    pending = _need_pending(state, "switch", "Choosing the second gem")
    _check_tile(state, cmd.tile)
    _check_colour(cmd.colour)
    if cmd.tile == pending["tile"]:
        raise R.second_gem_same_tile()
    if cmd.colour == pending["colour"]:
        raise R.same_colour()
    if not state["tiles"][cmd.tile]["gems"][cmd.colour]:
        raise R.no_such_gem()
    return [
        (
            "GemsSwitched",
            {
                "seat": seat,
                "tile_a": pending["tile"],
                "colour_a": pending["colour"],
                "tile_b": cmd.tile,
                "colour_b": cmd.colour,
            },
        )
    ]


def _do_switch_tiles(state: State, seat: int, cmd: SwitchTiles) -> Primary:
    """Switch area mining order (NIN-070, NIN-071).  Only the line changes: gems and subs stay
    on their tiles, so they move with them (NIN-A11)."""
    _need_phase(state, "action", "Switching the mining order", "NIN-030")
    _need_no_pending(state)
    _check_tile(state, cmd.tile_a, "tile_a")
    _check_tile(state, cmd.tile_b, "tile_b")
    a, b = cmd.tile_a, cmd.tile_b
    if a == b:
        raise R.switch_same_tile()
    if a > b:
        raise R.tiles_not_ordered()
    tiles = state["tiles"]
    if tiles[a]["moved"] or tiles[b]["moved"]:
        raise R.tile_already_moved()
    line = list(state["line"])
    ia, ib = line.index(a), line.index(b)
    line[ia], line[ib] = b, a
    return [("TilesSwitched", {"seat": seat, "tile_a": a, "tile_b": b, "line": line})]


def _do_buy_stock(state: State, seat: int, cmd: BuyStock) -> Primary:
    """Purchase company stock (NIN-080, NIN-081) at the price of NIN-D02."""
    _need_phase(state, "action", "Buying stock", "NIN-030")
    _need_no_pending(state)
    _check_colour(cmd.company, "company")
    if not is_int(cmd.shares) or cmd.shares not in D.SHARES:
        raise R.no_such_certificate(cmd.shares)
    if state["certs"][cmd.company][cmd.shares - 1] is not None:
        raise R.certificate_sold()
    price = D.CERT_PRICE[cmd.company][cmd.shares]
    if state["players"][seat]["money"] < price:
        raise R.cannot_afford_certificate(price)
    return [("StockPurchased", {"seat": seat, "company": cmd.company, "shares": cmd.shares, "price": price})]


# --- the market phase, step 2 --------------------------------------------------------------------


def _do_sell(state: State, seat: int, cmd: Sell) -> Primary:
    """Sell gems of one colour at its current value; the bank pays at once (NIN-095)."""
    _need_phase(state, "market", "Selling gems", "NIN-099")
    _check_colour(cmd.colour)
    if not is_int(cmd.count) or cmd.count < 1:
        raise R.invalid_count()
    have = state["players"][seat]["gems"][cmd.colour]
    if cmd.count > have:
        raise R.not_enough_gems(have)
    price = state["commodity"][cmd.colour]
    return [
        (
            "GemsSold",
            {
                "seat": seat,
                "colour": cmd.colour,
                "count": cmd.count,
                "price": price,
                "money": price * cmd.count,
            },
        )
    ]


def _do_hold(state: State, seat: int, cmd: Hold) -> Primary:
    """End the sell step keeping the rest, which must fit the warehouse (NIN-096, NIN-A02)."""
    _need_phase(state, "market", "Holding gems", "NIN-095")
    player = state["players"][seat]
    have = held(player)
    if have > player["capacity"]:
        raise R.over_capacity(have, player["capacity"])
    return [("GemsHeld", {"seat": seat, "gems": dict(player["gems"])})]


_HANDLERS: dict[type, Any] = {
    PlaceSub: _do_place_sub,
    UpgradeSub: _do_upgrade_sub,
    DeclineUpgrade: _do_decline_upgrade,
    UpgradeWarehouse: _do_upgrade_warehouse,
    SwitchGemFrom: _do_switch_gem_from,
    SwitchGemWith: _do_switch_gem_with,
    SwitchTiles: _do_switch_tiles,
    BuyStock: _do_buy_stock,
    Sell: _do_sell,
    Hold: _do_hold,
}


# --- a seat leaves the game ---------------------------------------------------------------------


def forfeit(state: State, seat: int, rng: Rng) -> list[Event]:
    """NIN-Q07 (our decision; the rulebook has no forfeit): a seat that resigns or runs out of
    time leaves the game.  Its subs come off the tiles at once (upgrade markers back to the bag,
    as NIN-093), so it collects nothing more and frees their spots; the gems it holds go back to
    the bag (every gem stays counted, NIN-002); its money and certificates stay with it, out of
    play.  From then on each of its actions is forfeited like NIN-033's and its sell steps pass
    (it holds no gems, NIN-Q02); a half-done action or sell step of its own ends with it.  The
    other seats play on; the platform ranks it last."""
    check_forfeit(state, seat, state["n"], state["phase"] == "over")
    subs = [
        [t, c, tile["upgrades"][c]] for t, tile in enumerate(state["tiles"]) for c in COLOURS if tile["subs"][c] == seat
    ]
    gems = {c: k for c, k in state["players"][seat]["gems"].items() if k}
    j = _Journal(state)
    j.emit(SEAT_FORFEITED, {"seat": seat, "subs": subs, "gems": gems})
    _advance(j, rng)
    return j.events


# --- automatic steps -----------------------------------------------------------------------------


def _advance(j: _Journal, rng: Rng) -> None:
    """Emit every automatic step until a seat must decide or the game is over.  The phases
    follow each other as the rulebook's "Phases of the Game" says (NIN-020)."""
    s = j.state
    while True:
        phase = s["phase"]
        if phase == "action":
            if s["pending"] is not None:
                return
            n = s["n"]
            if s["actions_done"] >= D.ACTIONS_PER_PLAYER * n:
                j.emit("MarketPhaseStarted", {"round": s["round"]})
                _start_tile(j, 0)  # NIN-090: from the tile next to the market chart
                continue
            seat = (s["first"] + s["actions_done"]) % n
            if seat in forfeited(s):
                # NIN-Q07: every action of a seat that left the game is forfeited.
                j.emit("ActionForfeited", {"seat": seat, "reason": "the seat left the game (NIN-Q07)"})
                continue
            if has_action(s, seat):
                return
            j.emit("ActionForfeited", {"seat": seat, "reason": "no legal action (NIN-033, NIN-A06)"})
            continue
        if phase == "market":
            if _market_step(j):
                return
            continue
        if phase == "upkeep":
            _upkeep(j, rng)
            continue
        return  # over


def _start_tile(j: _Journal, position: int) -> None:
    """Resolve the tile at line ``position`` (NIN-090: one tile at a time, fully), step 1,
    collect: visit the spots gold first then clockwise (NIN-091, NIN-D05); each sub takes up
    to 2 gems of its colour (NIN-091) and, if upgraded, 1 gem of its upgrade colour when the
    tile has one, even before that colour's own spot is visited (NIN-092); then the sub goes
    home with its gems (NIN-094, applied by ``evolve``)."""
    s = j.state
    tile_id = s["line"][position]
    j.emit("TileResolutionStarted", {"tile": tile_id, "position": position})
    tile = s["tiles"][tile_id]
    for c in D.SPOT_ORDER:
        seat = tile["subs"][c]
        if seat is None:
            continue
        gems = tile["gems"]
        own = min(D.SUB_TAKE, gems[c])
        up = tile["upgrades"][c]
        up_gems = 0
        if up is not None:
            # NIN-093, NIN-A04: own colour first, then one gem of the upgrade colour.
            left = gems[up] - (own if up == c else 0)
            up_gems = 1 if left > 0 else 0
        j.emit(
            "SubCollected",
            {"tile": tile_id, "colour": c, "seat": seat, "own": own, "upgrade": up, "upgrade_gems": up_gems},
        )


def _market_step(j: _Journal) -> bool:
    """One automatic step of the market phase; True when a seat must decide."""
    s = j.state
    m = s["market"]
    players = s["players"]
    seller = m["seller"]
    if seller is not None and held(players[seller]):
        return True
    # Step 2: the next player in turn order from the first player (NIN-095, NIN-A10) who
    # holds gems sells or holds.  NIN-Q02 (our decision): a player holding no gems has
    # nothing to decide, so their sell step passes without an intent; likewise a sell step
    # ends by itself once the player has sold every gem they held.
    n = s["n"]
    k = m["next_index"]
    while k < n:
        seat = (s["first"] + k) % n
        if held(players[seat]):
            j.emit("SellTurnStarted", {"seat": seat, "index": k, "tile": s["line"][m["position"]]})
            return True
        k += 1
    # Step 3: adjust every colour (NIN-097), then the sold gems go back to the bag (NIN-098).
    # NIN-Q06 (our decision): colours in canonical order Y, B, K, O, G.  Each colour is
    # independent, so the order changes no value; it only fixes the event order.
    tile_id = s["line"][m["position"]]
    triggered = []
    sold = dict(m["sold"])
    for c in COLOURS:
        count = sold[c]
        com = s["commodity"][c]
        st = s["stock"][c]
        if count:
            com_after = max(D.COMMODITY_MIN, com - count)
            # NIN-A09: the start row sets the reduction; NIN-A07: never a move below 0;
            # NIN-A08: capped at the last space.
            st_after = min(D.STOCK_END, st + max(0, count - D.stock_row_reduction(st)))
        else:
            com_after = min(D.COMMODITY_MAX, com + 1)
            st_after = st
        if st_after >= D.STOCK_END:
            triggered.append(c)  # NIN-120 (several colours may get there at once, NIN-A08)
        j.emit(
            "MarketAdjusted",
            {
                "tile": tile_id,
                "colour": c,
                "sold": count,
                "commodity_before": com,
                "commodity_after": com_after,
                "stock_before": st,
                "stock_after": st_after,
            },
        )
    j.emit("SoldGemsReturned", {"gems": sold})
    if triggered:
        _end_game(j, triggered)  # NIN-121: only after every colour of this tile was adjusted
        return True
    if m["position"] + 1 < n:
        _start_tile(j, m["position"] + 1)
        return False
    j.emit("UpkeepPhaseStarted", {"round": s["round"]})
    return False


def _end_game(j: _Journal, colours: list[str]) -> None:
    """The game end (NIN-120): lock both tracks (NIN-121), collect on the remaining tiles with
    no sell step and no adjustment (NIN-122; nothing is left at the last tile, NIN-126), sell
    every gem held at the locked values (NIN-123), score (NIN-124, NIN-125).

    NIN-Q05 (our decision): the collection and the final sale are automatic events, since
    nobody has a choice left once the tracks lock."""
    s = j.state
    position = s["market"]["position"]
    j.emit("GameEndTriggered", {"tile": s["line"][position], "colours": colours})
    for p in range(position + 1, s["n"]):  # NIN-122, NIN-126
        _start_tile(j, p)
    n = s["n"]
    for k in range(n):  # NIN-123, in turn order
        seat = (s["first"] + k) % n
        gems = {c: g for c, g in s["players"][seat]["gems"].items() if g}
        if gems:
            money = sum(g * s["commodity"][c] for c, g in gems.items())
            j.emit("FinalSale", {"seat": seat, "gems": gems, "money": money})
    j.emit("GameEnded", {"result": final_result(s)})


def _upkeep(j: _Journal, rng: Rng) -> None:
    """The upkeep phase: 5 random gems for each tile, in line order from the market chart
    (NIN-110, NIN-A13); the moved marks are cleared (NIN-112, applied by ``evolve`` on
    ``RoundStarted``) and the first-player marker passes one seat clockwise (NIN-113), so the
    new first player leads both the next action phase and the next sell order (NIN-A14).
    Then the next round begins: rounds go on until the game end (NIN-021)."""
    s = j.state
    bag = s["bag"]
    pool = [c for c in COLOURS for _ in range(bag[c])]
    for tile_id in s["line"]:
        drawn = rng.draw(pool, D.GEMS_PER_TILE_DRAW)  # NIN-111: fewer if the bag runs out
        j.emit("GemsDrawn", {"tile": tile_id, "gems": drawn})
    j.emit("RoundStarted", {"round": s["round"] + 1, "first": (s["first"] + 1) % s["n"]})
