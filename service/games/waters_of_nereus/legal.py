"""What a seat may do now: every complete small command (``legal``), and who is to act
(``to_act``).  ``decide`` accepts exactly what ``legal`` lists (WON-I03: the marker, then the
parts of the turn in any order, then ``end_turn``)."""

from __future__ import annotations

from typing import Any

from service.games.base import Command, State, forfeited
from service.games.waters_of_nereus import cabin, data, movement
from service.games.waters_of_nereus import commands as c
from service.games.waters_of_nereus.flow import available_spaces

CABIN_OPS = (c.PlaceTreasure, c.TakeGem, c.ExchangeTreasures, c.SellTreasure)


def to_act(state: State) -> list[int]:
    """The seats that must send a command now (every seat in stage 1, else the active one)."""
    phase = state["phase"]
    if phase == "choose":
        # WON-040, WON-Q02: who has laid a card face down is public, as at the table: only the
        # seats still to choose are to act; WON-Q15: a seat that left never is.
        out = forfeited(state)
        return [i for i, p in enumerate(state["seats"]) if p["chosen"] is None and i not in out]
    if phase in ("corners", "turn", "explorer_offer", "final") and state["active"] is not None:
        return [state["active"]]
    return []


def legal(state: State, seat: int, want: type[Command] | None = None) -> list[Command]:
    """Every command ``seat`` may send now.  With ``want``, only the commands of that type
    (``decide`` validates that way, skipping the costly parts; a test checks both agree)."""
    out = _legal(state, seat, want)
    if want is not None:
        out = [x for x in out if type(x) is want]
    return out


def _legal(state: State, seat: int, want: type[Command] | None) -> list[Command]:
    phase = state["phase"]
    if phase == "choose":
        if not 0 <= seat < state["players"]:
            return []
        # WON-040, WON-044; WON-Q02: a choice is final; WON-Q15: a seat that left chooses nothing.
        me = state["seats"][seat]
        if me["chosen"] is not None or seat in forfeited(state):
            return []
        played = me["played"]
        return [c.ChooseCrew(crew) for crew in data.CREWS if crew not in played]
    if seat != state["active"]:
        return []
    if phase == "turn":
        return _legal_turn(state, seat, want)
    if phase == "corners":
        # WON-012, WON-I05, WON-Q01: one seat at a time picks a free corner.
        taken = state["ships"]
        cells = movement.corner_cells(state["size"])
        return [c.ChooseCorner(i) for i, cell in enumerate(cells) if cell not in taken]
    if phase == "explorer_offer":
        return _legal_offer(state, seat)
    if phase == "final":
        return _legal_final(state, seat, want)
    return []


def _legal_offer(state: State, seat: int) -> list[Command]:
    """WON-062, WON-063, WON-Q07: take the turn (only with the cost in gold now, and a crew card
    whose row has a free space) or decline it."""
    me = state["seats"][seat]
    out: list[Command] = []
    if me["gold"] >= state["turn"]["cost"]:
        played = me["played"]
        for crew in data.CREWS:
            if crew not in played and available_spaces(state, crew):
                out.append(c.TakeExplorerTurn(crew))
    out.append(c.DeclineExplorerTurn())
    return out


def _cabin_ops(state: State, me: dict[str, Any], out: list[Command], want: type[Command] | None = None) -> None:
    """Placing acquired treasures (WON-080, WON-081) and the 'at any time' operations (WON-094,
    WON-095, WON-096), offered only to the seat whose turn it is or at final scoring (WON-097,
    WON-A08)."""
    if want is not None and want not in CABIN_OPS:
        return
    for t in sorted(set(me["pending"])):
        for area, crew, slot in cabin.targets(me, t):
            out.append(c.PlaceTreasure(t, area, crew, slot))
    if me["gems"]:
        out.append(c.TakeGem())
    for t in cabin.exchangeable(me, state["gem_supply"]):
        out.append(c.ExchangeTreasures(t))
    for t in cabin.sellable(me):
        out.append(c.SellTreasure(t))


def _legal_turn(state: State, seat: int, want: type[Command] | None) -> list[Command]:
    turn = state["turn"]
    crew = turn["crew"]
    if turn["space"] is None:
        free = available_spaces(state, crew)
        if not free:
            return [c.EndTurn()]  # WON-A10: a full row voids the turn (cannot happen with WON-D02)
        return [c.PlaceMarker(i) for i in free]  # WON-042, WON-Q03
    me = state["seats"][seat]
    out: list[Command] = []
    move = turn["move"]
    if turn["discard"]:
        return [c.DiscardScience(card) for card in sorted(set(me["hand"]))]  # WON-124
    every = want is None
    # WON-053: after the marker the parts of the turn (basic, gold and enhanced actions, science
    # cards, cabin operations) come in any order.
    if move is not None:
        if every or want is c.SailShip:
            for d in movement.legal_steps(state, seat, move):
                out.append(c.SailShip(d))
        if (every or want is c.DropAnchor) and movement.can_anchor(state, seat, move):
            out.append(c.DropAnchor())
        if move["basic"] and (every or want in c.GOLD_ACTIONS):
            out.extend(_legal_gold(state, seat, me, turn))
        if move["steps"]:
            # WON-Q04: an unfinished move allows only steps, anchoring, its gold action, selling.
            if every or want is c.SellTreasure:
                for t in cabin.sellable(me):
                    out.append(c.SellTreasure(t))
            return out
    elif crew not in ("captain", "pilot") and (every or want in c.GOLD_ACTIONS):
        out.extend(_legal_gold(state, seat, me, turn))
    if turn["explores"] and (every or want is c.Explore):  # WON-110: there may be nothing to take
        allowed = set("".join(turn["explores"]))
        size = state["size"]
        ship = state["ships"][seat]
        board = state["board"]
        for d in data.ORTHOGONAL:  # WON-109: orthogonally next to the ship
            cell = movement.step(size, ship, d)
            if cell is None:
                continue
            r, col = divmod(cell, size)
            for t in sorted(set(board[cell])):
                if t in allowed:
                    out.append(c.Explore(r, col, t))
    if turn["basic"] and (every or want is c.PerformAction):  # WON-050: optional
        out.extend(_legal_basic(state, seat, me, turn))
    if turn["research"] and state["science_deck"]:
        out.append(c.DrawScienceEnhanced())  # WON-124, WON-A07: optional
    if me["science"] > 0 and (every or want is c.PlayScience):  # WON-054, WON-125, WON-126
        for card in sorted(set(me["hand"])):
            if _turn_card_playable(state, me, turn, card):
                out.append(c.PlayScience(card))
    _cabin_ops(state, me, out, want)
    if turn["moves"] > 0 and (every or want is c.UnloadTreasure):
        for t, area, hold, slot in cabin.unload_sources(me):
            out.append(c.UnloadTreasure(t, area, hold, slot))
    if not me["pending"] and (move is None or move["steps"] == 0):
        out.append(c.EndTurn())  # WON-055, WON-A09
    return out


def _turn_card_playable(state: State, me: dict[str, Any], turn: dict[str, Any], card: str) -> bool:
    timing, effect = data.SCIENCE_CARDS[card]
    if timing != "turn":
        return False  # WON-127: game-end cards wait for the end
    if effect == "sail":
        return turn["move"] is None  # WON-Q08
    if effect == "gem":
        return state["gem_supply"] > 0 and me["gems"] < data.STORAGE_GEMS
    return True


def _legal_basic(state: State, seat: int, me: dict[str, Any], turn: dict[str, Any]) -> list[Command]:
    crew, i = turn["crew"], turn["space"] - 1
    if crew == "merchant":
        cost, _ = data.MERCHANT_SPACES[i]
        return [c.PerformAction()] if me["gold"] >= cost else []  # WON-119, WON-A11
    if crew == "scientist" and state["spaces"] == 3 and turn["space"] == data.SCIENTIST_EITHER_SPACE:
        return [c.PerformAction("science"), c.PerformAction("card")]  # WON-122
    return [c.PerformAction()]


def _legal_gold(state: State, seat: int, me: dict[str, Any], turn: dict[str, Any]) -> list[Command]:
    """WON-051, WON-A06: at most one gold action per turn, of the crew played."""
    if turn["gold_used"]:
        return []
    gold = me["gold"]
    crew = turn["crew"]
    if crew == "captain":  # WON-104
        move = turn["move"]
        return [
            c.BuyMoves(n)
            for n, cost in data.CAPTAIN_EXTRA.items()
            if gold >= cost and movement.can_finish(state, seat, move, move["left"] + n, gold - cost)
        ]
    if crew == "pilot":  # WON-107 (needless once turns are free, WON-108)
        move = turn["move"]
        if move["turns"] or gold < data.PILOT_TURN_COST:
            return []
        trial = dict(move, turns=True)
        if not movement.can_finish(state, seat, trial, move["left"], gold - data.PILOT_TURN_COST):
            return []
        return [c.BuyTurns()]
    if crew == "boatswain":  # WON-114
        return [c.BuyTreasureMove()] if gold >= data.BOATSWAIN_MOVE_COST else []
    if crew == "purser":  # WON-117
        bag = any(state["bag"].values())
        return [c.BuyTreasure()] if gold >= data.PURSER_DRAW_COST and bag else []
    if crew == "merchant":  # WON-120
        return [c.BuyVp()] if gold >= data.MERCHANT_VP_COST else []
    if crew == "scientist":  # WON-123
        if gold < data.SCIENTIST_RESEARCH_COST:
            return []
        out: list[Command] = []
        if me["science"] < data.SCIENCE_MAX:
            out.append(c.BuyResearch("science"))
        if state["science_deck"]:
            out.append(c.BuyResearch("card"))
        return out
    return []  # WON-111: the explorer's gold action is the Phase-3 turn


def _legal_final(state: State, seat: int, want: type[Command] | None) -> list[Command]:
    """WON-141, WON-Q10: game-end cards, gem exchange and moves, then finish."""
    me = state["seats"][seat]
    out: list[Command] = []
    # WON-127, WON-Q09: game-end cards are optional; WON-Q13: none after a sale.
    if me["science"] > 0 and not me["sold"]:
        for card in sorted(set(me["hand"])):
            if data.SCIENCE_CARDS[card][0] == "end":
                out.append(c.PlayScience(card))
    _cabin_ops(state, me, out, want)
    if not me["pending"]:
        out.append(c.FinishScoring())
    return out
