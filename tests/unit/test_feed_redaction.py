"""What the events feed shows another seat while a game runs (service.audit.feed_line)."""

from __future__ import annotations

from service.audit.reading import feed_line
from service.domain.records import StoredEvent
from service.games.base import ADMIN, Event


class SecretChoices:
    """An engine stub whose ``Chosen`` events are secret to everyone but the chooser."""

    def redact_event(self, event: Event, viewer):
        if event.type == "Chosen" and viewer != event.data["seat"]:
            return Event(event.type, {})
        return event


def _event(type_: str, data: dict, seat: int) -> StoredEvent:
    meta = {"intent_id": "i-1", "seat": seat, "received_at": "2026-11-29T00:00:00Z", "intent": {"type": "x"}}
    return StoredEvent("g", 5, type_, 1, data, meta, "d" * 64, "m" * 64, "p" * 64, "h" * 64)


def test_a_secret_action_hides_what_and_who_from_other_seats():
    line = feed_line(SecretChoices(), _event("Chosen", {"seat": 1, "card": "pilot"}, 1), 0, reveal_all=False)
    assert line["data"] == {}
    assert "seat" not in line["meta"] and "intent" not in line["meta"]
    assert line["redacted"] is True
    # The digests and links stay, so the chain is still checkable.
    assert (line["data_digest"], line["meta_digest"], line["hash"]) == ("d" * 64, "m" * 64, "h" * 64)


def test_the_chooser_sees_its_own_action():
    line = feed_line(SecretChoices(), _event("Chosen", {"seat": 1, "card": "pilot"}, 1), 1, reveal_all=False)
    assert line["data"]["card"] == "pilot" and line["meta"]["seat"] == 1 and line["redacted"] is False


def test_a_public_action_shows_who_but_not_the_intent_of_another_seat():
    line = feed_line(SecretChoices(), _event("Sailed", {"to": [1, 2]}, 1), None, reveal_all=False)
    assert line["data"] == {"to": [1, 2]} and line["meta"]["seat"] == 1
    assert "intent" not in line["meta"]


def test_organiser_and_finished_games_see_everything():
    e = _event("Chosen", {"seat": 1, "card": "pilot"}, 1)
    for line in (feed_line(SecretChoices(), e, ADMIN, reveal_all=False), feed_line(SecretChoices(), e, 0, True)):
        assert line["data"]["card"] == "pilot" and line["meta"]["intent"] == {"type": "x"}
