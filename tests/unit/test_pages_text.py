"""The log in words (service/http/pages_text): every event every engine can
fold has a sentence, redacted events read as their vaguer sentence and never
leak what was redacted, and no sentence shows a placeholder."""

from __future__ import annotations

import random

import pytest

from service.games import registry
from service.games.nauticus import evolve as nau_evolve
from service.games.nautilus_industries import evolve as ni_evolve
from service.games.simulate import random_playout
from service.games.waters_of_nereus import evolve as won_evolve
from service.http import pages_text

#: The event types each engine folds (its evolve dispatch), GameStarted included.
FOLDED = {
    "nauticus": set(nau_evolve._HANDLERS),
    "nautilus-industries": set(ni_evolve.APPLY),
    "waters-of-nereus": set(won_evolve.HANDLERS) | {"GameStarted"},
}
PLAYERS = ["ann", "bob", "cy", "dee"]


@pytest.mark.parametrize("game", registry.names())
def test_every_event_type_has_a_sentence(game):
    missing = sorted(t for t in FOLDED[game] if not pages_text.has_sentence(game, t))
    assert not missing, f"{game}: no sentence for {missing}"
    assert pages_text.has_sentence(game, "GameCreated") and pages_text.has_sentence(game, "GameFinished")


@pytest.mark.parametrize("game", registry.names())
def test_sentences_of_a_whole_game_as_every_viewer(game):
    engine = registry.get(game)
    options = {"neutral": True} if game == "waters-of-nereus" else {}
    playout = random_playout(engine, 2, options, b"\x05" * 32, random.Random(2))
    assert playout.finished
    for event in playout.events:
        for viewer in (None, 0, 1):
            data = engine.redact_event(event, viewer).data
            text = pages_text.sentence(game, {"type": event.type, "data": data}, PLAYERS[:2])
            assert text and "{" not in text and "None" not in text, (event.type, viewer, text)
            assert text != pages_text.humanise(event.type), f"{event.type} fell back to its type name"


def test_a_redacted_secret_choice_reads_as_a_secret():
    """WON-040: another seat's crew choice arrives as {} and must not name the seat or the crew."""
    hidden = pages_text.sentence("waters-of-nereus", {"type": "CrewChosen", "data": {}}, ["ann", "bob"])
    assert hidden == "A crew card was chosen in secret"
    own = pages_text.sentence(
        "waters-of-nereus", {"type": "CrewChosen", "data": {"seat": 1, "crew": "pilot"}}, ["ann", "bob"]
    )
    assert own == "bob chose pilot in secret"
    dealt = pages_text.sentence(
        "waters-of-nereus", {"type": "ScienceCardDrawn", "data": {"seat": 0, "card": None}}, ["ann", "bob"]
    )
    assert dealt == "ann drew a science card"


def test_sentences_read_well():
    nau = pages_text.sentence(
        "nauticus",
        {"type": "ItemBought", "data": {"seat": 0, "item": "sail_whale", "price": 2, "blue": False, "to": "warehouse"}},
        ["ann", "bob"],
    )
    assert nau == "ann bought a whale sail for 2 Taler, into the warehouse"
    ni = pages_text.sentence(
        "nautilus-industries",
        {"type": "GemsSold", "data": {"seat": 1, "colour": "O", "count": 2, "price": 3, "money": 6}},
        ["ann", "bob"],
    )
    assert ni == "bob sold 2 orange at $3 for $6"
    timed_out = pages_text.sentence("nauticus", {"type": "SeatTimedOut", "data": {"seat": 1}}, ["ann", "bob"])
    assert timed_out == "bob ran out of time and was forfeited"
    # An event no module phrases yet still reads as words, with whom it concerns.
    unknown = pages_text.sentence("nauticus", {"type": "SeatWentFishing", "data": {"seat": 1}}, ["ann", "bob"])
    assert unknown == "Seat went fishing (bob)"
