"""Component data of Nautilus Industries: every count, track and price the engine uses.

Each value names its source: a section of the rulebook ("Contents", "Setup", "The Market
Phase"...) or an ID of the repo's rules reference ``docs/rules/nautilus-industries.md``
(``NIN-0xx`` checklist rules, ``NIN-Dxx`` data the rulebook leaves out, ``NIN-Axx``
ambiguities we resolved).  The decisions we took where the rules are silent (``NIN-Qxx``)
are written where they are implemented.
"""

from __future__ import annotations

#: API name.
NAME = "nautilus-industries"
#: Rules-engine version recorded in every game (unchanged by refactors that keep behaviour).
VERSION = "1.0.0"

# Rulebook "Contents": one zone tile, 3 subs and a warehouse die per player colour, 6 colours.
MIN_PLAYERS = 2  # NIN-001, NIN-D04
MAX_PLAYERS = 6  # NIN-001, NIN-D04

#: Colours = companies = commodities (rulebook "Contents": 5 gem colours, 5 companies):
#: gold/yellow, blue, black, orange, green.  This is the canonical order for dicts and listings.
COLOURS: tuple[str, ...] = ("Y", "B", "K", "O", "G")
COLOUR_SET = frozenset(COLOURS)

#: Order in which a mining zone tile's colour spots are visited when collecting:
#: gold first, then clockwise (rulebook "The Market Phase" step 1; NIN-091, NIN-D05).
SPOT_ORDER: tuple[str, ...] = ("Y", "G", "B", "K", "O")

GEMS_PER_COLOUR = 20  # NIN-002: 100 gems, 20 of each of 5 colours (rulebook "Contents")
#: Gems of each colour that leave the game as markers: 1 stock marker (NIN-013)
#: and 1 commodity marker (NIN-017).
MARKERS_PER_COLOUR = 2
GEMS_PER_TILE_DRAW = 5  # NIN-014, NIN-110, NIN-D07: 5 gems per tile at setup and at each upkeep

SUBS_PER_PLAYER = 3  # NIN-005 (rulebook "Contents": 18 subs, 3 per player colour)
START_CAPACITY = 1  # NIN-010: the warehouse die starts on 1 (rulebook "Setup")
MAX_CAPACITY = 6  # NIN-005, NIN-050: the warehouse die shows 1–6
START_MONEY = 0  # NIN-010, NIN-D03: the setup gives no starting cash
ACTIONS_PER_PLAYER = 3  # NIN-030 (rulebook "The Action Phase")

#: Sub upgrade: pay $5 for one gem marker of a chosen colour (NIN-043, rulebook "Place Sub").
UPGRADE_COST = 5
#: A sub takes at most this many gems of its own colour (NIN-091).
SUB_TAKE = 2

#: Commodity values taken at setup by scarcity rank 1..5, least common first (NIN-015).
SETUP_VALUES: tuple[int, ...] = (6, 5, 4, 3, 2)
COMMODITY_MIN = 1  # NIN-097, NIN-D06
COMMODITY_MAX = 10  # NIN-097, NIN-D06

STOCK_START = 0  # NIN-013: the "initial space" of the stock chart
STOCK_END = 24  # NIN-120: the ×10 space ends the game; NIN-A08: a marker never goes beyond it
#: First space of row 2 and of row 3 of the stock chart (NIN-097, NIN-D01; rulebook
#: "The Market Phase" step 3: rows 10–17 and 18–24).
STOCK_ROW2 = 10
STOCK_ROW3 = 18

#: Stock chart space -> multiplier (NIN-D01): max(0, floor(s/2) - 2); it fits the
#: rulebook's 15 -> ×5, 18 -> ×7 and 24 -> ×10 ("Game End" example).
MULTIPLIER: tuple[int, ...] = tuple(max(0, s // 2 - 2) for s in range(STOCK_END + 1))

#: Certificates: each company has shares 1..6, one certificate each (NIN-004).
SHARES: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
#: Certificate price (NIN-D02): $4 per share.
CERT_PRICE: dict[str, dict[int, int]] = {c: {s: 4 * s for s in SHARES} for c in COLOURS}


def stock_row_reduction(space: int) -> int:
    """How many spaces fewer a stock marker moves, by the row it starts the step on
    (NIN-097; NIN-A09: the start space decides, not the end space)."""
    if space >= STOCK_ROW3:
        return 2
    if space >= STOCK_ROW2:
        return 1
    return 0


#: Search weight, not a rule (``search.evaluate``): the share of their commodity value (NIN-095) that gems
#: still held count for, since selling them moves the market before they are paid.
EVAL_GEM_SHARE = 0.8
#: Search weight, not a rule: the share of the leading stock's distance to the end space (NIN-120) every
#: company is expected to climb before the game ends.
EVAL_STOCK_PROGRESS = 0.6
