"""Component data of Waters of Nereus: every value carries the ID it comes from.

IDs ``WON-0xx``/``WON-1xx`` are checklist rules, ``WON-Dxx`` component data and
``WON-Axx`` resolutions from the clarifications; ``WON-Qxx`` are decisions taken
for this engine where the rules were still silent (each explained in place).
"""

from __future__ import annotations

NAME = "waters-of-nereus"
VERSION = "1.0.0"
MIN_PLAYERS = 2  # WON-001
MAX_PLAYERS = 4  # WON-001

# Colours: W white, Y yellow, G green, R red, P purple, K black.  "*" is a gem (wild).
COLOURS = ["W", "Y", "G", "R", "P", "K"]
GEM = "*"
TREASURES = {"W": 23, "Y": 20, "G": 18, "R": 15, "P": 11, "K": 9}  # WON-003, WON-D07 (= 96)
TOTAL_TREASURES = 96  # WON-003
GEMS = 12  # WON-004 (limited supply)
STARTING_GOLD = 3  # WON-017
SCIENCE_DEAL = 3  # WON-018
SCIENCE_MAX = 10  # WON-D08: track 0-10, gains above 10 are lost
DAYS = 4  # WON-020
CYCLES = 4  # WON-045: 4 cycles of stages 1-3 per day
MAX_ON_SPACE = 3  # WON-031: no 4th treasure on a space

CREWS = ["captain", "pilot", "explorer", "boatswain", "purser", "merchant", "scientist"]  # WON-005

# WON-002/WON-010, WON-D01: 4-player side 6x6, 2-3-player side 5x5 (centre (2,2)); all water.
BOARD_SIZE = {2: 5, 3: 5, 4: 6}
# WON-D02: action spaces per crew row: 4 on the 4-player side, 3 on the 2-3-player side.
SPACES_PER_ROW = {2: 3, 3: 3, 4: 4}

# Directions (row delta, col delta); WON-D09 compass order N first, clockwise.
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
ORTHOGONAL = ["N", "E", "S", "W"]
DIAGONAL = ["NE", "SE", "SW", "NW"]

# WON-012, WON-I05: corners numbered clockwise from NW: 0 NW, 1 NE, 2 SE, 3 SW.
CORNER_NAMES = ["NW", "NE", "SE", "SW"]

# WON-D05 holds: each icon is the string of colours it accepts; "*" = rainbow (any colour).
HOLDS = {
    "captain": ["K", "P", "R", "G"],  # WON-083 [RB]
    "pilot": ["R", "G", "Y", "W"],  # WON-D05
    "explorer": ["G", "YW", "W"],  # WON-D05 (bi-coloured Y/W)
    "boatswain": ["*", "*", "*", "*"],  # WON-083: 4 different colours
    "purser": ["Y", "Y", "W"],  # WON-D05
    "merchant": ["*", "*", "*"],  # WON-083: 3 of one colour
    "scientist": ["P", "K", "RP"],  # WON-D05 (bi-coloured R/P)
}
HOLD_RULE = {"boatswain": "different", "merchant": "same"}  # WON-083
HOLD_VP = {  # WON-083, WON-D05
    "captain": 12,
    "pilot": 7,
    "explorer": 4,
    "boatswain": 7,
    "purser": 4,
    "merchant": 5,
    "scientist": 9,
}

# WON-090/WON-091: treasure chest order and rewards (gold, VP, random treasures drawn).
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

# WON-100..WON-124: action spaces, strongest first (index 0 = space 1).
CAPTAIN_SPACES = [(2, "any"), (1, "any"), (2, "diag"), (1, "diag")]  # WON-100 (distance, directions)
PILOT_SPACES = [4, 3, 2, 1]  # WON-106
EXPLORER_SPACES = ["WY", "GR", "PK", "WYGRPK"]  # WON-109
BOATSWAIN_SPACES = [(3, 4), (2, 3), (2, 2), (1, 2)]  # WON-113 (VP, treasure moves)
PURSER_SPACES = [6, 5, 4, 3]  # WON-116
MERCHANT_SPACES = [(3, 5), (4, 4), (4, 3), (3, 2)]  # WON-119 (gold paid, VP)
# WON-122: (science steps, cards drawn); on the 3-space side space 3 = "science +1 OR draw 1".
SCIENTIST_SPACES = [(2, 0), (1, 1), (1, 0), (0, 1)]
SCIENTIST_EITHER_SPACE = 3  # WON-122, WON-D02 (2-3-player side only)

# Gold actions.
CAPTAIN_EXTRA = {1: 2, 2: 3}  # WON-104: extra spaces -> gold
PILOT_TURN_COST = 2  # WON-107
BOATSWAIN_MOVE_COST = 1  # WON-114
PURSER_DRAW_COST = 3  # WON-117
MERCHANT_VP_COST = 1  # WON-120
SCIENTIST_RESEARCH_COST = 3  # WON-123
EXPLORER_COSTS = [2, 3, 4, 5]  # WON-061, WON-D03 (by order rank, WON-A01)

# Enhanced actions (WON-105, WON-118, WON-121).
CAPTAIN_ENHANCED_MOVE = 1
PURSER_ENHANCED_GOLD = 2
MERCHANT_ENHANCED_VP = 1

# WON-A15: neutral movement distance by space.
NEUTRAL_DISTANCE = {"captain": [2, 1, 2, 1], "pilot": [4, 3, 2, 1]}
DIE_SIDES = 6  # WON-131

# WON-D04: discovery cards, (row, col) marked spaces; 6 per board side.
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
DISCOVERY_SIDE = {2: "3p", 3: "3p", 4: "4p"}  # WON-006, WON-016
DISCOVERY_REMOVED = 2  # WON-016

# WON-D06: the 22 science cards: id -> (timing, effect).  timing "turn" or "end".
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
SCIENCE_DRAW_TREASURES = 2  # WON-D06 SC01-SC03
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
GOLD_PER_VP = 5  # WON-141

# --- Decisions of this engine (WON-Qxx) -------------------------------------------------
# WON-Q01: the starting player is a seeded draw recorded in an event (WON-I06); corners are then
#   chosen one seat at a time clockwise from the starting player (WON-I05).
# WON-Q02: a crew choice in stage 1 may be changed until the last seat has chosen (last choice
#   wins).  Every seat stays in to_act during stage 1, so nobody learns who has already chosen.
# WON-Q03: placing the action marker is the first step of every turn; the basic, gold and enhanced
#   actions, science cards and cabin operations follow in any order (WON-053).
# WON-Q04: a ship step is legal only if the move can still end legally with the gold and movement
#   left at that moment (the ship may never be stranded on another ship); a gold action during a
#   move must keep that true.  While a move is unfinished only steps, anchoring, the crew's gold
#   action and selling from storage are allowed.
# WON-Q05: the pass-through fee (WON-102) is paid when the ship leaves a space holding another ship.
# WON-Q06: the explorer-phase rank counts real players only; the neutral player pays nothing and
#   takes no rank (WON-A01 rank fixed at the start of Phase 3).
# WON-Q07: the explorer-phase extra turn may be taken only with the gold in hand at the offer
#   (no selling during the offer) and only with a crew whose row has an available space.
# WON-Q08: SC06 (ship move) cannot be played while another ship move of the turn is available or
#   unfinished; SC10 adds an "any colour" explore allowance; an explore uses the narrowest allowance
#   containing the colour taken.
# WON-Q09: "game end" science cards are optional at final scoring (played one at a time, each
#   costs 1 science power); discarded and played science cards lie face up (public).
# WON-Q10: final scoring is a short turn per seat, clockwise from the Sun holder: play game-end
#   cards, exchange pairs for gems, move gems (WON-097/A08), then finish; selling is automatic.
# WON-Q11: a boatswain (or SC11) treasure move is "unload a treasure into your hands" (1 move),
#   then place it like any acquired treasure; taking a gem out of storage is free (WON-095).
# WON-Q12: the neutral-player variant is off unless the option {"neutral": true} is given (the
#   rulebook offers it as "try this variant"; WON-I07's default-on is overridden by the platform's
#   option model).
# WON-Q13: at final scoring a seat that sells from storage can no longer play game-end cards
#   (WON-141 orders cards before the sale; selling stays possible to make room for a treasure).
# WON-Q14: the result's "tiebreak" names the tie-break that decided first place.
