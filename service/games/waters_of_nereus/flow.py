"""The automatic flow: days (WON-020), discovery (WON-030, WON-031), cycles (WON-041, WON-045),
the explorer phase (WON-060, WON-061, WON-064), the conclude phase (WON-070, WON-071, WON-072,
WON-073) and the neutral player's turns (rules of the two-player variant, each cited below)."""

from __future__ import annotations

from service.games.base import State, forfeited
from service.games.waters_of_nereus import data, movement
from service.games.waters_of_nereus.context import Ctx, place_on_board


def available_spaces(state: State, crew: str) -> list[int]:
    """WON-042, WON-043: the free action spaces (1-based) of a crew row."""
    return [i + 1 for i, m in enumerate(state["rows"][crew]) if m is None]


def start_day(ctx: Ctx) -> None:
    """WON-020, Phase 1 (WON-030, WON-031), then the first cycle."""
    s = ctx.s
    ctx.emit("DayStarted", day=s["day"] + 1)
    card = s["discovery_stack"][-1]
    ctx.emit("DiscoveryCardFlipped", card=card)
    size = s["size"]
    place_on_board(ctx, [r * size + col for r, col in data.DISCOVERY_CARDS[card]])
    start_cycle(ctx, 1, s["sun"])  # WON-A18: the hourglass starts the day with the sun


def start_cycle(ctx: Ctx, cycle: int, hourglass: int) -> None:
    ctx.emit("CycleStarted", cycle=cycle, hourglass=hourglass)


def explorer_queue(state: State) -> list[list[int]]:
    """WON-060, WON-061, WON-A01: [owner, cost, position] by marker position, left to right; the
    cost follows the rank among real players (WON-Q06), fixed when Phase 3 starts."""
    queue = []
    rank = 0
    for pos, owner in enumerate(state["rows"]["explorer"]):
        if owner is None:
            continue
        if owner == data.NEUTRAL:
            queue.append([data.NEUTRAL, 0, pos])  # WON-138, WON-A14: the neutral pays nothing
        else:
            queue.append([owner, data.EXPLORER_COSTS[rank], pos])
            rank += 1
    return queue


def start_explorer_phase(ctx: Ctx) -> None:
    ctx.emit("ExplorerPhaseStarted", queue=explorer_queue(ctx.s))
    run_explorer_queue(ctx)


def run_explorer_queue(ctx: Ctx) -> None:
    while ctx.s["explorer_queue"]:
        owner, cost, pos = ctx.s["explorer_queue"][0]
        if owner == data.NEUTRAL:
            neutral_turn(ctx, pos)
            continue
        if owner in forfeited(ctx.s):
            ctx.emit("ExplorerTurnSkipped", seat=owner, pos=pos)  # WON-Q15
            continue
        ctx.emit("ExplorerTurnOffered", seat=owner, cost=cost, pos=pos)
        return
    conclude_day(ctx)  # WON-064


def conclude_day(ctx: Ctx) -> None:
    """Phase 4: markers and cards back (WON-070), the sun moves on (WON-071), the discovery card
    goes (WON-072), the neutral deck is reshuffled (WON-139); after day 4 the game ends (WON-073)."""
    ctx.emit("DayEnded", day=ctx.s["day"], sun=(ctx.s["sun"] + 1) % ctx.s["players"])
    s = ctx.s  # re-read: the state copy changes as events are applied
    if s["neutral"]:
        ctx.emit("NeutralDeckShuffled", deck=ctx.rng.shuffled(data.CREWS))
    if s["day"] >= data.DAYS or not s["discovery_stack"]:
        n = s["players"]
        out = forfeited(s)  # WON-Q15: a seat that left has no final turn
        order = [(s["sun"] + i) % n for i in range(n)]
        ctx.emit("FinalScoringStarted", order=[seat for seat in order if seat not in out])
    else:
        start_day(ctx)


def next_corner_seat(state: State, seat: int) -> int | None:
    """WON-012, WON-Q01: the next seat clockwise to choose a corner, None once the turn is back at
    the starting player; WON-Q15: a seat that left is passed over."""
    n = state["players"]
    out = forfeited(state)
    for k in range(1, n):
        nxt = (seat + k) % n
        if nxt == state["sun"]:
            return None
        if nxt not in out:
            return nxt
    return None


def neutral_turn(ctx: Ctx, explorer_pos: int | None) -> None:
    """WON-132, WON-134, WON-138: flip a neutral card, put its marker on the leftmost free space,
    move the ship if it is the captain or pilot (WON-135, WON-136, WON-137); nothing else."""
    s = ctx.s
    crew = s["neutral_deck"][-1]
    free = available_spaces(s, crew)
    space = free[0] if free else None  # WON-A10: a full row gets no marker
    ctx.emit("NeutralCardFlipped", crew=crew, space=space, from_explorer=explorer_pos)
    if space is None or crew not in data.NEUTRAL_DISTANCE:
        return
    distance = data.NEUTRAL_DISTANCE[crew][space - 1]  # WON-A15
    size = s["size"]
    start = s["neutral_ship"]
    compass = s["compass"]
    while True:
        roll = ctx.rng.randint(1, data.DIE_SIDES)  # WON-135: the die is an rng draw
        compass = (compass + roll) % len(data.COMPASS)
        ctx.emit("NeutralDieRolled", roll=roll, compass=compass, direction=data.COMPASS[compass])
        end = movement.neutral_path(size, start, data.COMPASS[compass], distance)
        if end != start:  # WON-136: roll again until it moves
            break
    returned = list(s["board"][end])  # WON-137: its treasures go back to the bag
    ctx.emit("NeutralShipMoved", cell=end, returned=returned)
