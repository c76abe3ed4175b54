"""Nauticus names, player counts and component data; every value cites its source.

IDs are those of the rules reference ``docs/rules/nauticus.md``: ``NAU-0xx``/``NAU-1xx`` are rules of the
rulebook, ``NAU-Dxx`` component values the rulebook does not print (our placeholders, its §2), ``NAU-Axx``
readings of unclear rules and ``NAU-Qxx`` decisions of this engine (its §3).
"""

from __future__ import annotations

from typing import Any

NAME = "nauticus"  # the API name
VERSION = "1.0.0"  # rules-engine version, recorded in every game created with it

MIN_PLAYERS = 2  # NAU-001
MAX_PLAYERS = 4  # NAU-001

ROUNDS = {2: 4, 3: 5, 4: 5}  # NAU-020: rounds by player count
PHASES_PER_ROUND = 7  # NAU-021: 7 action phases; the 8th tile is not used that round
SPACES = 8  # NAU-006: 8 action spaces, one action tile each

# --- Items ---------------------------------------------------------------------------------------
# Crest ids (NAU-D05); only equality matters.  "crown" is wild (NAU-082, NAU-092).
CRESTS = ["whale", "anchor", "crestC", "crestD"]  # NAU-D05, in slot order NAU-D03
CROWN = "crown"  # NAU-080, NAU-090: the fifth mast / sail type

HULL_PARTS = ["single", "bow", "center", "stern"]  # NAU-070, in slot order NAU-D03
MASTS = ["mast_" + c for c in CRESTS]  # NAU-080: the masts on sale
SAILS = ["sail_" + c for c in CRESTS]  # NAU-090: the sails on sale
CROWN_MAST = "mast_crown"  # NAU-080: a ship reward only, never on sale
CROWN_SAIL = "sail_crown"  # NAU-090: a ship reward only, never on sale
GOODS = ["coffee", "grain", "fish", "salt"]  # NAU-100, in slot order NAU-D03

ALL_ITEMS = [*HULL_PARTS, *MASTS, CROWN_MAST, *SAILS, CROWN_SAIL, *GOODS]

# NAU-002: the limited stacks.  Workers and Taler have no stack: the supply is unlimited (NAU-004).
STACKS = {
    "single": 18,
    "bow": 18,
    "stern": 18,
    "center": 9,
    **{m: 15 for m in MASTS},
    CROWN_MAST: 12,
    **{s: 15 for s in SAILS},
    CROWN_SAIL: 12,
    **{g: 12 for g in GOODS},
}  # NAU-002

# Warehouse: a count of spaces, its layout never matters (NAU-112, NAU-A04).
WAREHOUSE_CAPACITY = 10  # NAU-D04 (placeholder)
SIZE = {item: (2 if item.startswith("mast_") else 1) for item in ALL_ITEMS}  # NAU-111: masts take 2 spaces

# --- Action tiles ----------------------------------------------------------------------------------
BUY_HULLS = "buy_hulls"
BUY_MASTS = "buy_masts"
BUY_SAILS = "buy_sails"
BUY_GOODS = "buy_goods"
TRANSPORT = "transport"
WITHDRAW_MONEY = "withdraw_money"
DELIVER_GOODS = "deliver_goods"
SCORE_CROWNS = "score_crowns"

ACTIONS = [
    BUY_HULLS,
    BUY_MASTS,
    BUY_SAILS,
    BUY_GOODS,
    TRANSPORT,
    WITHDRAW_MONEY,
    DELIVER_GOODS,
    SCORE_CROWNS,
]  # NAU-006: the 4 blue (paid) tiles, then the 4 light (free) ones

# Items each paid action tile offers, in slot order (NAU-D03).
ITEMS_OF = {BUY_HULLS: HULL_PARTS, BUY_MASTS: MASTS, BUY_SAILS: SAILS, BUY_GOODS: GOODS}  # NAU-D03

# Prices printed beside each board space, per slot (NAU-D02, placeholder; NAU-052 says how they are used).
PRICES = [
    [3, 2, 1, 0],  # space 0 (3 workers)      NAU-D02
    [1, 0, 3, 2],  # space 1 (mast)           NAU-D02
    [2, 3, 0, 1],  # space 2 (sail)           NAU-D02
    [0, 1, 2, 3],  # space 3 (2 VP)           NAU-D02
    [2, 0, 1, 3],  # space 4 (2 workers)      NAU-D02
    [0, 3, 2, 1],  # space 5 (1 worker+good)  NAU-D02
    [3, 1, 0, 2],  # space 6 (1 worker+1 VP)  NAU-D02
    [1, 2, 3, 0],  # space 7 (4 Taler)        NAU-D02
]
REPEAT_PRICE = 4  # NAU-054: the 2nd and every further identical item in one action
EXTRA_PRICE = 2  # NAU-173: the first copy of each item in the extra action
EXTRA_WORKERS = 2  # NAU-171: workers gained when the extra action is played

# Blue workers on the turntable segments, clockwise from the anchor segment (NAU-040; values NAU-D01, placeholder).
TURNTABLE = [0, 2, 1, 2, 3, 1, 3, 2]  # NAU-D01

# Bonuses by board space, in the rulebook's printed order, clockwise from space 0 (NAU-D06).
BONUSES: list[dict[str, Any]] = [
    {"workers": 3},  # NAU-030
    {"item": "mast"},  # NAU-031: a regular mast of choice -> warehouse
    {"item": "sail"},  # NAU-032: a regular sail of choice -> warehouse
    {"vp": 2},  # NAU-033
    {"workers": 2},  # NAU-034
    {"workers": 1, "item": "good"},  # NAU-035
    {"workers": 1, "vp": 1},  # NAU-036
    {"taler": 4},  # NAU-037
]  # NAU-D06
BONUS_ITEMS = {"mast": MASTS, "sail": SAILS, "good": GOODS}  # NAU-031, NAU-032, NAU-035: never a crown

# --- Players -----------------------------------------------------------------------------------------
START_VP = 10  # NAU-012
START_TALER = 15  # NAU-013
START_WORKERS = 4  # NAU-013
# Extra Taler / workers by player count and seat: NAU-014 (2 players), NAU-015 (3), NAU-016 (4).
SEAT_EXTRA_TALER = {2: [0, 1], 3: [0, 1, 2], 4: [0, 1, 1, 2]}  # NAU-014, NAU-015, NAU-016
SEAT_EXTRA_WORKERS = {2: [0, 0], 3: [0, 0, 1], 4: [0, 0, 1, 2]}  # NAU-014, NAU-015, NAU-016
START_SEAT = 0  # NAU-017, NAU-A20, NAU-Q08: seat 0 holds the start-player figure

# NAU-013: the pass tiles; NAU-152, NAU-A02: the highest penalty is turned first.
PASS_TILES = [3, 2, 1]
WITHDRAW_TALER = 2  # NAU-120: Taler per use
CROWN_CAP = 15  # NAU-142: VP per round from score crowns (the extra action has its own, NAU-A11)

# --- Rewards for completed ships ---------------------------------------------------------------------
REWARDS = ["crown_mast", "crown_sail", "victory_points", "taler", "workers", "goods"]  # NAU-162
REWARD_VP = 3  # NAU-162
REWARD_TALER = 7  # NAU-162
REWARD_WORKERS = 3  # NAU-162
REWARD_MAX_EACH = 2  # NAU-163: each reward at most twice per ship

# --- Final scoring (NAU-D07: the overview tile prints the same values) ---------------------------------
SHIP_VP = {1: 2, 2: 8, 3: 20, 4: 35}  # NAU-191, NAU-D07
TALER_PER_VP = 3  # NAU-193
_GOODS_SET_VP = [0, 2, 5, 9, 14, 20]  # NAU-190, NAU-D07: sets of 0..5 goods


def goods_set_vp(n: int) -> int:
    """NAU-190: 1->2, 2->5, 3->9, 4->14, 5->20, each further good of the set +5."""
    return _GOODS_SET_VP[n] if n <= 5 else 20 + 5 * (n - 5)


# --- Search weights (not rules: ``search.evaluate``'s guesses of what unfinished work is worth) -----------
# Fitted to self-play outcomes by ``python -m service.bots.tuning --game nauticus --games 300 --seats 2,3,4
# --seed 0 --sample 0.3`` (docs/BOTS.md, "Tuning the evaluation"): 300 level-1 games seeded 0 to 299, the
# three weights with the least squared error in predicting the VP a seat still gains on the others.
EVAL_SHIP_IN_PROGRESS = 0.43  # share of SHIP_VP an unfinished ship counts for, once all its masts and sails are on
EVAL_STEP_TO_SHIP = 1  # a closed hull counts as this many placed masts / sails toward that share
# Goods waiting on ships (their delivery VP, NAU-190): the fit gives them a small negative weight, kept at 0
# (tuning.nonnegative_least_squares): they are worth their Taler as material and their VP once delivered.
EVAL_GOODS_ON_SHIPS = 0.0

# --- Decisions the rules leave open (NAU-Qxx, docs/rules/nauticus.md §3) -------------------------------
# NAU-Q01: the "first copy at the printed price / 2nd+ copy 4 Taler / all four types give a gift" bookkeeping
#   is kept per action carried out: the board action and the extra action each have their own counts and their
#   own single gift (NAU-173 restates the gift for the extra action; NAU-056 and NAU-A08 read as one gift per
#   action).  Why: the extra action is "an additional action" with "all other rules" in effect.
# NAU-Q02: a bonus tile that can be received must be taken (the start player "receives" the bonus); the
#   choose_action intent names it.  Only if no such tile fits the warehouse or all its stacks are empty is it
#   forfeited (NAU-038).  Why: the rulebook offers no way to refuse a bonus.
# NAU-Q03: the gift is taken with its own intent right after the purchase that completes the set, before
#   anything else; ship rewards (an interruption, NAU-161) come before the gift if the same purchase also
#   completed a ship.  If no gift can be received (stack empty / warehouse full) it is forfeited automatically.
# NAU-Q04: the extra action may be started only for an action of which at least one use is possible once its
#   2 workers are taken, and it must be used at least once before it is ended.  Why: the analogue of NAU-A01;
#   an extra action without a use would be "take 2 workers", which the rulebook does not offer.
# NAU-Q05: a player who carried out at least one use ends the turn with end_turn (more uses may follow until
#   then); a pass ends the turn by itself unless the extra action is still available this turn, in which case
#   the player ends the turn with end_turn or plays the extra action first.
# NAU-Q06: shipyard positions are hull indices counted from the bow end (0); a hull part joining at the bow
#   end gets position 0 (shifting the others), one joining at the stern end gets position len(hull).  Ships
#   are numbered in the order they were started and never removed, so a ship number stays valid all game.
# NAU-Q07: the "2 different goods" reward names its goods in slot order (coffee, grain, fish, salt) so that
#   each choice has exactly one spelling (legal lists it once; decide accepts exactly what legal lists).
# NAU-Q08: the start player is seat 0 (the default of NAU-A20): the game takes no options, so no start_seat.
# NAU-Q09: a pass with all 3 tiles already turned is recorded with pass_tile 0 (NAU-154: no effect).
