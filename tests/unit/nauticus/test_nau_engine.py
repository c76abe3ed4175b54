"""Nauticus engine contract: registry, schemas, random playouts, replay, refusals (all checklist rules run
together: NAU-020, NAU-021 game length, NAU-002 conservation via check_invariants)."""

from __future__ import annotations

import json
import random

import pytest
from marshmallow import ValidationError

from schemas.intents import load_intent
from schemas.intents.nauticus import SCHEMAS
from service.games import registry
from service.games.base import ADMIN, Command, RuleViolation, clone_state, fold
from service.games.nauticus import ENGINE, rules
from service.games.nauticus.commands import COMMANDS, EndTurn
from service.games.rng import Rng


def playout(seed: int, players: int, bias: bool = True) -> tuple[list, list, dict]:
    """A seeded random game; with ``bias`` it prefers doing things over ending turns (deeper states)."""
    chooser = random.Random(seed)
    key = seed.to_bytes(32, "big")
    events = ENGINE.setup(players, {}, Rng(key, domain=0))
    state = fold(ENGINE, events)
    steps = []
    while ENGINE.result(state) is None:
        assert len(steps) < 5000
        (seat,) = ENGINE.to_act(state)
        legal = ENGINE.legal(state, seat)
        assert legal
        for other in range(players):
            if other != seat:
                assert ENGINE.legal(state, other) == []
        if bias:
            busy = [c for c in legal if c.type not in ("end_turn", "pass", "end_extra_action")]
            if busy and chooser.random() < 0.85:
                legal = busy
        cmd = chooser.choice(legal)
        assert load_intent("nauticus", json.loads(json.dumps(cmd.to_json()))) == cmd
        before = clone_state(state)
        domain = len(events)
        new = ENGINE.decide(state, seat, cmd, Rng(key, domain=domain))
        assert state == before, "decide mutated the state"
        for e in new:
            state = ENGINE.evolve(state, e)
        ENGINE.check_invariants(state)
        events += new
        steps.append((seat, cmd, domain))
    return events, steps, state


@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_playouts_end_and_replay_exactly(players):
    """Whole games: invariants at every step, legal/decide agreement, schema round trip, replay exactness."""
    for seed in range(6):
        events, steps, state = playout(seed * 10 + players, players)
        assert json.loads(json.dumps(state)) == state
        assert fold(ENGINE, events) == state
        key = (seed * 10 + players).to_bytes(32, "big")
        again = ENGINE.setup(players, {}, Rng(key, domain=0))
        s2 = fold(ENGINE, again)
        for seat, cmd, domain in steps:
            new = ENGINE.decide(s2, seat, cmd, Rng(key, domain=domain))
            for e in new:
                ENGINE.evolve(s2, e)
            again += new
        assert [e.to_json() for e in again] == [e.to_json() for e in events]
        result = ENGINE.result(state)
        assert sorted(result["ranking"]) == list(range(players))
        assert set(result["scores"]) == {str(i) for i in range(players)}
        assert ENGINE.to_act(state) == []
        for viewer in (*range(players), None, ADMIN):
            ENGINE.view(state, viewer)


def test_skipping_the_copy_for_quiet_events_changes_nothing(monkeypatch):
    """The speed shortcut (no follow-up search after events that cannot have one) gives the same events."""
    events, steps, _ = playout(5, 3)
    monkeypatch.setattr(rules, "_quiet", lambda state, event: False)
    key = (5).to_bytes(32, "big")
    again = ENGINE.setup(3, {}, Rng(key, domain=0))
    state = fold(ENGINE, again)
    for seat, cmd, domain in steps:
        new = ENGINE.decide(state, seat, cmd, Rng(key, domain=domain))
        for e in new:
            ENGINE.evolve(state, e)
        again += new
    assert [e.to_json() for e in again] == [e.to_json() for e in events]


def test_registry_schemas_and_commands():
    assert registry.get("nauticus") is ENGINE
    assert ENGINE.name == "nauticus" and ENGINE.version == "1.0.0"
    assert set(SCHEMAS) == set(COMMANDS) == set(ENGINE.commands)
    for wire, cls in COMMANDS.items():
        assert cls.type == wire
    with pytest.raises(ValidationError):
        load_intent("nauticus", {"type": "end_turn", "extra": 1})
    with pytest.raises(ValidationError):
        load_intent("nauticus", {"type": "choose_action", "space": 8, "bonus_item": ""})


def test_refusals_outside_the_game():
    state = fold(ENGINE, ENGINE.setup(2, {}, Rng(bytes(32))))

    class Foreign(Command):
        type = "foreign"

    with pytest.raises(RuleViolation) as info:
        ENGINE.decide(state, 0, Foreign(), Rng(bytes(32)))
    assert info.value.code == "unknown_command"
    _, _, over = playout(3, 2, bias=False)
    with pytest.raises(RuleViolation) as info:
        ENGINE.decide(over, 0, EndTurn(), Rng(bytes(32)))
    assert info.value.code == "game_over"


def test_invariants_catch_lost_components():
    state = fold(ENGINE, ENGINE.setup(2, {}, Rng(bytes(32))))
    state["stacks"]["bow"] -= 1
    with pytest.raises(AssertionError):
        ENGINE.check_invariants(state)
    state["stacks"]["bow"] += 1
    state["seats"][0]["taler"] = -1
    with pytest.raises(AssertionError):
        ENGINE.check_invariants(state)


def test_schema_defaults_for_unused_fields():
    """Unused placement fields, an empty bonus item and the reward goods may be left out (default 0 / "" / [])."""
    from service.games.nauticus.commands import BuyItem, ChooseAction, ChooseReward

    assert load_intent("nauticus", {"type": "buy_item", "item": "bow", "to": "new_ship"}) == BuyItem(
        "bow", "new_ship", 0, 0
    )
    assert load_intent("nauticus", {"type": "choose_action", "space": 4}) == ChooseAction(4, "")
    assert load_intent("nauticus", {"type": "choose_reward", "reward": "taler"}) == ChooseReward("taler", [])
    with pytest.raises(ValidationError):
        load_intent("nauticus", {"type": "deliver_goods"})
    with pytest.raises(ValidationError):
        load_intent("nauticus", {"type": "buy_item", "item": "mast_crown", "to": "warehouse"})


def test_refusal_codes_name_the_rule():
    """Refusals: stable codes and a message naming the checklist rule."""
    from service.games.nauticus.commands import (
        BuyItem,
        ChooseAction,
        PassAction,
        Transport,
        UseExtraAction,
        WithdrawMoney,
    )

    state = fold(ENGINE, ENGINE.setup(2, {}, Rng(bytes(32))))
    space = state["layout"].index("buy_goods")
    cmd = next(c for c in ENGINE.legal(state, 0) if c.space == space)
    for e in ENGINE.decide(state, 0, cmd, Rng(bytes(32), domain=1)):
        ENGINE.evolve(state, e)

    def code(command) -> tuple[str, str]:
        with pytest.raises(RuleViolation) as info:
            ENGINE.decide(state, 0, command, Rng(bytes(32), domain=2))
        return info.value.code, info.value.message

    assert code(ChooseAction(1, ""))[0] == "action_already_chosen"
    assert code(WithdrawMoney())[0] == "wrong_action"
    assert code(Transport("coffee", "ship", 0, 0))[0] == "wrong_action"
    assert code(BuyItem("bow", "warehouse", 0, 0))[0] == "invalid_item"
    c, message = code(BuyItem("coffee", "warehouse", 3, 0))
    assert c == "invalid_destination"
    assert code(BuyItem("coffee", "ship", 0, 0))[0] in ("illegal_placement", "golden_rule")
    state["seats"][0]["ships"] = []
    assert code(UseExtraAction("deliver_goods"))[0] == "extra_action_unusable"
    assert code(UseExtraAction("fly"))[0] == "invalid_action"
    for e in ENGINE.decide(state, 0, PassAction(), Rng(bytes(32), domain=3)):
        ENGINE.evolve(state, e)
    c, message = code(WithdrawMoney())
    assert c == "action_finished" and "NAU-" in message


def test_engine_is_the_template_built_from_the_package_modules():
    """One shape per game: ENGINE is a GameEngine bound to the package's modules; result is a fresh copy."""
    from service.games.base import GameEngine
    from service.games.nauticus import data, legal, scoring

    assert isinstance(ENGINE, GameEngine)
    assert (ENGINE.name, ENGINE.version) == (data.NAME, data.VERSION)
    assert (ENGINE.min_players, ENGINE.max_players) == (data.MIN_PLAYERS, data.MAX_PLAYERS)
    assert ENGINE.legal is legal.legal and ENGINE.to_act is legal.to_act and ENGINE.decide is rules.decide
    _, _, over = playout(4, 2, bias=False)
    first = ENGINE.result(over)
    assert first == scoring.result(over) and first is not scoring.result(over)
    first["scores"]["0"] = -1
    assert ENGINE.result(over) == scoring.result(over) != first


def test_refusal_texts_share_one_style_and_cite_known_rules():
    """Every refusal text is a sentence ending with its rule IDs in parentheses (one without a rule: no
    parentheses), and every ID it cites is listed in docs/rules/nauticus.md."""
    import re
    from pathlib import Path

    from service.games.nauticus.refusals import TEXTS

    reference = (Path(__file__).resolve().parents[3] / "docs" / "rules" / "nauticus.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^- \*\*(NAU-[A-Z]?\d{2,3})\*\*", reference, re.M))
    codes = {code for code, _ in TEXTS.values()}
    assert {"not_your_turn", "game_over", "unknown_command", "golden_rule", "illegal_placement"} <= codes
    for reason, (_code, text) in TEXTS.items():
        assert text[0].isupper() and text.endswith("."), reason
        cited = re.findall(r"NAU-[A-Z]?\d{2,3}", text)
        if reason != "unknown_command":
            assert re.search(r"\((NAU-[A-Z]?\d{2,3})(, NAU-[A-Z]?\d{2,3})*\)\.$", text), reason
        assert set(cited) <= listed, (reason, set(cited) - listed)
