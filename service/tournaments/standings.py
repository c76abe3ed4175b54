"""Points from table places, tie-breaks and standings, per round (TRN-030..TRN-036).

Everything is exact: points are :class:`fractions.Fraction` (ties share the
average of the places they span, which need not be whole), and order and ties
are decided on those exact values.  Only :func:`row_json` turns them into JSON
numbers, for people and clients.

* Places at a table (TRN-031, TRN-032, TRN-033): seats still playing at the
  end keep the game's ranks (equal ranks are a tie); forfeited seats come
  after them, the last to leave first; in an aborted game the seats still
  playing all tie.
* Points (TRN-030): a group of ``k`` seats tied over places ``i..i+k-1`` each
  gets ``(points[i] + ... + points[i+k-1]) / k``.  A bye (TRN-034) is worth the
  average of the scheme of the preferred table size.
* Tie-breaks (TRN-035), in order: opponents' points (for each game, the
  average of the current points of the player's tablemates; summed over the
  player's games), total game score (the game's own scores; a forfeited seat's
  counts 0), then head-to-head among the players still tied (TRN-036).
* Withdrawn players and late entrants (TRN-061): they keep their places in the
  standings, marked; for their tablemates' opponents' points, every round such an
  opponent did not play (after leaving, before joining) counts as a drawn round,
  the average place, as FIDE's Tie-Break Regulations (Handbook C.07, article 16,
  unplayed rounds) count an opponent's unplayed rounds as draws.
* House bots (TRN-080, TRN-081): the bye bot takes its place at its table (so it
  can beat a player) but has no line in the standings; as an opponent it counts
  as one who drew every round.  ``bot_games`` counts each player's games against
  a house bot (the bye bot, or a bot registered like a player).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from service.tournaments.events import ABORTED
from service.tournaments.evolve import bye_bot, is_bot, withdrawn

State = dict[str, Any]


def default_points(sizes: Iterable[int]) -> dict[str, list[int]]:
    """TRN-030: at a table of ``n``, 1st gets ``n-1``, 2nd ``n-2`` ... last 0."""
    return {str(n): list(range(n - 1, -1, -1)) for n in sizes}


def bye_points(state: State) -> Fraction:
    """TRN-034: a bye is worth the average place at a table of the preferred size."""
    row = state["points"][str(state["table_size"])]
    return Fraction(sum(row), len(row))


def place_groups(result: dict[str, Any], size: int) -> list[list[int]]:
    """The seats of a finished table, best first, in groups that share places."""
    out = result["forfeited"]
    stayed = [s for s in range(size) if s not in out]
    groups: list[list[int]] = []
    if result["reason"] == ABORTED:  # TRN-033: nobody won; those still playing share
        groups = [stayed] if stayed else []
    else:  # TRN-031: the game's ranks, equal ranks tie
        ranks = result["ranks"]
        for seat in sorted(stayed, key=lambda s: (ranks[str(s)], s)):
            if groups and ranks[str(groups[-1][0])] == ranks[str(seat)]:
                groups[-1].append(seat)
            else:
                groups.append([seat])
    groups += [[s] for s in reversed(out)]  # TRN-032: the last to leave ranks best of them
    return groups


def seat_places(result: dict[str, Any], size: int) -> list[tuple[int, int]]:
    """Per seat: ``(first place of its group, counting from 0; seats in the group)``."""
    out = [(0, 0)] * size
    start = 0
    for group in place_groups(result, size):
        for seat in group:
            out[seat] = (start, len(group))
        start += len(group)
    return out


def seat_points(result: dict[str, Any], row: list[int]) -> list[Fraction]:
    """TRN-030: each seat's points at a table whose scheme is ``row``."""
    return [Fraction(sum(row[start : start + k]), k) for start, k in seat_places(result, len(row))]


def seat_score(result: dict[str, Any], seat: int) -> int:
    """TRN-035: the game's score of a seat; a forfeited seat's counts 0."""
    if seat in result["forfeited"]:
        return 0
    return int(result["scores"].get(str(seat), 0))


@dataclass(frozen=True, slots=True)
class Row:
    rank: int
    player: str
    points: Fraction
    opponents_points: Fraction
    game_score: int
    head_to_head: int
    games: int
    byes: int
    withdrawn: bool = False
    bot_games: int = 0
    bot: bool = False


@dataclass
class _Games:
    """One player's record: per game, the table's players and each seat's place."""

    tables: list[tuple[list[str], list[tuple[int, int]]]] = field(default_factory=list)


def standings(state: State, through: int | None = None) -> list[Row]:
    """TRN-037: the standings after round ``through`` (default: everything so far; a
    round still being played counts its finished tables and its byes), best first.
    Players tied on every criterion share a rank and are listed in lot order."""
    players = state["players"]
    lot = {p: i for i, p in enumerate(state["lot"] or players)}
    points = {p: Fraction(0) for p in players}
    score = dict.fromkeys(players, 0)
    byes = dict.fromkeys(players, 0)
    record: dict[str, _Games] = defaultdict(_Games)
    bye = bye_points(state)
    unplayed = dict.fromkeys(players, 0)
    robot = bye_bot(state)
    vs_bots = dict.fromkeys(players, 0)
    counted_rounds = 0
    for rnd in state["history"]:
        if through is not None and rnd["round"] > through:
            break
        counted_rounds += 1
        present = {p for t in rnd["tables"] for p in t["players"]} | set(rnd["byes"])
        for p in players:
            unplayed[p] += p not in present  # TRN-061: withdrawn, or not joined yet
        for p in rnd["byes"]:
            points[p] += bye
            byes[p] += 1
        for table in rnd["tables"]:
            result = table["result"]
            if result is None:
                continue
            seated = table["players"]
            places = seat_places(result, len(seated))
            got = seat_points(result, state["points"][str(len(seated))])
            bots = sum(is_bot(state, q) for q in seated)
            for seat, p in enumerate(seated):
                if p == robot:
                    continue  # TRN-080: the bye bot takes its place at the table, not in the standings
                points[p] += got[seat]
                score[p] += seat_score(result, seat)
                record[p].tables.append((seated, places))
                vs_bots[p] += bots - is_bot(state, p) > 0  # TRN-081
    # TRN-061 (FIDE C.07 art. 16): an opponent's unplayed rounds count as drawn ones.
    counted = {p: points[p] + unplayed[p] * bye for p in players}
    if robot is not None:  # TRN-081: the bye bot counts as an opponent who drew every round
        counted[robot] = counted_rounds * bye
    opponents = {
        p: sum(
            (Fraction(sum(counted[q] for q in seated if q != p), len(seated) - 1) for seated, _ in record[p].tables),
            Fraction(0),
        )
        for p in players
    }
    key = {p: (points[p], opponents[p], score[p]) for p in players}
    tied: dict[tuple[Fraction, Fraction, int], list[str]] = defaultdict(list)
    for p in players:
        tied[key[p]].append(p)
    h2h = dict.fromkeys(players, 0)
    for group in tied.values():
        if len(group) > 1:
            h2h.update(head_to_head(group, record))
    full = {p: (*key[p], h2h[p]) for p in players}
    order = sorted(players, key=lambda p: (tuple(-x for x in full[p]), lot[p]))
    gone = withdrawn(state, len(state["history"]) if through is None else through)
    rows: list[Row] = []
    for i, p in enumerate(order):
        rank = rows[-1].rank if i and full[p] == full[order[i - 1]] else i + 1
        games = len(record[p].tables)
        rows.append(
            Row(
                rank,
                p,
                points[p],
                opponents[p],
                score[p],
                h2h[p],
                games,
                byes[p],
                p in gone,
                vs_bots[p],
                is_bot(state, p),
            )
        )
    return rows


def head_to_head(group: list[str], record: dict[str, _Games]) -> dict[str, int]:
    """TRN-036: among ``group``, for each game two of them shared, +1 to the one
    placed better and -1 to the other (nothing for a shared place)."""
    members = set(group)
    out = dict.fromkeys(group, 0)
    for p in group:
        for seated, places in record[p].tables:
            mine = places[seated.index(p)][0]
            for seat, q in enumerate(seated):
                if q != p and q in members:
                    theirs = places[seat][0]
                    out[p] += (mine < theirs) - (mine > theirs)
    return out


def order(state: State, through: int | None = None) -> list[str]:
    """The players, best first (what the Swiss pairing groups by)."""
    return [row.player for row in standings(state, through)]


def number(x: Fraction | int) -> int | float:
    """A JSON number: an integer when whole, else the nearest double (display only)."""
    x = Fraction(x)
    return x.numerator if x.denominator == 1 else x.numerator / x.denominator


def row_json(row: Row) -> dict[str, Any]:
    """One line of ``GET /v1/tournaments/{id}/standings``."""
    return {
        "rank": row.rank,
        "player": row.player,
        "points": number(row.points),
        "tiebreaks": {
            "opponents_points": number(row.opponents_points),
            "game_score": row.game_score,
            "head_to_head": row.head_to_head,
        },
        "games": row.games,
        "byes": row.byes,
        "withdrawn": row.withdrawn,
        "bot_games": row.bot_games,
        "bot": row.bot,
    }


def standings_json(state: State, through: int | None = None) -> dict[str, Any]:
    """``{"round": n, "standings": [...]}`` after round ``through`` (default: the
    last round paired, as far as it has been played)."""
    last = len(state["history"]) if through is None else through
    return {"round": last, "standings": [row_json(r) for r in standings(state, last)]}


def by_round(state: State) -> list[dict[str, Any]]:
    """The standings after each round that has been paired, in order."""
    return [standings_json(state, rnd["round"]) for rnd in state["history"]]
