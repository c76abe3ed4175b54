"""Component data and every decision the rules leave open, each with its ID.

IDs refer to ``shared/rules/nautilus-industries.clarifications.md``: ``NIN-0xx``
checklist rules, ``NIN-Dxx`` data, ``NIN-Axx`` ambiguities.  ``NIN-Qxx`` are
decisions taken for this engine where the clarifications are still silent.
"""

from __future__ import annotations

#: API name and rules-engine version.
NAME = "nautilus-industries"
VERSION = "1.0.0"

MIN_PLAYERS = 2  # NIN-001, NIN-D04
MAX_PLAYERS = 6  # NIN-001, NIN-D04

#: Colours = companies = commodities: gold/yellow, blue, black, orange, green.
#: This is the canonical order for dicts and listings (conventions of the clarifications).
COLOURS: tuple[str, ...] = ("Y", "B", "K", "O", "G")
COLOUR_SET = frozenset(COLOURS)
COLOUR_NAMES = {"Y": "gold", "B": "blue", "K": "black", "O": "orange", "G": "green"}

#: Order in which a mining zone tile's colour spots are visited when collecting:
#: gold first, then clockwise (NIN-091, NIN-D05).
SPOT_ORDER: tuple[str, ...] = ("Y", "G", "B", "K", "O")

GEMS_PER_COLOUR = 20  # NIN-002: 100 gems, 20 of each of 5 colours
#: Gems of each colour that leave the game as markers: 1 stock marker (NIN-013)
#: and 1 commodity marker (NIN-017).
MARKERS_PER_COLOUR = 2
GEMS_PER_TILE_DRAW = 5  # NIN-014, NIN-110, NIN-D07

SUBS_PER_PLAYER = 3  # NIN-005
START_CAPACITY = 1  # NIN-010
MAX_CAPACITY = 6  # NIN-005, NIN-050 (warehouse die 1–6)
START_MONEY = 0  # NIN-010, NIN-D03: the setup gives no starting cash
ACTIONS_PER_PLAYER = 3  # NIN-030

#: Sub upgrade: pay $5 for one gem marker of a chosen colour (NIN-043).
UPGRADE_COST = 5
#: A sub takes at most this many gems of its own colour (NIN-091).
SUB_TAKE = 2

#: Commodity values taken at setup by scarcity rank 1..5 (least common first) (NIN-015).
SETUP_VALUES: tuple[int, ...] = (6, 5, 4, 3, 2)
COMMODITY_MIN = 1  # NIN-097, NIN-D06
COMMODITY_MAX = 10  # NIN-097, NIN-D06

STOCK_START = 0  # NIN-013: the "initial space" / zero column
STOCK_END = 24  # NIN-120: the ×10 space ends the game; NIN-A08: never beyond
#: First space of row 2 and row 3 of the stock chart (NIN-097, NIN-D01).
STOCK_ROW2 = 10
STOCK_ROW3 = 18

#: Stock chart space -> multiplier (NIN-D01): max(0, floor(s/2) - 2); fits the
#: rulebook's 15 -> ×5, 18 -> ×7, 24 -> ×10.
MULTIPLIER: tuple[int, ...] = tuple(max(0, s // 2 - 2) for s in range(STOCK_END + 1))

#: Certificates: each company has shares 1..6, one certificate each (NIN-004).
SHARES: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
#: Certificate price (NIN-D02): $4 per share.
CERT_PRICE: dict[str, dict[int, int]] = {c: {s: 4 * s for s in SHARES} for c in COLOURS}


def stock_row_reduction(space: int) -> int:
    """How many spaces fewer a stock marker moves, by the row it starts on (NIN-097, NIN-A09)."""
    if space >= STOCK_ROW3:
        return 2
    if space >= STOCK_ROW2:
        return 1
    return 0


# --- Decisions where the clarifications are silent ------------------------------------------
#
# NIN-Q01  Setup order of the marker gems.  All 10 marker gems (5 stock markers,
#          NIN-013, and 5 commodity markers, NIN-017) are set aside from the bag
#          BEFORE the zone tiles are drawn.  The rulebook draws first and takes the
#          commodity markers afterwards, which could (very rarely) find no gem of a
#          colour left in the bag; setting them aside first always works, keeps the
#          bag at 100 - 10 - 5N after setup and changes nothing else.
#
# NIN-Q02  Sell step of a player who holds no gems (NIN-095).  Such a player has
#          nothing to decide, so their sell step passes without an intent; likewise a
#          player's sell step ends by itself once they have sold every gem they held.
#
# NIN-Q03  Intent granularity (small atomic intents, replacing NIN-I01):
#          * Place sub is ``place_sub {tile, colour}``; if the player could pay for
#            the optional upgrade (NIN-043/044) the same action continues with
#            ``upgrade_sub {colour}`` or ``decline_upgrade``.  Without $5 or with an
#            empty bag the action ends with the placement.
#          * Switch two gems is ``switch_gem_from {tile, colour}`` then
#            ``switch_gem_with {tile, colour}``.  The first gem is offered only if
#            some valid second gem exists, so the action can always be completed.
#          * Switch area mining order is ``switch_tiles {tile_a, tile_b}`` with
#            ``tile_a < tile_b`` (tile ids, NIN-I02): one command per pair.
#          * A sale is ``sell {colour, count}`` (one colour at a time, any number of
#            times) and ``hold`` ends the player's sell step keeping the rest; ``hold``
#            is offered only when the kept gems fit the warehouse (NIN-096, NIN-A02).
#
# NIN-Q04  Tile identity.  Tiles have ids 0..N-1 (their setup position); the line is
#          the list of tile ids from the market chart outward (NIN-I02).  Commands
#          name tiles by id.
#
# NIN-Q05  Game-end final sale (NIN-123) and the collection on the remaining tiles
#          (NIN-122) are automatic: nobody has a choice left once the tracks lock.
#
# NIN-Q06  Adjusting order within a step 3 (NIN-097): colours in canonical order
#          Y, B, K, O, G.  The order does not change any value (each colour is
#          independent); it only fixes the event order.
