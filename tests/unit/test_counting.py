"""What counts on the leaderboards (docs/LEADERBOARDS.md, "What counts"):
service/domain/counting.py, pure."""

from __future__ import annotations

from service.domain import counting

RATED = {"rated": True, "players": ["ann", "bob", "cy"]}


def test_a_casual_game_has_no_reason_it_never_asked():
    assert counting.unrated_reason({"players": ["ann", "bob"]}, {"ranks": {}}, set()) is None
    assert counting.unrated_reason({"rated": False, "players": ["ann", "bob"]}, {}, set()) is None


def test_a_rated_game_counts_only_once_every_seat_decided():
    assert counting.unrated_reason(RATED, {"reason": "completed"}, {0, 1, 2}) is None
    assert counting.unrated_reason(RATED, {"reason": "forfeit"}, {0, 2}) == counting.NO_FIRST_DECISION
    assert counting.unrated_reason(RATED, {"reason": "forfeit"}, set()) == counting.NO_FIRST_DECISION
    assert counting.unrated_reason(RATED, {"reason": "aborted"}, {0, 1, 2}) == counting.ABORTED


def test_resignations_timeouts_and_the_platform_are_no_decisions():
    assert counting.is_decision({"seat": 1, "intent": {"type": "choose_crew", "crew": "captain"}}) == 1
    assert counting.is_decision({"seat": 1, "intent": {"type": "resign"}}) is None
    assert counting.is_decision({"seat": 1, "intent": {"type": "timeout"}, "auto": True}) is None
    assert counting.is_decision({"seat": None, "intent": None}) is None
    assert counting.is_decision({"seat": 0, "intent": {"type": "place_sub"}, "auto": True}) is None
    assert counting.is_decision(None) is None


def test_a_pairing_is_the_set_of_accounts_ignoring_order_and_case():
    assert counting.pairing_of(["Bob", "ann"]) == counting.pairing_of(["ann", "bob"]) == "ann bob"
    assert counting.pairing_of(["ann", "bob"]) != counting.pairing_of(["ann", "bob", "cy"])


def test_a_pairing_counts_at_most_the_limit_in_any_window():
    day = counting.PAIRING_WINDOW_S
    assert counting.PAIRING_LIMIT == 3 and day == 86400
    times = ["2031-01-01T00:00:00.000000Z", "2031-01-01T01:00:00.000000Z", "2031-01-01T02:00:00.000000Z"]
    assert counting.pairing_allows(times[:2], "2031-01-01T03:00:00.000000Z")
    assert not counting.pairing_allows(times, "2031-01-01T23:59:59.999999Z")
    # The first game leaves the window 24 h after it finished: one more may count.
    assert counting.pairing_allows(times, "2031-01-02T00:00:00.000000Z")
    assert counting.recent_counted(times, "2031-01-02T01:30:00.000000Z") == times[2:]
