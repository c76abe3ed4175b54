"""docs/LEADERBOARDS.md, "Trust": who moves a rating and when a player is established
(``projections/leaderboards.py``'s pure parts: no Redis)."""

from __future__ import annotations

from projections import leaderboards as lb

T0 = "2031-01-01T00:00:00.000000Z"


def at(hours: float) -> str:
    from datetime import datetime, timedelta

    when = datetime.fromisoformat(T0.replace("Z", "+00:00")) + timedelta(hours=hours)
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def test_house_bots_are_established_from_the_start_and_others_are_not():
    assert lb.new_record("nauticus-bot-1")["established_at"] == ""
    assert lb.new_record("nauticus-bot-1-3")["established_at"] == ""
    assert lb.new_record("ann")["established_at"] is None
    assert lb.established_when(lb.new_record("nauticus-bot-2"), T0)
    assert not lb.established_when(lb.new_record("ann"), T0)
    later = lb.new_record("ann") | {"established_at": at(5)}
    assert not lb.established_when(later, at(4)) and lb.established_when(later, at(5))


def test_only_established_opponents_move_a_rating():
    fresh, bot = lb.new_record("ann"), lb.new_record("nauticus-bot-1")
    start = (float(fresh["mu"]), float(fresh["sigma"]))
    # Nobody established: no rating moves.
    assert lb._rate([fresh, dict(fresh)], ["ann", "bob"], [1, 2], [False, False]) == [start] * 2
    # Against a house bot: the person's rating moves, the bot's does not (the person was not established).
    person, house = lb._rate([fresh, bot], ["ann", "nauticus-bot-1"], [1, 2], [False, True])
    assert person[0] > 25.0 and house == start
    # Everyone established: exactly one rate() of the whole game.
    whole = lb._rate([dict(bot), dict(bot), dict(bot)], ["a", "b", "c"], [1, 1, 3], [True] * 3)
    teams = [[lb.model().create_rating(list(start), name=n)] for n in "abc"]
    expected = lb.model().rate(teams, ranks=[1.0, 1.0, 3.0])
    assert whole == [(t[0].mu, t[0].sigma) for t in expected]


def test_a_player_is_established_by_five_games_against_three_established_opponents_over_a_day():
    rec = lb.new_record("ann")
    for i, (opponent, hours) in enumerate([("b1", 0), ("b2", 6), ("b3", 12), ("b1", 18)]):
        lb._trust(rec, [opponent], at(hours))
        assert rec["established_at"] is None, i
    lb._trust(rec, ["eve"], at(23.9))  # five games, three opponents, but not a day yet
    assert rec["established_at"] is None and rec["opponents"] == ["b1", "b2", "b3"]
    lb._trust(rec, [], at(22))  # a game against nobody established counts for nothing
    assert rec["vs_established"] == 5 and rec["established_at"] is None
    # The first counted game finished a day after the first establishes it.
    lb._trust(rec, [], at(30))
    assert rec["established_at"] == at(30) and rec["first_at"] == at(0)
    # Two opponents only, however many games and days: never.
    two = lb.new_record("bob")
    for day in range(10):
        lb._trust(two, ["b1" if day % 2 else "b2"], at(24 * day))
    assert two["established_at"] is None
