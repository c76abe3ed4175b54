"""Points, places, tie-breaks and standings, with hand-computed numbers (TRN-030..TRN-037)."""

from __future__ import annotations

from fractions import Fraction as F

import pytest
from support.tournament_states import result, state_of

from service.tournaments import standings
from service.tournaments.standings import place_groups, seat_points, seat_score

DEFAULT_4 = [3, 2, 1, 0]


def test_trn_030_default_scheme_is_n_minus_1_down_to_0():
    assert standings.default_points([2, 3, 4]) == {"2": [1, 0], "3": [2, 1, 0], "4": [3, 2, 1, 0]}
    assert seat_points(result([2, 1, 4, 3]), DEFAULT_4) == [2, 3, 0, 1]


def test_trn_031_places_follow_the_games_ranks_not_its_seat_order():
    # The ranking list is the game's; the ranks decide (seat 3 won, seat 0 last).
    res = result([4, 2, 3, 1])
    assert place_groups(res, 4) == [[3], [1], [2], [0]]
    assert seat_points(res, DEFAULT_4) == [0, 2, 1, 3]
    # Equal ranks tie, whatever order the ranking lists them in.
    tied = {**result([1, 1, 3, 4]), "ranking": [1, 0, 2, 3]}
    assert place_groups(tied, 4) == [[0, 1], [2], [3]]


def test_trn_030_ties_share_the_average_of_their_places():
    # Seats 0 and 2 tie for 1st: (3 + 2) / 2 each; seat 1 3rd: 1; seat 3 last: 0.
    assert seat_points(result([1, 3, 1, 4]), DEFAULT_4) == [F(5, 2), 1, F(5, 2), 0]
    # Three tie for 2nd: (2 + 1 + 0) / 3 = 1 each.
    assert seat_points(result([1, 2, 2, 2]), DEFAULT_4) == [3, 1, 1, 1]
    # Everyone ties: the average, 1.5.
    assert seat_points(result([1, 1, 1, 1]), DEFAULT_4) == [F(3, 2)] * 4
    # A scheme with thirds: (5 + 3 + 2) / 3.
    assert seat_points(result([1, 1, 1, 4]), [5, 3, 2, 0]) == [F(10, 3)] * 3 + [0]


def test_trn_032_forfeited_seats_rank_last_the_last_to_leave_best():
    """Seat 1 resigned first, then seat 3; seats 0 and 2 finished (2 won).  The game's own
    ranks of forfeited seats are not trusted: the forfeit order decides."""
    res = result([2, 1, 1, 3], forfeited=[1, 3])  # the game claims seat 1 tied for 1st
    assert place_groups(res, 4) == [[2], [0], [3], [1]]
    assert seat_points(res, DEFAULT_4) == [2, 0, 3, 1]


def test_trn_033_an_aborted_game_shares_the_places_of_those_still_playing():
    res = {"reason": "aborted", "forfeited": [2], "ranking": [], "ranks": {}, "scores": {}}
    assert place_groups(res, 4) == [[0, 1, 3], [2]]
    assert seat_points(res, DEFAULT_4) == [2, 2, 0, 2]  # (3 + 2 + 1) / 3 = 2; the forfeited seat 0


def test_trn_033_a_game_ended_by_forfeits_ranks_the_survivor_first():
    res = {
        "reason": "forfeit",
        "forfeited": [0, 2],
        "ranking": [1, 2, 0],
        "ranks": {"1": 1, "2": 2, "0": 3},
        "scores": {},
    }
    assert seat_points(res, [2, 1, 0]) == [0, 2, 1]


def test_trn_035_a_forfeited_seat_scores_nothing_for_the_tie_break():
    res = result([1, 2, 3], scores=[9, 7, 8], forfeited=[2])
    assert [seat_score(res, s) for s in range(3)] == [9, 7, 0]


def six_players():
    """Two rounds of two tables of 3 (scheme 2/1/0), worked out by hand:

    R1  A B C: A 1st (10), B 2nd (8), C 3rd (5)     -> A 2, B 1, C 0
        D E F: D 1st (12), E 2nd (9), F 3rd (1)     -> D 2, E 1, F 0
    R2  A D E: D 1st (7), A 2nd (6), E 3rd (4)      -> D 2, A 1, E 0
        B C F: B 1st (5), C and F tie 2nd (3, 3)    -> B 2, C 1/2, F 1/2

    Points: D 4, A 3, B 3, E 1, C 1/2, F 1/2.
    Opponents' points (average of tablemates' points, per game, summed):
      A: (3 + 1/2)/2 + (4 + 1)/2 = 7/4 + 5/2 = 17/4
      B: (3 + 1/2)/2 + (1/2 + 1/2)/2 = 7/4 + 1/2 = 9/4
      C: (3 + 3)/2 + (3 + 1/2)/2 = 3 + 7/4 = 19/4
      F: (4 + 1)/2 + (3 + 1/2)/2 = 5/2 + 7/4 = 17/4
      D: (1 + 1/2)/2 + (3 + 1)/2 = 3/4 + 2 = 11/4
      E: (4 + 1/2)/2 + (3 + 4)/2 = 9/4 + 7/2 = 23/4
    So A (17/4) is ahead of B (9/4), and C (19/4) of F (17/4)."""
    return state_of(
        ["A00", "B00", "C00", "D00", "E00", "F00"],
        [
            [
                (["A00", "B00", "C00"], result([1, 2, 3], [10, 8, 5])),
                (["D00", "E00", "F00"], result([1, 2, 3], [12, 9, 1])),
            ],
            [
                (["A00", "D00", "E00"], result([2, 1, 3], [6, 7, 4])),
                (["B00", "C00", "F00"], result([1, 2, 2], [5, 3, 3])),
            ],
        ],
    )


def test_trn_035_standings_of_a_hand_worked_tournament():
    rows = standings.standings(six_players())
    by = {r.player: r for r in rows}
    assert [r.player for r in rows] == ["D00", "A00", "B00", "E00", "C00", "F00"]
    assert [r.rank for r in rows] == [1, 2, 3, 4, 5, 6]
    assert {p: by[p].points for p in by} == {
        "A00": 3,
        "B00": 3,
        "C00": F(1, 2),
        "D00": 4,
        "E00": 1,
        "F00": F(1, 2),
    }
    assert by["A00"].opponents_points == F(17, 4)
    assert by["B00"].opponents_points == F(9, 4)
    assert by["C00"].opponents_points == F(19, 4)
    assert by["F00"].opponents_points == F(17, 4)
    assert by["D00"].opponents_points == F(11, 4)
    assert by["E00"].opponents_points == F(23, 4)
    assert {p: by[p].game_score for p in by} == {"A00": 16, "B00": 13, "C00": 8, "D00": 19, "E00": 13, "F00": 4}
    assert all(r.games == 2 and r.byes == 0 and r.head_to_head == 0 for r in rows)


def test_trn_037_standings_per_round():
    state = six_players()
    after_1 = standings.standings_json(state, 1)
    assert after_1["round"] == 1
    assert [(r["rank"], r["player"], r["points"]) for r in after_1["standings"]] == [
        # A and D tie on 2 points and 1/2 opponents' points; D scored 12 to A's 10.
        (1, "D00", 2),
        (2, "A00", 2),
        # B and E: 1 point, opponents (2 + 0)/2 = 1 each; E scored 9 to B's 8.
        (3, "E00", 1),
        (4, "B00", 1),
        (5, "C00", 0),
        (6, "F00", 0),
    ]
    assert [s["round"] for s in standings.by_round(state)] == [1, 2]
    assert standings.by_round(state)[1] == standings.standings_json(state)


def test_trn_036_head_to_head_breaks_what_points_opponents_and_score_leave_tied():
    """A scheme of 1/1/0: A and B both get 1 point, both have (1 + 0)/2 opponents' points and
    both scored 5; A placed above B at their table, so A is ahead."""
    state = state_of(
        ["C00", "B00", "A00"],
        [[(["A00", "B00", "C00"], result([1, 2, 3], [5, 5, 2]))]],
        points={"3": [1, 1, 0]},
    )
    rows = standings.standings(state)
    assert [(r.rank, r.player, r.head_to_head) for r in rows] == [(1, "A00", 1), (2, "B00", -1), (3, "C00", 0)]


def test_trn_037_players_tied_on_everything_share_a_rank_in_lot_order():
    state = state_of(
        ["E00", "B00", "A00", "D00", "C00", "F00"],  # the lot
        [
            [
                (["A00", "B00", "C00"], result([1, 2, 3], [5, 3, 1])),
                (["D00", "E00", "F00"], result([1, 2, 3], [5, 3, 1])),
            ]
        ],
    )
    rows = standings.standings(state)
    assert [(r.rank, r.player) for r in rows] == [
        (1, "A00"),
        (1, "D00"),
        (3, "E00"),
        (3, "B00"),
        (5, "C00"),
        (5, "F00"),
    ]


def test_trn_034_a_bye_is_worth_the_average_place():
    state = state_of(
        ["A00", "B00", "C00", "D00", "E00"],
        [[(["A00", "B00", "C00", "D00"], result([1, 2, 3, 4], [4, 3, 2, 1]))]],
        sizes=(4,),
        byes=[["E00"]],
    )
    by = {r.player: r for r in standings.standings(state)}
    assert by["E00"].points == F(3, 2)
    assert (by["E00"].games, by["E00"].byes, by["E00"].opponents_points) == (0, 1, 0)


@pytest.mark.parametrize(("value", "shown"), [(F(3), 3), (F(5, 2), 2.5), (F(10, 3), 10 / 3), (0, 0)])
def test_trn_030_json_numbers(value, shown):
    assert standings.number(value) == shown
    assert type(standings.number(value)) is type(shown)


def test_trn_037_row_json_shape():
    row = standings.standings_json(six_players())["standings"][1]
    assert row == {
        "rank": 2,
        "player": "A00",
        "points": 3,
        "tiebreaks": {"opponents_points": 4.25, "game_score": 16, "head_to_head": 0},
        "games": 2,
        "byes": 0,
        "withdrawn": False,
        "bot_games": 0,
        "bot": False,
    }
