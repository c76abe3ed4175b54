"""How each event changes the state of a game of Waters of Nereus (``evolve``).

The state is a plain JSON dict.  Cells are ints ``row * size + col``.  Every deck keeps
its top card at the END of its list.  ``evolve`` never draws: random outcomes are in the
events (WON-I04).  Hidden parts (science deck and hands, crew choices before the reveal, the
discovery stack and the neutral deck) are removed by ``views.py``.
"""

from __future__ import annotations

from typing import Any

from service.games.base import Event, State, with_forfeited
from service.games.waters_of_nereus import data
from service.games.waters_of_nereus.data import NEUTRAL

VP_CATEGORIES = ["holds", "chest", "actions", "science", "end_cards", "gold"]


def new_seat() -> dict[str, Any]:
    return {
        "gold": data.STARTING_GOLD,  # WON-017
        "vp": 0,  # WON-011, WON-140
        "vp_by": dict.fromkeys(VP_CATEGORIES, 0),
        "science": 0,  # WON-011
        "hand": [],
        "played": [],
        "chosen": None,
        "revealed": None,
        "holds": {crew: [None] * len(icons) for crew, icons in data.HOLDS.items()},
        "completed": [],
        "chest": [],
        "storage": ["W"],  # WON-013
        "gems": 0,
        "pending": [],
        "sold": False,
    }


def new_turn(seat: int, crew: str, explorer_pos: int | None) -> dict[str, Any]:
    return {
        "seat": seat,
        "crew": crew,
        "space": None,
        "explorer_pos": explorer_pos,
        "enhanced": False,
        "gold_used": False,
        "basic": False,
        "move": None,
        "explores": [],
        "moves": 0,
        "research": False,
        "discard": False,
    }


def new_move(state: State, seat: int, left: int, dirs: str, turns: bool, basic: bool) -> dict[str, Any]:
    start = state["ships"][seat]
    return {
        "left": left,
        "dirs": dirs,
        "turns": turns,
        "basic": basic,
        "steps": 0,
        "dir": None,
        "visited": [start],
    }


# --- event handlers --------------------------------------------------------------------


def _game_started(state: State | None, d: dict[str, Any]) -> State:
    n = d["players"]
    size = d["size"]
    bag = dict(data.TREASURES)
    bag["W"] -= n  # WON-013, WON-014
    return {
        "players": n,
        "neutral": d["neutral"],
        "size": size,
        "spaces": d["spaces"],
        "phase": "setup",
        "day": 0,
        "cycle": 0,
        "sun": 0,
        "hourglass": 0,
        "active": None,
        "order": [],
        "board": [[] for _ in range(size * size)],
        "ships": [None] * n,
        "neutral_ship": None,
        "compass": 0,
        "neutral_deck": [],
        "neutral_played": [],
        "bag": bag,
        "gem_supply": data.GEMS,
        "discovery_stack": [],
        "discovery_removed": [],
        "discovery_current": None,
        "discovery_used": [],
        "science_deck": [],
        "science_discard": [],
        "rows": {crew: [None] * d["spaces"] for crew in data.CREWS},
        "explorer_queue": [],
        "turn": None,
        "seats": [new_seat() for _ in range(n)],
        "result": None,
    }


def _starting_player(s: State, d: dict[str, Any]) -> State:
    s["sun"] = s["hourglass"] = s["active"] = d["seat"]
    s["phase"] = "corners"
    return s


def _discovery_shuffled(s: State, d: dict[str, Any]) -> State:
    s["discovery_stack"] = list(d["stack"])
    s["discovery_removed"] = list(d["removed"])
    return s


def _science_shuffled(s: State, d: dict[str, Any]) -> State:
    s["science_deck"] = list(d["deck"])
    return s


def _science_dealt(s: State, d: dict[str, Any]) -> State:
    deck = s["science_deck"]
    hand = s["seats"][d["seat"]]["hand"]
    for card in d["cards"]:
        deck.remove(card)
        hand.append(card)
    return s


def _neutral_shuffled(s: State, d: dict[str, Any]) -> State:
    s["neutral_deck"] = list(d["deck"])
    s["neutral_played"] = []
    return s


def _neutral_ship_placed(s: State, d: dict[str, Any]) -> State:
    s["neutral_ship"] = d["cell"]
    return s


def _ship_placed(s: State, d: dict[str, Any]) -> State:
    s["ships"][d["seat"]] = d["cell"]
    s["active"] = d["next"]
    return s


def _treasures_placed(s: State, d: dict[str, Any]) -> State:
    board, bag = s["board"], s["bag"]
    for cell, t in d["cells"]:
        board[cell].append(t)
        bag[t] -= 1
    return s


def _day_started(s: State, d: dict[str, Any]) -> State:
    s["day"] = d["day"]
    s["cycle"] = 0
    return s


def _discovery_flipped(s: State, d: dict[str, Any]) -> State:
    s["discovery_stack"].remove(d["card"])
    s["discovery_current"] = d["card"]
    return s


def _cycle_started(s: State, d: dict[str, Any]) -> State:
    s["cycle"] = d["cycle"]
    s["hourglass"] = d["hourglass"]
    s["phase"] = "choose"
    s["active"] = None
    s["order"] = []
    for seat in s["seats"]:
        seat["chosen"] = None
        seat["revealed"] = None
    return s


def _crew_chosen(s: State, d: dict[str, Any]) -> State:
    s["seats"][d["seat"]]["chosen"] = d["crew"]
    return s


def _crew_revealed(s: State, d: dict[str, Any]) -> State:
    for seat, crew in zip(s["seats"], d["cards"], strict=True):
        seat["chosen"] = None
        seat["revealed"] = crew
        if crew is not None:  # None: a seat that left the game (WON-Q15)
            seat["played"].append(crew)  # WON-044
    s["phase"] = "reveal"
    return s


def _neutral_flipped(s: State, d: dict[str, Any]) -> State:
    s["neutral_deck"].remove(d["crew"])
    s["neutral_played"].append(d["crew"])
    if d.get("from_explorer") is not None:
        s["rows"]["explorer"][d["from_explorer"]] = None
        s["explorer_queue"].pop(0)
    if d["space"] is not None:
        s["rows"][d["crew"]][d["space"] - 1] = NEUTRAL
    return s


def _neutral_die(s: State, d: dict[str, Any]) -> State:
    s["compass"] = d["compass"]
    return s


def _neutral_moved(s: State, d: dict[str, Any]) -> State:
    s["neutral_ship"] = d["cell"]
    s["board"][d["cell"]] = []
    for t in d["returned"]:
        s["bag"][t] += 1
    return s


def _turn_started(s: State, d: dict[str, Any]) -> State:
    s["phase"] = "turn"
    s["active"] = d["seat"]
    s["order"] = list(d["order"])
    s["turn"] = new_turn(d["seat"], d["crew"], None)
    return s


def _marker_placed(s: State, d: dict[str, Any]) -> State:
    seat, crew, space = d["seat"], d["crew"], d["space"]
    turn = s["turn"]
    s["rows"][crew][space - 1] = seat
    if turn["explorer_pos"] is not None:
        s["rows"]["explorer"][turn["explorer_pos"]] = None
    turn["space"] = space
    enhanced = turn["enhanced"] = d["enhanced"]
    i = space - 1
    if crew == "captain":  # WON-100; WON-105: enhanced, one space more
        dist, dirs = data.CAPTAIN_SPACES[i]
        left = dist + (data.CAPTAIN_ENHANCED_MOVE if enhanced else 0)
        turn["move"] = new_move(s, seat, left, dirs, False, True)
    elif crew == "pilot":  # WON-106; WON-108: enhanced, direction changes are free
        turn["move"] = new_move(s, seat, data.PILOT_SPACES[i], "orth", enhanced, True)
    elif crew == "explorer":  # WON-109; WON-112: enhanced, any colour whatever the space
        turn["explores"].append(data.ANY_COLOUR if enhanced else data.EXPLORER_SPACES[i])
    else:
        turn["basic"] = True
        if crew == "scientist":
            turn["research"] = enhanced
    return s


def _ship_sailed(s: State, d: dict[str, Any]) -> State:
    seat = d["seat"]
    move = s["turn"]["move"]
    s["ships"][seat] = d["cell"]
    move["left"] -= 1
    move["steps"] += 1
    move["dir"] = d["direction"]
    move["visited"].append(d["cell"])
    seats = s["seats"]
    for owner in d["fees"]:  # WON-102: 1 gold per ship passed
        seats[seat]["gold"] -= 1
        if owner != NEUTRAL:  # WON-A03: a fee for the neutral ship goes to the supply
            seats[owner]["gold"] += 1
    return s


def _anchor_dropped(s: State, d: dict[str, Any]) -> State:
    s["board"][d["cell"]] = []
    s["seats"][d["seat"]]["pending"].extend(d["treasures"])
    s["turn"]["move"] = None
    return s


def _treasure_explored(s: State, d: dict[str, Any]) -> State:
    s["board"][d["cell"]].remove(d["treasure"])
    s["seats"][d["seat"]]["pending"].append(d["treasure"])
    s["turn"]["explores"].pop(d["allowance"])
    return s


def _action_performed(s: State, d: dict[str, Any]) -> State:
    s["turn"]["basic"] = False
    return s


def _gold_action(s: State, d: dict[str, Any]) -> State:
    turn = s["turn"]
    turn["gold_used"] = True
    s["seats"][d["seat"]]["gold"] -= d["gold"]
    crew = d["crew"]
    if crew == "captain":
        turn["move"]["left"] += d["spaces"]
    elif crew == "pilot":
        turn["move"]["turns"] = True
    elif crew == "boatswain":
        turn["moves"] += 1
    return s


def _gold_changed(s: State, d: dict[str, Any]) -> State:
    # WON-A16: the gold supply is unlimited, so only the seat's purse changes.
    s["seats"][d["seat"]]["gold"] += d["delta"]
    return s


def _vp_scored(s: State, d: dict[str, Any]) -> State:
    seat = s["seats"][d["seat"]]
    seat["vp"] += d["vp"]
    seat["vp_by"][d["category"]] += d["vp"]
    return s


def _science_changed(s: State, d: dict[str, Any]) -> State:
    s["seats"][d["seat"]]["science"] += d["delta"]
    return s


def _moves_granted(s: State, d: dict[str, Any]) -> State:
    s["turn"]["moves"] += d["moves"]
    return s


def _treasure_drawn(s: State, d: dict[str, Any]) -> State:
    s["bag"][d["treasure"]] -= 1
    s["seats"][d["seat"]]["pending"].append(d["treasure"])
    return s


def _science_drawn(s: State, d: dict[str, Any]) -> State:
    # WON-A13: a science hand has no limit.
    s["science_deck"].remove(d["card"])
    s["seats"][d["seat"]]["hand"].append(d["card"])
    return s


def _research_used(s: State, d: dict[str, Any]) -> State:
    s["turn"]["research"] = False
    s["turn"]["discard"] = True
    return s


def _science_discarded(s: State, d: dict[str, Any]) -> State:
    s["seats"][d["seat"]]["hand"].remove(d["card"])
    s["science_discard"].append(d["card"])
    if s["turn"] is not None:
        s["turn"]["discard"] = False
    return s


def _science_played(s: State, d: dict[str, Any]) -> State:
    seat = s["seats"][d["seat"]]
    seat["hand"].remove(d["card"])
    seat["science"] -= 1  # WON-125
    s["science_discard"].append(d["card"])  # WON-129; WON-Q09: the discard pile is face up
    effect = data.SCIENCE_CARDS[d["card"]][1]
    turn = s["turn"]
    if effect == "sail":
        turn["move"] = new_move(s, d["seat"], data.SCIENCE_SAIL, "any", False, False)
    elif effect == "explore":
        turn["explores"].append(data.ANY_COLOUR)  # WON-Q08: SC10 adds an "any colour" allowance
    elif effect == "rearrange":
        turn["moves"] += data.SCIENCE_REARRANGE
    return s


def _gem_gained(s: State, d: dict[str, Any]) -> State:
    s["gem_supply"] -= 1
    s["seats"][d["seat"]]["gems"] += 1
    return s


def _treasure_placed(s: State, d: dict[str, Any]) -> State:
    seat = s["seats"][d["seat"]]
    t = d["treasure"]
    seat["pending"].remove(t)
    area = d["area"]
    if area == "storage":
        if t == data.GEM:
            seat["gems"] += 1
        else:
            seat["storage"].append(t)
    elif area == "chest":
        seat["chest"].append(t)
        gold, vp = d["gold"], d["vp"]
        seat["gold"] += gold
        seat["vp"] += vp
        seat["vp_by"]["chest"] += vp
    else:
        seat["holds"][d["crew"]][d["slot"]] = t
    return s


def _hold_completed(s: State, d: dict[str, Any]) -> State:
    seat = s["seats"][d["seat"]]
    hold = seat["holds"][d["crew"]]
    for t in hold:
        if t == data.GEM:
            s["gem_supply"] += 1  # WON-085, WON-A22
        else:
            s["bag"][t] += 1  # WON-082; WON-A19: back in the bag at once, drawable this turn
    seat["holds"][d["crew"]] = [None] * len(hold)
    seat["completed"].append(d["crew"])
    seat["vp"] += d["vp"]
    seat["vp_by"]["holds"] += d["vp"]
    return s


def _treasure_unloaded(s: State, d: dict[str, Any]) -> State:
    seat = s["seats"][d["seat"]]
    t = d["treasure"]
    if d["area"] == "storage":
        if t == data.GEM:
            seat["gems"] -= 1
        else:
            seat["storage"].remove(t)
    else:
        seat["holds"][d["crew"]][d["slot"]] = None
    seat["pending"].append(t)
    if not d["free"]:
        s["turn"]["moves"] -= 1
    return s


def _exchanged(s: State, d: dict[str, Any]) -> State:
    seat = s["seats"][d["seat"]]
    t = d["treasure"]
    seat["storage"].remove(t)
    seat["storage"].remove(t)
    s["bag"][t] += 2  # WON-094, WON-A19
    s["gem_supply"] -= 1
    seat["gems"] += 1
    return s


def _sold(s: State, d: dict[str, Any]) -> State:
    seat = s["seats"][d["seat"]]
    t = d["treasure"]
    if t == data.GEM:
        seat["gems"] -= 1
        s["gem_supply"] += 1
    else:
        seat["storage"].remove(t)
        s["bag"][t] += 1
    seat["gold"] += d["gold"]
    if s["phase"] == "final":
        seat["sold"] = True  # WON-Q13: no game-end card after a sale
    return s


def _turn_ended(s: State, d: dict[str, Any]) -> State:
    s["turn"] = None
    s["active"] = None
    return s


def _explorer_phase_started(s: State, d: dict[str, Any]) -> State:
    s["phase"] = "explorer"
    s["active"] = None
    s["order"] = []
    s["explorer_queue"] = [list(e) for e in d["queue"]]
    return s


def _explorer_offered(s: State, d: dict[str, Any]) -> State:
    s["phase"] = "explorer_offer"
    s["active"] = d["seat"]
    s["explorer_queue"].pop(0)
    s["turn"] = new_turn(d["seat"], "", d["pos"])
    s["turn"]["cost"] = d["cost"]
    return s


def _explorer_taken(s: State, d: dict[str, Any]) -> State:
    seat = s["seats"][d["seat"]]
    seat["gold"] -= d["cost"]
    seat["played"].append(d["crew"])
    s["phase"] = "turn"
    turn = s["turn"]
    turn["crew"] = d["crew"]
    del turn["cost"]
    return s


def _explorer_declined(s: State, d: dict[str, Any]) -> State:
    s["phase"] = "explorer"
    s["turn"] = None
    s["active"] = None
    return s


def _day_ended(s: State, d: dict[str, Any]) -> State:
    for crew in data.CREWS:  # WON-070
        s["rows"][crew] = [None] * s["spaces"]
    for seat in s["seats"]:
        seat["played"] = []
        seat["revealed"] = None
    s["discovery_used"].append(s["discovery_current"])  # WON-072
    s["discovery_current"] = None
    s["sun"] = s["hourglass"] = d["sun"]  # WON-071
    s["neutral_played"] = []
    s["phase"] = "conclude"
    s["active"] = None
    return s


def _final_started(s: State, d: dict[str, Any]) -> State:
    s["phase"] = "final"
    s["order"] = list(d["order"][1:])
    s["active"] = d["order"][0]
    return s


def _final_turn_ended(s: State, d: dict[str, Any]) -> State:
    if s["order"]:
        s["active"] = s["order"].pop(0)
    else:
        s["active"] = None
    return s


def _storage_sold(s: State, d: dict[str, Any]) -> State:
    seat = s["seats"][d["seat"]]
    for t in seat["storage"]:
        s["bag"][t] += 1
    s["gem_supply"] += seat["gems"]
    seat["storage"] = []
    seat["gems"] = 0
    seat["gold"] += d["gold"]
    return s


def _seat_forfeited(s: State, d: dict[str, Any]) -> State:
    """WON-Q15: the seat leaves: its ship leaves the board, the treasures in its hands go back
    to the bag (a gem to the supply), and a face-down crew card of this cycle is void."""
    seat = d["seat"]
    with_forfeited(s, seat)
    me = s["seats"][seat]
    s["ships"][seat] = None
    for t in d["returned"]:
        if t == data.GEM:
            s["gem_supply"] += 1
        else:
            s["bag"][t] += 1
        me["pending"].remove(t)
    me["chosen"] = None
    return s


def _corner_skipped(s: State, d: dict[str, Any]) -> State:
    s["active"] = d["next"]
    return s


def _explorer_skipped(s: State, d: dict[str, Any]) -> State:
    s["explorer_queue"].pop(0)
    return s


def _game_ended(s: State, d: dict[str, Any]) -> State:
    # The result is stored once; ``scoring.result`` returns it (WON-142).
    s["phase"] = "over"
    s["active"] = None
    s["order"] = []
    s["result"] = {
        "scores": dict(d["scores"]),
        "ranks": dict(d["ranks"]),
        "ranking": list(d["ranking"]),
        "breakdown": {k: dict(v) for k, v in d["breakdown"].items()},
        "tiebreak": d["tiebreak"],
    }
    return s


HANDLERS = {
    "StartingPlayerDrawn": _starting_player,
    "DiscoveryStackShuffled": _discovery_shuffled,
    "ScienceDeckShuffled": _science_shuffled,
    "ScienceCardsDealt": _science_dealt,
    "NeutralDeckShuffled": _neutral_shuffled,
    "NeutralShipPlaced": _neutral_ship_placed,
    "ShipPlaced": _ship_placed,
    "TreasuresPlaced": _treasures_placed,
    "DayStarted": _day_started,
    "DiscoveryCardFlipped": _discovery_flipped,
    "CycleStarted": _cycle_started,
    "CrewChosen": _crew_chosen,
    "CrewRevealed": _crew_revealed,
    "NeutralCardFlipped": _neutral_flipped,
    "NeutralDieRolled": _neutral_die,
    "NeutralShipMoved": _neutral_moved,
    "TurnStarted": _turn_started,
    "MarkerPlaced": _marker_placed,
    "ShipSailed": _ship_sailed,
    "AnchorDropped": _anchor_dropped,
    "TreasureExplored": _treasure_explored,
    "ActionPerformed": _action_performed,
    "GoldActionUsed": _gold_action,
    "GoldChanged": _gold_changed,
    "VPScored": _vp_scored,
    "SciencePowerChanged": _science_changed,
    "TreasureMovesGranted": _moves_granted,
    "TreasureDrawn": _treasure_drawn,
    "ScienceCardDrawn": _science_drawn,
    "EnhancedResearchUsed": _research_used,
    "ScienceCardDiscarded": _science_discarded,
    "ScienceCardPlayed": _science_played,
    "GemGained": _gem_gained,
    "TreasurePlaced": _treasure_placed,
    "HoldCompleted": _hold_completed,
    "TreasureUnloaded": _treasure_unloaded,
    "TreasuresExchanged": _exchanged,
    "TreasureSold": _sold,
    "TurnEnded": _turn_ended,
    "ExplorerPhaseStarted": _explorer_phase_started,
    "ExplorerTurnOffered": _explorer_offered,
    "ExplorerTurnTaken": _explorer_taken,
    "ExplorerTurnDeclined": _explorer_declined,
    "DayEnded": _day_ended,
    "FinalScoringStarted": _final_started,
    "FinalTurnEnded": _final_turn_ended,
    "StorageSold": _storage_sold,
    "GameEnded": _game_ended,
    "SeatForfeited": _seat_forfeited,
    "CornerSkipped": _corner_skipped,
    "ExplorerTurnSkipped": _explorer_skipped,
}


def evolve(state: State | None, event: Event) -> State:
    """Apply one event (in place) and return the state."""
    if event.type == "GameStarted":
        return _game_started(state, event.data)
    assert state is not None, "the first event must be GameStarted"
    return HANDLERS[event.type](state, event.data)
