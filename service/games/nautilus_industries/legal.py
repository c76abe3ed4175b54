"""Who acts (``to_act``) and what they may send (``legal``).

``rules.decide`` checks commands with the predicates below, so that it accepts exactly
the commands ``legal`` lists.  Command objects are immutable and cached, so building a
legal list allocates next to nothing (speed: random playouts call it at every step).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from service.games.base import Command, State
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


# --- who acts ------------------------------------------------------------------------------------


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
        return state["market"]["seller"]  # NIN-095: the seat whose sell step it is
    return None


def to_act(state: State) -> list[int]:
    """The seats that must send an intent: one at a time in this game, none when it is over."""
    seat = actor(state)
    return [] if seat is None else [seat]


# --- shared predicates (legal and rules.decide) --------------------------------------------------


def is_int(x: Any) -> bool:
    return type(x) is int


def is_colour(x: Any) -> bool:
    return type(x) is str and x in D.COLOUR_SET


def held(player: dict[str, Any]) -> int:
    """How many gems a player holds (all colours)."""
    g = player["gems"]
    return g["Y"] + g["B"] + g["K"] + g["O"] + g["G"]


def switch_partners(state: State) -> tuple[list[tuple[int, str]], dict[int, int], dict[str, int]]:
    """Non-empty colour spots and, per tile / per colour, how many there are.  A spot
    (t, c) can start a gem switch iff some non-empty spot has another tile (NIN-060) and
    another colour (NIN-061): E - rows[t] - cols[c] + 1 > 0."""
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


def can_switch_from(state: State, tile: int, colour: str) -> bool:
    """Whether the ``colour`` gem of ``tile`` exists and has a partner (NIN-060, NIN-061, NIN-Q03)."""
    spots, rows, cols = switch_partners(state)
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
    spots, rows, cols = switch_partners(state)
    e = len(spots)
    return any(e - rows[t] - cols[c] + 1 > 0 for t, c in spots)


# --- legal ---------------------------------------------------------------------------------------


def legal(state: State, seat: int) -> list[Command]:
    """Every command ``seat`` may send now; ``[]`` if it is not to act."""
    if seat != actor(state):
        return []
    if state["phase"] == "market":
        return _legal_sell(state, seat)
    pending = state["pending"]
    if pending is not None:
        if pending["kind"] == "upgrade":
            # NIN-043, NIN-044: any colour still in the bag, or no upgrade at all.
            bag = state["bag"]
            out: list[Command] = [_upgrade_sub(c) for c in COLOURS if bag[c]]
            out.append(_DECLINE)
            return out
        return _legal_switch_with(state, pending["tile"], pending["colour"])
    return _legal_actions(state, seat)


def _legal_actions(state: State, seat: int) -> list[Command]:
    """The five actions of the rulebook's "The Action Phase", each as often as its condition
    holds: nothing limits taking the same action again (NIN-032), and there is no pass (NIN-031)."""
    player = state["players"][seat]
    tiles = state["tiles"]
    out: list[Command] = []
    # Place sub (NIN-040, NIN-041, NIN-042: any free spot, also an empty one or on a tile
    # where the player already has a sub)
    if player["subs"]:
        for t, tile in enumerate(tiles):
            for c, s in tile["subs"].items():
                if s is None:
                    out.append(_place_sub(t, c))
    # Upgrade warehouse capacity (NIN-050)
    if player["capacity"] < D.MAX_CAPACITY:
        out.append(_UPGRADE_WAREHOUSE)
    # Switch two gems, first gem (NIN-060, NIN-061, NIN-Q03)
    spots, rows, cols = switch_partners(state)
    e = len(spots)
    for t, c in spots:
        if e - rows[t] - cols[c] + 1 > 0:
            out.append(_switch_from(t, c))
    # Switch area mining order (NIN-070, NIN-071: tiles not moved yet this action phase)
    free = [t for t, tile in enumerate(tiles) if not tile["moved"]]
    for i, a in enumerate(free):
        for b in free[i + 1 :]:
            out.append(_switch_tiles(a, b))
    # Purchase company stock (NIN-080, NIN-081); NIN-082: no limit per player, and there is
    # no command to sell a certificate back.
    money = player["money"]
    for company in COLOURS:
        prices = D.CERT_PRICE[company]
        for i, owner in enumerate(state["certs"][company]):
            if owner is None and prices[i + 1] <= money:
                out.append(_buy(company, i + 1))
    return out


def _legal_switch_with(state: State, from_tile: int, from_colour: str) -> list[Command]:
    """The second gem: another tile (NIN-060), another colour (NIN-061, NIN-A05)."""
    out: list[Command] = []
    for t, tile in enumerate(state["tiles"]):
        if t == from_tile:
            continue
        for c, k in tile["gems"].items():
            if k and c != from_colour:
                out.append(_switch_with(t, c))
    return out


def _legal_sell(state: State, seat: int) -> list[Command]:
    """Sell any number of one colour (NIN-095); hold only when the rest fits (NIN-096, NIN-A02)."""
    player = state["players"][seat]
    out: list[Command] = []
    for c, k in player["gems"].items():
        for count in range(1, k + 1):
            out.append(_sell(c, count))
    if held(player) <= player["capacity"]:
        out.append(_HOLD)
    return out
