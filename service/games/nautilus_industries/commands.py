"""The intents a seat may send: small atomic commands (NIN-Q03).

NIN-Q03, intent granularity (our decision; the rulebook names actions, not messages):

* Place sub is ``place_sub {tile, colour}``; if the player could pay for the optional
  upgrade (NIN-043, NIN-044) the same action continues with ``upgrade_sub {colour}`` or
  ``decline_upgrade``.  Without $5 or with an empty bag the action ends with the placement.
* Switch two gems is ``switch_gem_from {tile, colour}`` then ``switch_gem_with {tile, colour}``.
  The first gem is offered only if some valid second gem exists, so the action can always
  be completed.
* Switch area mining order is ``switch_tiles {tile_a, tile_b}`` with ``tile_a < tile_b``:
  one command per pair.
* A sale is ``sell {colour, count}`` (one colour at a time, any number of times) and
  ``hold`` ends the player's sell step keeping the rest; ``hold`` is offered only when the
  kept gems fit the warehouse (NIN-096, NIN-A02).

NIN-Q04, tile identity: commands name tiles by their fixed id ``0..N-1`` (their setup
position), never by line position, so a tile keeps its name when the mining order changes.

There is no pass command: a player must take an action (NIN-031).
"""

from __future__ import annotations

from dataclasses import dataclass

from service.games.base import Command

# --- Action phase (rulebook "The Action Phase", NIN-030) -----------------------------------------


@dataclass(frozen=True)
class PlaceSub(Command):
    """Place sub (NIN-040): put an unused sub on ``colour``'s spot of zone tile ``tile``."""

    type = "place_sub"
    tile: int
    colour: str


@dataclass(frozen=True)
class UpgradeSub(Command):
    """Optional upgrade of the sub just placed (NIN-043): pay $5, put a ``colour`` gem on it."""

    type = "upgrade_sub"
    colour: str


@dataclass(frozen=True)
class DeclineUpgrade(Command):
    """Leave the sub just placed without an upgrade (NIN-043 is optional)."""

    type = "decline_upgrade"


@dataclass(frozen=True)
class UpgradeWarehouse(Command):
    """Upgrade warehouse capacity by 1 (NIN-050)."""

    type = "upgrade_warehouse"


@dataclass(frozen=True)
class SwitchGemFrom(Command):
    """Switch two gems, first half (NIN-060): take the ``colour`` gem of tile ``tile``.
    The rulebook's "Switch Two Cubes": cube and gem are the same piece (NIN-A01)."""

    type = "switch_gem_from"
    tile: int
    colour: str


@dataclass(frozen=True)
class SwitchGemWith(Command):
    """Switch two gems, second half (NIN-060): exchange it with the ``colour`` gem of ``tile``."""

    type = "switch_gem_with"
    tile: int
    colour: str


@dataclass(frozen=True)
class SwitchTiles(Command):
    """Switch area mining order (NIN-070): swap the line positions of two tiles (ids, a < b)."""

    type = "switch_tiles"
    tile_a: int
    tile_b: int


@dataclass(frozen=True)
class BuyStock(Command):
    """Purchase company stock (NIN-080): buy certificate ``company``-``shares``."""

    type = "buy_stock"
    company: str
    shares: int


# --- Market phase, step 2 (NIN-095, NIN-096) -----------------------------------------------------


@dataclass(frozen=True)
class Sell(Command):
    """Sell ``count`` gems of ``colour`` at the current commodity value (NIN-095)."""

    type = "sell"
    colour: str
    count: int


@dataclass(frozen=True)
class Hold(Command):
    """End this sell step keeping the remaining gems (they must fit the warehouse, NIN-096)."""

    type = "hold"


COMMANDS: dict[str, type[Command]] = {
    cls.type: cls
    for cls in (
        PlaceSub,
        UpgradeSub,
        DeclineUpgrade,
        UpgradeWarehouse,
        SwitchGemFrom,
        SwitchGemWith,
        SwitchTiles,
        BuyStock,
        Sell,
        Hold,
    )
}
