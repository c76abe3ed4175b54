"""Component data of Waters of Nereus: every value carries the ID it comes from.

The IDs are those of ``docs/rules/waters-of-nereus.md``: ``WON-0xx``/``WON-1xx`` are rules of
the checklist, ``WON-Dxx`` component data the rulebook leaves out, ``WON-Axx`` resolutions of
ambiguous rules; ``WON-Ixx``/``WON-Qxx`` are decisions of this engine (each cited where it is
implemented).  "[INF]" marks placeholder values that are ours, not the publisher's.
"""

from __future__ import annotations

NAME = "waters-of-nereus"
VERSION = "1.0.0"
MIN_PLAYERS = 2  # WON-001 (rulebook, cover: 2-4 players)
MAX_PLAYERS = 4  # WON-001

# Colours: W white, Y yellow, G green, R red, P purple, K black.  "*" is a gem (wild, WON-095).
COLOURS = ["W", "Y", "G", "R", "P", "K"]
ANY_COLOUR = "".join(COLOURS)  # WON-109 space 4, WON-112, SC10 (WON-D06): a treasure of any colour
GEM = "*"
TREASURES = {"W": 23, "Y": 20, "G": 18, "R": 15, "P": 11, "K": 9}  # WON-003, WON-D07 (= 96)
TOTAL_TREASURES = 96  # WON-003 (rulebook, Components: 96 treasures)
GEMS = 12  # WON-004 (rulebook, Components: 12 gems; a limited supply)
STARTING_GOLD = 3  # WON-017 (rulebook, Setup step 11)
SCIENCE_DEAL = 3  # WON-018 (rulebook, Setup step 12)
SCIENCE_MAX = 10  # WON-D08 [INF]: track 0-10, gains above 10 are lost
DAYS = 4  # WON-020 (rulebook, Playing the Game: 4 days)
CYCLES = 4  # WON-045: 4 cycles of stages 1-3 per day
MAX_ON_SPACE = 3  # WON-031: no 4th treasure on a space

# WON-005: the seven crew cards (and holds) of every player.
CREWS = ["captain", "pilot", "explorer", "boatswain", "purser", "merchant", "scientist"]
# WON-130: the neutral player's id as a marker owner or fee receiver (it is not a seat).
NEUTRAL = -1

# WON-002, WON-010, WON-D01 [INF]: 4-player side 6x6, 2-3-player side 5x5 (centre (2,2)); all water.
BOARD_SIZE = {2: 5, 3: 5, 4: 6}
# WON-D02 [INF]: action spaces per crew row: 4 on the 4-player side, 3 on the 2-3-player side.
SPACES_PER_ROW = {2: 3, 3: 3, 4: 4}

# Directions (row delta, col delta); row 0 is the north edge, col 0 the west edge.
DIRECTIONS = {
    "N": (-1, 0),
    "NE": (-1, 1),
    "E": (0, 1),
    "SE": (1, 1),
    "S": (1, 0),
    "SW": (1, -1),
    "W": (0, -1),
    "NW": (-1, -1),
}
COMPASS = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]  # WON-D09, WON-131 (disc starts on N = 0)
ORTHOGONAL = ["N", "E", "S", "W"]  # WON-106 (pilot), WON-109 (explorer's neighbours)
DIAGONAL = ["NE", "SE", "SW", "NW"]  # WON-100 (captain spaces 3 and 4)

# WON-D05 holds: each icon is the string of colours it accepts; "*" = rainbow (any colour, WON-080).
HOLDS = {
    "captain": ["K", "P", "R", "G"],  # WON-083 (rulebook, Placing Treasures in Holds)
    "pilot": ["R", "G", "Y", "W"],  # WON-D05 [INF]
    "explorer": ["G", "YW", "W"],  # WON-D05 [INF] (bi-coloured Y/W)
    "boatswain": ["*", "*", "*", "*"],  # WON-083: 4 different colours
    "purser": ["Y", "Y", "W"],  # WON-D05 [INF]
    "merchant": ["*", "*", "*"],  # WON-083: 3 of one colour
    "scientist": ["P", "K", "RP"],  # WON-D05 [INF] (bi-coloured R/P)
}
HOLD_RULE = {"boatswain": "different", "merchant": "same"}  # WON-083 (rulebook, Special Hold Requirements)
HOLD_VP = {  # WON-083 (captain 12, merchant 5), the others WON-D05 [INF]
    "captain": 12,
    "pilot": 7,
    "explorer": 4,
    "boatswain": 7,
    "purser": 4,
    "merchant": 5,
    "scientist": 9,
}

# WON-090, WON-091: treasure chest order and rewards (gold, VP, random treasures drawn).
CHEST_ORDER = ["W", "Y", "G", "R", "P", "K"]
CHEST_REWARDS = {
    "W": (1, 1, 0),
    "Y": (3, 2, 0),
    "G": (0, 0, 1),
    "R": (0, 3, 0),
    "P": (0, 4, 0),
    "K": (0, 5, 0),
}
STORAGE_TREASURES = 6  # WON-093
STORAGE_GEMS = 3  # WON-093
SELL_TREASURE = 2  # WON-096
SELL_GEM = 5  # WON-096

# Action spaces, strongest first (index 0 = space 1); the 2-3-player side uses the first 3 (WON-D02).
CAPTAIN_SPACES = [(2, "any"), (1, "any"), (2, "diag"), (1, "diag")]  # WON-100 (distance, directions)
PILOT_SPACES = [4, 3, 2, 1]  # WON-106 (distance, orthogonal)
EXPLORER_SPACES = ["WY", "GR", "PK", ANY_COLOUR]  # WON-109 (colours allowed)
BOATSWAIN_SPACES = [(3, 4), (2, 3), (2, 2), (1, 2)]  # WON-113 (VP, treasure moves)
PURSER_SPACES = [6, 5, 4, 3]  # WON-116 (gold)
MERCHANT_SPACES = [(3, 5), (4, 4), (4, 3), (3, 2)]  # WON-119 (gold paid, VP)
SCIENTIST_SPACES = [(2, 0), (1, 1), (1, 0), (0, 1)]  # WON-122 (science steps, cards drawn)
# WON-122, WON-D02: on the 3-space side space 3 = "science +1 OR draw 1" (the player picks).
SCIENTIST_EITHER_SPACE = 3

# Gold actions (WON-051: one per turn, of the crew played).
CAPTAIN_EXTRA = {1: 2, 2: 3}  # WON-104: extra spaces -> gold
PILOT_TURN_COST = 2  # WON-107
BOATSWAIN_MOVE_COST = 1  # WON-114
PURSER_DRAW_COST = 3  # WON-117
MERCHANT_VP_COST = 1  # WON-120
MERCHANT_GOLD_VP = 1  # WON-120
SCIENTIST_RESEARCH_COST = 3  # WON-123
SCIENTIST_RESEARCH_STEPS = 1  # WON-123 (science +1; the other choice is one card)
EXPLORER_COSTS = [2, 3, 4, 5]  # WON-061, WON-D03 (by order rank, WON-A01; the 5 is [INF])

# Enhanced actions.
CAPTAIN_ENHANCED_MOVE = 1  # WON-105
PURSER_ENHANCED_GOLD = 2  # WON-118
MERCHANT_ENHANCED_VP = 1  # WON-121

# WON-A15: neutral movement distance by space (the captain's maximum; the pilot's distance).
NEUTRAL_DISTANCE = {"captain": [2, 1, 2, 1], "pilot": [4, 3, 2, 1]}
DIE_SIDES = 6  # WON-131 (rulebook, Components: 1 die)

# WON-D04 [INF]: discovery cards, (row, col) marked spaces; 6 per board side (WON-006).
DISCOVERY_CARDS = {
    "4p-1": [(0, 2), (0, 3), (2, 0), (3, 0), (2, 5), (3, 5), (5, 2), (5, 3)],
    "4p-2": [(1, 1), (1, 4), (4, 1), (4, 4), (2, 2), (2, 3), (3, 2), (3, 3)],
    "4p-3": [(0, 1), (1, 5), (5, 4), (4, 0), (2, 2), (3, 3), (1, 3), (4, 2)],
    "4p-4": [(0, 4), (4, 5), (5, 1), (1, 0), (2, 3), (3, 2), (1, 2), (4, 3)],
    "4p-5": [(1, 1), (1, 2), (1, 3), (1, 4), (4, 1), (4, 2), (4, 3), (4, 4)],
    "4p-6": [(1, 1), (2, 1), (3, 1), (4, 1), (1, 4), (2, 4), (3, 4), (4, 4)],
    "3p-1": [(0, 2), (2, 0), (2, 4), (4, 2), (1, 1), (3, 3)],
    "3p-2": [(1, 1), (1, 3), (3, 1), (3, 3), (2, 2), (0, 2)],
    "3p-3": [(0, 1), (1, 4), (4, 3), (3, 0), (2, 2), (2, 1)],
    "3p-4": [(0, 3), (3, 4), (4, 1), (1, 0), (2, 2), (2, 3)],
    "3p-5": [(1, 1), (1, 2), (1, 3), (3, 1), (3, 2), (3, 3)],
    "3p-6": [(1, 1), (2, 1), (3, 1), (1, 3), (2, 3), (3, 3)],
}
DISCOVERY_SIDE = {2: "3p", 3: "3p", 4: "4p"}  # WON-006, WON-016: the cards of the board side in use
DISCOVERY_REMOVED = 2  # WON-016

# WON-007, WON-128, WON-D06 [INF]: the 22 science cards: id -> (timing, effect); timing "turn" or "end".
SCIENCE_CARDS = {
    "SC01": ("turn", "draw_treasures"),
    "SC02": ("turn", "draw_treasures"),
    "SC03": ("turn", "draw_treasures"),
    "SC04": ("turn", "gold"),
    "SC05": ("turn", "gold"),
    "SC06": ("turn", "sail"),
    "SC07": ("turn", "gem"),
    "SC08": ("turn", "vp"),
    "SC09": ("turn", "vp"),
    "SC10": ("turn", "explore"),
    "SC11": ("turn", "rearrange"),
    "SC12": ("turn", "draw_science"),
    "SC13": ("end", "per_hold"),
    "SC14": ("end", "per_hold"),
    "SC15": ("end", "per_chest"),
    "SC16": ("end", "per_gem"),
    "SC17": ("end", "per_4_gold"),
    "SC18": ("end", "per_4_gold"),
    "SC19": ("end", "per_science"),
    "SC20": ("end", "full_chest"),
    "SC21": ("end", "storage_colours"),
    "SC22": ("end", "four_holds"),
}
SCIENCE_DRAW_TREASURES = 2  # WON-D06 SC01-SC03 (the rulebook's one printed card, Science Cards example)
SCIENCE_GOLD = 4  # WON-D06 SC04-SC05
SCIENCE_SAIL = 2  # WON-D06 SC06
SCIENCE_VP = 3  # WON-D06 SC08-SC09
SCIENCE_REARRANGE = 2  # WON-D06 SC11
SCIENCE_DRAW_CARDS = 2  # WON-D06 SC12
END_PER_HOLD = 2  # WON-D06 SC13-SC14
END_PER_GEM = 3  # WON-D06 SC16
END_GOLD_DIVISOR = 4  # WON-D06 SC17-SC18
END_PER_SCIENCE = 2  # WON-D06 SC19
END_FULL_CHEST = 6  # WON-D06 SC20
END_FOUR_HOLDS = 6  # WON-D06 SC22
END_FOUR_HOLDS_NEEDED = 4  # WON-D06 SC22
GOLD_PER_VP = 5  # WON-141
# WON-004, WON-A16, WON-D10: gold is unlimited (coins are only currency tokens): no gold supply is kept.

# Search weights, not rules (``search.evaluate``'s guesses of what unfinished work is worth).
EVAL_HOLD_SHARE = 0.5  # share of a hold's VP (WON-083) its treasures count for before it is complete
EVAL_PENDING_VP = 0.3  # VP a treasure in hand (not yet placed, WON-055) counts for
EVAL_SCIENCE_VP = 0.3  # VP a step on the science track counts for (cards and end cards cost power, WON-125)
