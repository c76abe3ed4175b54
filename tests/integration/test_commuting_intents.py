"""Simultaneous choices never 409 when they commute (docs/API.md, "Version conflicts"),
against real PostgreSQL: in Waters of Nereus both seats choose their
crews at the same version (rules: stage 1, the crews are chosen at once), posted at the
same moment through two command services (two API workers, each with its own cache) and
through one; both are accepted, and what does not commute still conflicts."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest
from support import command_of

from service.audit import checks
from service.domain.errors import Conflicting
from service.domain.replay import fold_stream
from service.service_layer.commands import GameService


def service(store) -> GameService:
    return GameService(store, lambda _gid: None)


def at_crew_choice(svc: GameService) -> tuple[dict[str, Any], int, dict[int, dict[str, Any]]]:
    """A 2-seat Waters of Nereus game played (first legal intents) to its first
    simultaneous crew choice: the game, the version, each seat's first legal crew."""
    created = svc.create_game("waters-of-nereus", [f"a{uuid.uuid4().hex[:6]}", f"b{uuid.uuid4().hex[:6]}"], {})
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    gid = created["id"]
    while True:
        loaded = svc.load(gid)
        with loaded.lock:
            svc.refresh(loaded)
            to_act = loaded.engine.to_act(loaded.state)
            if loaded.state["phase"] == "choose" and len(to_act) == 2:
                crews = {seat: loaded.engine.legal(loaded.state, seat)[0].to_json() for seat in to_act}
                version = loaded.version
                break
            seat = to_act[0]
            intent = loaded.engine.legal(loaded.state, seat)[0].to_json()
        svc.submit(gid, tokens[seat], command_of(svc, gid, intent), None, None, "")
    assert {c["type"] for c in crews.values()} == {"choose_crew"}
    return created | {"tokens": tokens}, version, crews


def post_at_once(calls: list[Any]) -> list[Any]:
    """Run ``calls`` in threads released together; each one's answer or exception."""
    barrier = threading.Barrier(len(calls))
    out: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        barrier.wait()
        try:
            out[i] = calls[i]()
        except Exception as exc:  # the answer under test
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def chosen(store, gid: str, after: int) -> dict[int, Any]:
    """Each seat's recorded intent after ``after``."""
    return {e.meta["seat"]: e.meta["intent"] for e in store.read(gid, after=after) if e.meta.get("seat") is not None}


@pytest.mark.parametrize("services", [2, 1], ids=["two-workers", "one-worker"])
def test_two_seats_choosing_crews_at_the_same_version_are_both_accepted(ctx, services):
    workers = [service(ctx.store) for _ in range(services)]
    for round_ in range(5):
        created, version, crews = at_crew_choice(workers[0])
        gid, tokens = created["id"], created["tokens"]

        def post(seat: int, gid: str = gid, tokens: dict = tokens, crews: dict = crews, version: int = version) -> Any:
            return workers[seat % services].submit(
                gid, tokens[seat], command_of(workers[0], gid, crews[seat]), version, f"crew-{seat}", f"h{seat}"
            )

        answers = post_at_once([lambda: post(0), lambda: post(1)])
        assert not [a for a in answers if isinstance(a, Exception)], (round_, answers)
        assert sorted(a["version"] for a in answers)[0] > version
        assert chosen(ctx.store, gid, version) == crews


def test_what_does_not_commute_still_conflicts(ctx):
    """The seat's own earlier decision came between: its second intent at the same
    version is a 409, as is one whose seat was not among those to act."""
    svc = service(ctx.store)
    created, version, crews = at_crew_choice(svc)
    gid, tokens = created["id"], created["tokens"]
    svc.submit(gid, tokens[0], command_of(svc, gid, crews[0]), version, "first", "h1")
    with pytest.raises(Conflicting) as err:
        svc.submit(gid, tokens[0], command_of(svc, gid, crews[0]), version, "again", "h2")
    assert err.value.code == "version_conflict"
    # Corners are chosen in turn: no simultaneous phase, so a stale version conflicts.
    fresh = svc.create_game("waters-of-nereus", [f"c{uuid.uuid4().hex[:6]}", f"d{uuid.uuid4().hex[:6]}"], {})
    loaded = svc.load(fresh["id"])
    with loaded.lock:
        svc.refresh(loaded)
        start, first = loaded.version, loaded.engine.to_act(loaded.state)[0]
        intent = loaded.engine.legal(loaded.state, first)[0].to_json()
    toks = {s["seat"]: s["token"] for s in fresh["seats"]}
    svc.submit(fresh["id"], toks[first], command_of(svc, fresh["id"], intent), start, None, "h3")
    loaded = svc.load(fresh["id"])
    with loaded.lock:
        svc.refresh(loaded)
        second = loaded.engine.to_act(loaded.state)[0]
        later = loaded.engine.legal(loaded.state, second)[0].to_json()
    assert second != first
    with pytest.raises(Conflicting):
        svc.submit(fresh["id"], toks[second], command_of(svc, fresh["id"], later), start, None, "h4")


def test_four_seats_choosing_at_once_through_four_workers_never_409(ctx):
    """880 stale posts: in 220 4-seat games, at the first crew choice the four seats post at
    the same version at the same moment, each through its own command service (four API
    workers racing for the head, so one post may lose three races in a row).  Only other
    seats' ``CrewChosen`` come between, so none is a 409; each game's audit (chain,
    re-decision) passes and every worker's state is the one rebuilt from the stream."""
    workers = [service(ctx.store) for _ in range(4)]
    posts, conflicts, games = 0, [], []
    while posts < 880:
        created = workers[0].create_game("waters-of-nereus", [f"p{i}{uuid.uuid4().hex[:6]}" for i in range(4)], {})
        gid, tokens = created["id"], {s["seat"]: s["token"] for s in created["seats"]}
        games.append(gid)
        while True:
            loaded = workers[0].load(gid)
            with loaded.lock:
                workers[0].refresh(loaded)
                state, version = loaded.state, loaded.version
                to_act = loaded.engine.to_act(state)
                intents = {seat: loaded.engine.legal(state, seat)[0].to_json() for seat in to_act}
            if state["phase"] == "choose":
                break
            workers[0].submit(gid, tokens[to_act[0]], command_of(workers[0], gid, intents[to_act[0]]), None, None, "")
        assert len(to_act) == 4

        def post(
            seat: int, gid: str = gid, tokens: dict = tokens, version: int = version, intents: dict = intents
        ) -> Any:
            command = command_of(workers[0], gid, intents[seat])
            return workers[seat].submit(gid, tokens[seat], command, version, None, "")

        answers = post_at_once([lambda s=s: post(s) for s in range(4)])
        posts += 4
        refused = [a for a in answers if isinstance(a, Exception)]
        conflicts += refused
        if not refused:
            assert chosen(ctx.store, gid, version) == intents
    assert conflicts == [], f"{len(conflicts)} of {posts} stale posts refused: {conflicts[:3]}"
    for gid in games:
        events = ctx.store.read(gid)
        seed = ctx.store.secrets(gid)[0]
        assert checks.check_chain(gid, events, seed).ok
        assert checks.redecide(gid, events, seed).ok
        # Every worker's cached state, brought to the head, is the state rebuilt from the stream.
        rebuilt = fold_stream(workers[0].load(gid).engine, events, None)
        for w in workers:
            loaded = w.load(gid)
            with loaded.lock:
                w.refresh(loaded)
                assert loaded.state == rebuilt
