"""What a seat may do (``legal``) and what happens when it does (``decide``).

``legal`` and ``decide`` share the predicates below, so that ``decide`` accepts
exactly the commands ``legal`` lists.  Command objects are immutable and are
cached, so building a legal list allocates next to nothing (speed).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from service.games.base import Command, Event, RuleViolation, State, clone_state
from service.games.nautilus_industries import data as D
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
from service.games.nautilus_industries.scoring import final_result
from service.games.rng import Rng

COLOURS = D.COLOURS
_DECLINE = DeclineUpgrade()
_UPGRADE_WAREHOUSE = UpgradeWarehouse()
_HOLD = Hold()


@cache
def _place_sub(tile: int, colour: str) -> PlaceSub:
    return PlaceSub(tile, colour)


@cache
def _upgrade_sub(colour: str) -> UpgradeSub:
    return UpgradeSub(colour)


@cache
def _switch_from(tile: int, colour: str) -> SwitchGemFrom:
    return SwitchGemFrom(tile, colour)


@cache
def _switch_with(tile: int, colour: str) -> SwitchGemWith:
    return SwitchGemWith(tile, colour)


@cache
def _switch_tiles(a: int, b: int) -> SwitchTiles:
    return SwitchTiles(a, b)


@cache
def _buy(company: str, shares: int) -> BuyStock:
    return BuyStock(company, shares)


@cache
def _sell(colour: str, count: int) -> Sell:
    return Sell(colour, count)


# --- who acts -----------------------------------------------------------------------------------


def actor(state: State) -> int | None:
    """The seat to act now, or None (automatic step or game over)."""
    phase = state["phase"]
    if phase == "action":
        n = state["n"]
        done = state["actions_done"]
        if done >= D.ACTIONS_PER_PLAYER * n:
            return None
        return (state["first"] + done) % n  # NIN-030: 3 laps in turn order
    if phase == "market":
        return state["market"]["seller"]
    return None


def to_act(state: State) -> list[int]:
    seat = actor(state)
    return [] if seat is None else [seat]


# --- shared predicates ---------------------------------------------------------------------------


def _is_int(x: Any) -> bool:
    return type(x) is int


def _is_colour(x: Any) -> bool:
    return type(x) is str and x in D.COLOUR_SET


def _held(player: dict[str, Any]) -> int:
    g = player["gems"]
    return g["Y"] + g["B"] + g["K"] + g["O"] + g["G"]


def _switch_partners(state: State) -> tuple[list[tuple[int, str]], dict[int, int], dict[str, int]]:
    """Non-empty colour spots and, per tile / per colour, how many there are.  A spot
    (t, c) can start a gem switch iff some non-empty spot has another tile and another
    colour (NIN-060, NIN-061): E - rows[t] - cols[c] + 1 > 0."""
    spots: list[tuple[int, str]] = []
    rows: dict[int, int] = {}
    cols = dict.fromkeys(COLOURS, 0)
    for t, tile in enumerate(state["tiles"]):
        r = 0
        for c, k in tile["gems"].items():
            if k:
                spots.append((t, c))
                r += 1
                cols[c] += 1
        rows[t] = r
    return spots, rows, cols


def _can_switch_from(state: State, tile: int, colour: str) -> bool:
    spots, rows, cols = _switch_partners(state)
    if not state["tiles"][tile]["gems"][colour]:
        return False
    return len(spots) - rows[tile] - cols[colour] + 1 > 0


def _cheapest_available(state: State) -> int | None:
    best = None
    for company in COLOURS:
        owners = state["certs"][company]
        for i, owner in enumerate(owners):
            if owner is None:
                price = D.CERT_PRICE[company][i + 1]
                if best is None or price < best:
                    best = price
                break  # prices rise with shares (NIN-D02)
    return best


def has_action(state: State, seat: int) -> bool:
    """Whether ``seat`` has any action it may take (otherwise NIN-033 forfeits it)."""
    player = state["players"][seat]
    if player["capacity"] < D.MAX_CAPACITY:
        return True
    tiles = state["tiles"]
    if player["subs"] and any(s is None for tile in tiles for s in tile["subs"].values()):
        return True
    if sum(1 for tile in tiles if not tile["moved"]) >= 2:
        return True
    cheapest = _cheapest_available(state)
    if cheapest is not None and cheapest <= player["money"]:
        return True
    spots, rows, cols = _switch_partners(state)
    e = len(spots)
    return any(e - rows[t] - cols[c] + 1 > 0 for t, c in spots)


# --- legal ---------------------------------------------------------------------------------------


def legal(state: State, seat: int) -> list[Command]:
    if seat != actor(state):
        return []
    if state["phase"] == "market":
        return _legal_sell(state, seat)
    pending = state["pending"]
    if pending is not None:
        if pending["kind"] == "upgrade":
            bag = state["bag"]
            out: list[Command] = [_upgrade_sub(c) for c in COLOURS if bag[c]]
            out.append(_DECLINE)
            return out
        return _legal_switch_with(state, pending["tile"], pending["colour"])
    return _legal_actions(state, seat)


def _legal_actions(state: State, seat: int) -> list[Command]:
    player = state["players"][seat]
    tiles = state["tiles"]
    out: list[Command] = []
    # Place sub (NIN-040, NIN-041, NIN-042)
    if player["subs"]:
        for t, tile in enumerate(tiles):
            for c, s in tile["subs"].items():
                if s is None:
                    out.append(_place_sub(t, c))
    # Upgrade warehouse capacity (NIN-050)
    if player["capacity"] < D.MAX_CAPACITY:
        out.append(_UPGRADE_WAREHOUSE)
    # Switch two gems, first gem (NIN-060, NIN-061, NIN-Q03)
    spots, rows, cols = _switch_partners(state)
    e = len(spots)
    for t, c in spots:
        if e - rows[t] - cols[c] + 1 > 0:
            out.append(_switch_from(t, c))
    # Switch area mining order (NIN-070, NIN-071)
    free = [t for t, tile in enumerate(tiles) if not tile["moved"]]
    for i, a in enumerate(free):
        for b in free[i + 1 :]:
            out.append(_switch_tiles(a, b))
    # Purchase company stock (NIN-080, NIN-081)
    money = player["money"]
    for company in COLOURS:
        prices = D.CERT_PRICE[company]
        for i, owner in enumerate(state["certs"][company]):
            if owner is None and prices[i + 1] <= money:
                out.append(_buy(company, i + 1))
    return out


def _legal_switch_with(state: State, from_tile: int, from_colour: str) -> list[Command]:
    out: list[Command] = []
    for t, tile in enumerate(state["tiles"]):
        if t == from_tile:
            continue
        for c, k in tile["gems"].items():
            if k and c != from_colour:
                out.append(_switch_with(t, c))
    return out


def _legal_sell(state: State, seat: int) -> list[Command]:
    player = state["players"][seat]
    out: list[Command] = []
    for c, k in player["gems"].items():
        for count in range(1, k + 1):
            out.append(_sell(c, count))
    if _held(player) <= player["capacity"]:  # NIN-096, NIN-A02
        out.append(_HOLD)
    return out


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
    phase = state["phase"]
    if phase == "over":
        raise RuleViolation("game_over", "The game is over (NIN-120); no more intents are accepted.")
    if not _is_int(seat) or not 0 <= seat < state["n"]:
        raise RuleViolation("no_such_seat", f"There is no seat {seat!r} in this game.")
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise RuleViolation("unknown_command", f"{type(command).__name__} is not an intent of Nautilus Industries.")
    if seat != actor(state):
        raise RuleViolation("not_your_turn", _whose_turn(state))
    primary = handler(state, seat, command)
    events = _without_follow_ups(state, seat, primary)
    if events is not None:
        return events
    j = _Journal(state)
    for type_, data in primary:
        j.emit(type_, data)
    _advance(j, rng)
    return j.events


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
        held = _held(state["players"][seat])
        return events if held > data["count"] else None  # the seller goes on selling
    if type_ == "GemsHeld":
        # Other players' gems do not change when one holds: the next seller can be found now.
        m = state["market"]
        n = state["n"]
        players = state["players"]
        for k in range(m["next_index"], n):
            other = (state["first"] + k) % n
            if _held(players[other]):
                tile = state["line"][m["position"]]
                events.append(Event("SellTurnStarted", {"seat": other, "index": k, "tile": tile}))
                return events
        return None  # step 3 follows
    return None


def _whose_turn(state: State) -> str:
    seat = actor(state)
    if state["phase"] == "market":
        return f"It is seat {seat}'s sell step at this tile (NIN-095: players sell in turn order)."
    return f"It is seat {seat}'s action (NIN-030: actions are taken one at a time in turn order)."


def _need_phase(state: State, phase: str, what: str) -> None:
    if state["phase"] != phase:
        where = "action" if phase == "action" else "market"
        raise RuleViolation(
            "wrong_phase", f"{what} is only possible in the {where} phase; it is the {state['phase']} phase."
        )


def _need_no_pending(state: State) -> None:
    pending = state["pending"]
    if pending is not None:
        what = (
            "choose the sub's upgrade or decline it"
            if pending["kind"] == "upgrade"
            else ("choose the second gem of the switch")
        )
        raise RuleViolation("action_in_progress", f"Finish the action you started first: {what}.")


def _check_tile(state: State, tile: Any, name: str = "tile") -> None:
    if not _is_int(tile) or not 0 <= tile < state["n"]:
        raise RuleViolation(
            "no_such_tile", f"{name} {tile!r} is not a mining zone tile (ids 0..{state['n'] - 1}, NIN-012)."
        )


def _check_colour(colour: Any, what: str = "colour") -> None:
    if not _is_colour(colour):
        raise RuleViolation("no_such_colour", f"{what} {colour!r} is not one of Y, B, K, O, G.")


Primary = list[tuple[str, dict[str, Any]]]


def _do_place_sub(state: State, seat: int, cmd: PlaceSub) -> Primary:
    _need_phase(state, "action", "Placing a sub")
    _need_no_pending(state)
    _check_tile(state, cmd.tile)
    _check_colour(cmd.colour)
    player = state["players"][seat]
    if not player["subs"]:
        raise RuleViolation("no_free_sub", "All 3 of your subs are already placed this round (NIN-040).")
    if state["tiles"][cmd.tile]["subs"][cmd.colour] is not None:
        raise RuleViolation(
            "spot_taken", "That colour spot already holds a sub; each spot holds at most one (NIN-041)."
        )
    # NIN-043/044: the optional upgrade is offered if it could be paid for and a gem exists.
    offered = player["money"] >= D.UPGRADE_COST and any(state["bag"].values())
    return [
        (
            "SubPlaced",
            {"seat": seat, "tile": cmd.tile, "colour": cmd.colour, "upgrade_offered": offered},
        )
    ]


def _need_pending(state: State, kind: str) -> dict[str, Any]:
    _need_phase(state, "action", "This")
    pending = state["pending"]
    if pending is None or pending["kind"] != kind:
        if kind == "upgrade":
            msg = "There is no sub just placed to upgrade; the upgrade is part of placing a sub (NIN-043)."
        else:
            msg = "Choose the first gem of the switch with switch_gem_from first (NIN-060)."
        raise RuleViolation("no_action_in_progress", msg)
    return pending


def _do_upgrade_sub(state: State, seat: int, cmd: UpgradeSub) -> Primary:
    pending = _need_pending(state, "upgrade")
    _check_colour(cmd.colour, "upgrade colour")
    if state["players"][seat]["money"] < D.UPGRADE_COST:
        raise RuleViolation("insufficient_funds", "A sub upgrade costs $5 (NIN-043).")
    if not state["bag"][cmd.colour]:
        raise RuleViolation(
            "colour_not_in_bag", "There is no gem of that colour left in the bag for the upgrade (NIN-044)."
        )
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
    pending = _need_pending(state, "upgrade")
    return [("UpgradeDeclined", {"seat": seat, "tile": pending["tile"], "colour": pending["colour"]})]


def _do_upgrade_warehouse(state: State, seat: int, cmd: UpgradeWarehouse) -> Primary:
    _need_phase(state, "action", "Upgrading the warehouse")
    _need_no_pending(state)
    cap = state["players"][seat]["capacity"]
    if cap >= D.MAX_CAPACITY:
        raise RuleViolation("capacity_at_maximum", "Your warehouse capacity is already 6, the maximum (NIN-050).")
    return [("WarehouseUpgraded", {"seat": seat, "capacity": cap + 1})]


def _do_switch_gem_from(state: State, seat: int, cmd: SwitchGemFrom) -> Primary:
    _need_phase(state, "action", "Switching gems")
    _need_no_pending(state)
    _check_tile(state, cmd.tile)
    _check_colour(cmd.colour)
    if not state["tiles"][cmd.tile]["gems"][cmd.colour]:
        raise RuleViolation("no_such_gem", "That tile has no gem of that colour to switch (NIN-060).")
    if not _can_switch_from(state, cmd.tile, cmd.colour):
        raise RuleViolation(
            "no_gem_to_switch_with",
            "No other tile has a gem of another colour to switch it with (NIN-060, NIN-061).",
        )
    return [("GemChosen", {"seat": seat, "tile": cmd.tile, "colour": cmd.colour})]


def _do_switch_gem_with(state: State, seat: int, cmd: SwitchGemWith) -> Primary:
    pending = _need_pending(state, "switch")
    _check_tile(state, cmd.tile)
    _check_colour(cmd.colour)
    if cmd.tile == pending["tile"]:
        raise RuleViolation("same_tile", "The second gem must come from a different tile (NIN-060).")
    if cmd.colour == pending["colour"]:
        raise RuleViolation("same_colour", "Switching two gems of the same colour changes nothing (NIN-061, NIN-A05).")
    if not state["tiles"][cmd.tile]["gems"][cmd.colour]:
        raise RuleViolation("no_such_gem", "That tile has no gem of that colour to switch (NIN-060).")
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
    _need_phase(state, "action", "Switching the mining order")
    _need_no_pending(state)
    _check_tile(state, cmd.tile_a, "tile_a")
    _check_tile(state, cmd.tile_b, "tile_b")
    a, b = cmd.tile_a, cmd.tile_b
    if a == b:
        raise RuleViolation("same_tile", "Switching the mining order needs two different tiles (NIN-070).")
    if a > b:
        raise RuleViolation(
            "tiles_not_ordered", "Name the pair with tile_a < tile_b (each pair has one intent, NIN-Q03)."
        )
    tiles = state["tiles"]
    if tiles[a]["moved"] or tiles[b]["moved"]:
        raise RuleViolation("tile_already_moved", "A tile may be moved only once per action phase (NIN-071, NIN-A12).")
    line = list(state["line"])
    ia, ib = line.index(a), line.index(b)
    line[ia], line[ib] = b, a
    return [("TilesSwitched", {"seat": seat, "tile_a": a, "tile_b": b, "line": line})]


def _do_buy_stock(state: State, seat: int, cmd: BuyStock) -> Primary:
    _need_phase(state, "action", "Buying stock")
    _need_no_pending(state)
    _check_colour(cmd.company, "company")
    if not _is_int(cmd.shares) or cmd.shares not in D.SHARES:
        raise RuleViolation("no_such_certificate", f"Certificates have 1..6 shares, not {cmd.shares!r} (NIN-004).")
    if state["certs"][cmd.company][cmd.shares - 1] is not None:
        raise RuleViolation("certificate_sold", "That certificate has already been bought (NIN-080).")
    price = D.CERT_PRICE[cmd.company][cmd.shares]
    if state["players"][seat]["money"] < price:
        raise RuleViolation("insufficient_funds", f"That certificate costs ${price}; you cannot afford it (NIN-081).")
    return [("StockPurchased", {"seat": seat, "company": cmd.company, "shares": cmd.shares, "price": price})]


def _do_sell(state: State, seat: int, cmd: Sell) -> Primary:
    _need_phase(state, "market", "Selling gems (NIN-099)")
    _check_colour(cmd.colour)
    if not _is_int(cmd.count) or cmd.count < 1:
        raise RuleViolation("invalid_count", "Sell at least 1 gem.")
    held = state["players"][seat]["gems"][cmd.colour]
    if cmd.count > held:
        raise RuleViolation("not_enough_gems", f"You hold only {held} gem(s) of that colour (NIN-095).")
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
    _need_phase(state, "market", "Holding gems")
    player = state["players"][seat]
    held = _held(player)
    if held > player["capacity"]:
        raise RuleViolation(
            "over_capacity",
            f"You hold {held} gems but your warehouse keeps {player['capacity']}: sell the excess (NIN-096).",
        )
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


# --- automatic steps -----------------------------------------------------------------------------


def _advance(j: _Journal, rng: Rng) -> None:
    """Emit every automatic step until a seat must decide or the game is over."""
    s = j.state
    while True:
        phase = s["phase"]
        if phase == "action":
            if s["pending"] is not None:
                return
            n = s["n"]
            if s["actions_done"] >= D.ACTIONS_PER_PLAYER * n:
                j.emit("MarketPhaseStarted", {"round": s["round"]})
                _start_tile(j, 0)
                continue
            seat = (s["first"] + s["actions_done"]) % n
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
    """Step 1, collect (NIN-090..094)."""
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
    if seller is not None and _held(players[seller]):
        return True
    # Step 2: the next player in turn order who holds gems sells or holds (NIN-095, NIN-Q02).
    n = s["n"]
    k = m["next_index"]
    while k < n:
        seat = (s["first"] + k) % n
        if _held(players[seat]):
            j.emit("SellTurnStarted", {"seat": seat, "index": k, "tile": s["line"][m["position"]]})
            return True
        k += 1
    # Step 3: adjust every colour (NIN-097), then the sold gems go back to the bag (NIN-098).
    tile_id = s["line"][m["position"]]
    triggered = []
    sold = dict(m["sold"])
    for c in COLOURS:
        count = sold[c]
        com = s["commodity"][c]
        st = s["stock"][c]
        if count:
            com_after = max(D.COMMODITY_MIN, com - count)
            st_after = min(D.STOCK_END, st + max(0, count - D.stock_row_reduction(st)))
        else:
            com_after = min(D.COMMODITY_MAX, com + 1)
            st_after = st
        if st_after >= D.STOCK_END:
            triggered.append(c)
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
        _end_game(j, triggered)
        return True
    if m["position"] + 1 < n:
        _start_tile(j, m["position"] + 1)
        return False
    j.emit("UpkeepPhaseStarted", {"round": s["round"]})
    return False


def _end_game(j: _Journal, colours: list[str]) -> None:
    """NIN-120..126: lock the tracks, collect on the remaining tiles, sell everything, score."""
    s = j.state
    position = s["market"]["position"]
    j.emit("GameEndTriggered", {"tile": s["line"][position], "colours": colours})
    for p in range(position + 1, s["n"]):  # NIN-122 (empty at the last tile, NIN-126)
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
    """NIN-110..113: refill the tiles in line order, clear moved marks, pass the marker."""
    s = j.state
    bag = s["bag"]
    pool = [c for c in COLOURS for _ in range(bag[c])]
    for tile_id in s["line"]:
        drawn = rng.draw(pool, D.GEMS_PER_TILE_DRAW)  # NIN-111: fewer if the bag runs out
        j.emit("GemsDrawn", {"tile": tile_id, "gems": drawn})
    j.emit("RoundStarted", {"round": s["round"] + 1, "first": (s["first"] + 1) % s["n"]})
