"""Waters of Nereus: no hidden information leaks to a seat or the spectator.

For random playout positions, everything hidden from seat S (other hands, the science deck
order, crew cards chosen but not yet revealed, the discovery stack and removed cards, the
neutral deck order) is perturbed; S's ``view``, S's ``legal`` and the refusals S gets from
``decide`` must not change.  Whether another seat has chosen its crew card is public
(WON-Q02: at the table one sees a card laid face down), so the perturbation changes which
card a seat chose, never whether it chose.  Every event of the log, redacted for S, must be unchanged when its
hidden fields are perturbed, and must not name another seat's science cards.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.waters_of_nereus import CONFIGS, SEED, perturb

from service.games.base import ADMIN, Event, RuleViolation, fold
from service.games.rng import Rng
from service.games.waters_of_nereus import ENGINE
from service.games.waters_of_nereus import commands as c

PROBES = [
    c.ChooseCrew("captain"),
    c.ChooseCrew("scientist"),
    c.EndTurn(),
    c.PlaceMarker(1),
    c.PlayScience("SC01"),
    c.DiscardScience("SC13"),
    c.TakeExplorerTurn("purser"),
    c.FinishScoring(),
]


def refusal(state, seat, cmd):
    try:
        ENGINE.decide(state, seat, cmd, Rng(SEED, domain=5))
    except RuleViolation as err:
        return (err.code, err.message)
    return None


def hidden_fields(event: Event, viewer) -> Event:
    """The event with every field hidden from ``viewer`` replaced by junk."""
    d = dict(event.data)
    t = event.type
    if t in ("ScienceDeckShuffled", "NeutralDeckShuffled"):
        d["deck"] = list(reversed(d["deck"]))
    elif t == "DiscoveryStackShuffled":
        d["stack"], d["removed"] = list(reversed(d["stack"])), ["junk"] * len(d["removed"])
    elif t == "ScienceCardsDealt" and d["seat"] != viewer:
        d["cards"] = ["junk"] * len(d["cards"])
    elif t == "ScienceCardDrawn" and d["seat"] != viewer:
        d["card"] = "junk"
    elif t == "CrewChosen" and d["seat"] != viewer:
        d["crew"] = "junk"  # WON-Q02: the seat that chose is public, its card is not
    return Event(t, d)


HIDDEN_TYPES = {"ScienceDeckShuffled", "NeutralDeckShuffled", "DiscoveryStackShuffled"}
PRIVATE_TYPES = {"ScienceCardsDealt", "ScienceCardDrawn", "CrewChosen"}


def positions(players: int, neutral: bool, seed: int, every: int):
    """(state, log so far) at every ``every``-th step of a random playout."""
    r = random.Random(seed)
    events = ENGINE.setup(players, {"neutral": True} if neutral else {}, Rng(SEED, domain=seed))
    state = fold(ENGINE, events)
    log = list(events)
    step = 0
    while ENGINE.result(state) is None:
        if step % every == 0 or state["phase"] == "choose":
            yield state, log
        seat = r.choice(ENGINE.to_act(state))
        cmd = r.choice(ENGINE.legal(state, seat))
        new = ENGINE.decide(state, seat, cmd, Rng(SEED, domain=10_000 + step))
        for ev in new:
            ENGINE.evolve(state, ev)
        log.extend(new)
        step += 1
    yield state, log


@pytest.mark.parametrize(("players", "neutral"), CONFIGS)
@pytest.mark.parametrize("seed", [1, 2])
def test_won_view_legal_and_refusals_ignore_hidden_information(players, neutral, seed):
    """WON-018/WON-040 and §4: perturbing what S cannot see changes nothing S sees."""
    r = random.Random(seed)
    checked = 0
    for state, _ in positions(players, neutral, seed, every=7):
        if ENGINE.result(state) is not None:
            # Finished: everyone sees everything (docs/games/waters-of-nereus.md,
            # "Hidden information"; tests/unit/waters_of_nereus/test_won_finished_view.py).
            continue
        for viewer in [None, *range(players)]:
            base_view = ENGINE.view(state, viewer)
            base_legal = ENGINE.legal(state, viewer) if viewer is not None else []
            base_refusals = [refusal(state, viewer, p) for p in PROBES] if viewer is not None else []
            for _ in range(2):
                other = perturb(state, viewer, r)
                assert ENGINE.view(other, viewer) == base_view
                if viewer is not None:
                    assert ENGINE.legal(other, viewer) == base_legal
                    assert [refusal(other, viewer, p) for p in PROBES] == base_refusals
                checked += 1
    assert checked > 100


@settings(max_examples=8, deadline=None)
@given(config=st.sampled_from(CONFIGS), seed=st.integers(0, 2**32), perturb_seed=st.integers(0, 2**32))
def test_won_hypothesis_views_ignore_hidden_information(config, seed, perturb_seed):
    """The same property on hypothesis-chosen games and perturbations (sparser positions)."""
    players, neutral = config
    r = random.Random(perturb_seed)
    for state, _ in positions(players, neutral, seed, every=25):
        if ENGINE.result(state) is not None:
            continue  # finished: everyone sees everything (see above)
        viewer = r.randrange(players)
        other = perturb(state, viewer, r)
        assert ENGINE.view(other, viewer) == ENGINE.view(state, viewer)
        assert ENGINE.legal(other, viewer) == ENGINE.legal(state, viewer)
        assert ENGINE.view(other, None) == ENGINE.view(state, None)


@pytest.mark.parametrize(("players", "neutral"), CONFIGS)
def test_won_redacted_events_carry_nothing_hidden(players, neutral):
    """§4: hidden event fields never reach S: redacting a perturbed event gives the same result;
    other seats' card ids never appear; S still sees its own cards; ADMIN sees everything."""
    *_, (state, log) = positions(players, neutral, 11, every=10_000)
    types = {e.type for e in log}
    assert {"ScienceCardsDealt", "CrewChosen", "ScienceDeckShuffled"} <= types
    for viewer in [None, *range(players)]:
        for ev in log:
            red = ENGINE.redact_event(ev, viewer)
            assert red == ENGINE.redact_event(hidden_fields(ev, viewer), viewer)
            if ev.type not in HIDDEN_TYPES | PRIVATE_TYPES:
                assert red is ev  # nothing else is hidden
            if ev.type in HIDDEN_TYPES:  # shape kept, every card a placeholder
                assert all(x is None for v in red.data.values() for x in v)
                assert [len(v) for v in red.data.values()] == [len(v) for v in ev.data.values()]
            if ev.type in ("ScienceCardsDealt", "ScienceCardDrawn") and ev.data["seat"] != viewer:
                text = json.dumps(red.to_json())
                cards = ev.data.get("cards") or [ev.data["card"]]
                assert not any(card in text for card in cards)
            if ev.type == "ScienceCardsDealt" and ev.data["seat"] == viewer:
                assert red.data["cards"] == ev.data["cards"]
            if ev.type == "CrewChosen" and ev.data["seat"] == viewer:
                assert red.data["crew"] == ev.data["crew"]
            if ev.type == "CrewChosen" and viewer != ev.data["seat"] and viewer != ADMIN:
                assert red.data == {"seat": ev.data["seat"], "crew": None}  # WON-Q02
            assert ENGINE.redact_event(ev, ADMIN) is ev


def test_won_admin_sees_everything_seat_sees_own():
    """ADMIN's view has every hand and the deck; a seat sees its own hand and only counts else."""
    state = fold(ENGINE, ENGINE.setup(3, {}, Rng(SEED)))
    admin = ENGINE.view(state, ADMIN)
    assert admin["science_deck"] == state["science_deck"]
    assert all("hand" in p for p in admin["seats"])
    mine = ENGINE.view(state, 1)
    assert mine["seats"][1]["hand"] == state["seats"][1]["hand"]
    assert "hand" not in mine["seats"][0] and mine["seats"][0]["hand_count"] == 3
    assert "science_deck" not in mine and mine["science_deck_count"] == len(state["science_deck"])
    spectator = json.dumps(ENGINE.view(state, None))
    for p in state["seats"]:
        for card in p["hand"]:
            assert f'"{card}"' not in spectator
