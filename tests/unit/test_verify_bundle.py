"""The offline verifier (service/audit/verify.py) on bundles built in memory exactly
as the platform records games: no PostgreSQL, no Redis."""

from __future__ import annotations

import ast
import copy
import json
import pathlib
import random
import shutil
import subprocess
import sys
from typing import Any

import pytest

from service.audit import bundle, verify
from service.audit import checks as audit
from service.domain import canonical
from service.domain.pipeline import GAME_CREATED, GAME_FINISHED, created_data, finished_data
from service.domain.pipeline import seal as seal_events
from service.domain.records import GameRecord, NewEvent
from service.games import registry
from service.games.rng import Rng, commitment

VERIFY_PY = pathlib.Path(verify.__file__)
GAME_ID = "6d1f7f0e-0000-4000-8000-000000000001"


def record_game(game: str = "nauticus", seed: bytes = b"\x07" * 32, chooser: int = 3, finish: bool = True):
    """A stream the way ``GameService`` writes it, and its bundle."""
    engine = registry.get(game)
    players = ["ann", "bob"]
    meta0 = {"intent_id": "open", "seat": None, "received_at": "2026-01-01T00:00:00.000000Z", "intent": None}
    new = [NewEvent(GAME_CREATED, created_data(players, game, engine.version, {}, commitment(seed)), meta0)]
    setup = engine.setup(2, {}, Rng(seed, domain=1))
    new += [NewEvent(e.type, e.data, meta0) for e in setup]
    state = None
    for e in setup:
        state = engine.evolve(state, e)
    rnd = random.Random(chooser)
    n = 0
    while engine.result(state) is None and (finish or n < 20):
        seat = rnd.choice(engine.to_act(state))
        cmd = rnd.choice(engine.legal(state, seat))
        meta = {
            "intent_id": f"i{n}",
            "seat": seat,
            "received_at": "2026-01-01T00:00:01.000000Z",
            "intent": cmd.to_json(),
        }
        events = engine.decide(state, seat, cmd, Rng(seed, domain=len(new)))
        for e in events:
            state = engine.evolve(state, e)
        batch = [NewEvent(e.type, e.data, meta) for e in events]
        result = engine.result(state)
        if result is not None:
            head = seal_events(seed, GAME_ID, 1, canonical.GENESIS, new + batch)[-1].hash
            batch.append(NewEvent(GAME_FINISHED, finished_data(result, seed, head), meta))
        new += batch
        n += 1
    sealed = seal_events(seed, GAME_ID, 1, canonical.GENESIS, new)
    rec = GameRecord(GAME_ID, game, engine.version, players, {}, commitment(seed), "2026-01-01T00:00:00.000000Z")
    return json.loads(bundle.dumps(bundle.build(rec, sealed)))


@pytest.fixture(scope="module")
def honest() -> dict[str, Any]:
    return record_game()


def _middle(b: dict[str, Any]) -> dict[str, Any]:
    return next(e for e in b["events"][len(b["events"]) // 2 :] if e["meta"]["intent"] and e["data"])


def test_honest_bundle_verifies_with_redecide(honest):
    report = verify.verify_bundle(honest, redecide=audit.redecide_dicts)
    assert report["ok"] is True, report
    assert report["checks"]["hash_chain"]["details"]["digests_checked"] is True
    assert report["checks"]["redecide"]["ok"] and not report["checks"]["redecide"].get("skipped")
    assert report["checks"]["hash_chain"]["details"]["head_hash"] == honest["head_hash"]


@pytest.mark.parametrize("game", ["nautilus-industries", "waters-of-nereus"])
def test_other_engines_verify(game):
    assert verify.verify_bundle(record_game(game, chooser=5), redecide=audit.redecide_dicts)["ok"] is True


def test_independent_reimplementation_matches_canonical():
    rnd = random.Random(1)
    seed = bytes(rnd.randrange(256) for _ in range(32))
    for i in range(50):
        obj = {"é": [i, None, True, "x\u2028y"], "b": {"z": -i, "a": "ß" * (i % 3)}, str(i): i * 7}
        assert verify.canonical(obj) == canonical.canonical(obj)
        assert verify.event_salt(seed, i + 1) == canonical.event_salt(seed, i + 1)
        e = {"seq": i + 1, "type": "T", "schema_version": 1, "data_digest": "a" * 64, "meta_digest": "b" * 64}
        assert verify.link_hash(GAME_ID, e, "c" * 64) == canonical.link_hash(
            GAME_ID, i + 1, "T", 1, "a" * 64, "b" * 64, "c" * 64
        )
    assert verify.GENESIS == canonical.GENESIS and verify.SALT_LABEL == canonical.SALT_LABEL


def test_verify_imports_only_the_standard_library():
    tree = ast.parse(VERIFY_PY.read_text())
    top = set()
    for node in tree.body:  # module level only: the redecide hook imports lazily
        if isinstance(node, ast.Import):
            top |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            top.add(node.module.split(".")[0])
    assert top <= set(sys.stdlib_module_names) | {"__future__"}, top


def test_tampered_data_breaks_at_its_seq(honest):
    b = copy.deepcopy(honest)
    target = _middle(b)
    target["data"] = dict(target["data"]) | {"x": 1}
    report = verify.verify_bundle(b, redecide=audit.redecide_dicts)
    assert report["ok"] is False
    assert report["checks"]["hash_chain"]["details"]["first_broken_seq"] == target["seq"]
    assert report["checks"]["redecide"]["details"]["first_divergence"]["seq"] == target["seq"]


def test_edited_intent_breaks_chain_and_redecide(honest):
    b = copy.deepcopy(honest)
    target = _middle(b)
    intent_id = target["meta"]["intent_id"]
    first = next(e for e in b["events"] if e["meta"]["intent_id"] == intent_id)
    for e in b["events"]:
        if e["meta"]["intent_id"] == intent_id:
            e["meta"] = dict(e["meta"]) | {"intent": {"type": "no_such_intent"}}
    report = verify.verify_bundle(b, redecide=audit.redecide_dicts)
    assert report["checks"]["hash_chain"]["details"]["first_broken_seq"] == first["seq"]
    div = report["checks"]["redecide"]["details"]["first_divergence"]
    assert div["seq"] == first["seq"] and div["what"] == "intent"


def test_deleted_event_is_a_gap(honest):
    b = copy.deepcopy(honest)
    target = _middle(b)
    b["events"] = [e for e in b["events"] if e["seq"] != target["seq"]]
    chain = verify.verify_bundle(b, redecide=audit.redecide_dicts)["checks"]["hash_chain"]
    assert chain["ok"] is False and chain["details"]["first_broken_seq"] == target["seq"]
    assert "missing" in chain["summary"]


def test_swapped_seed_fails_the_seed_check(honest):
    b = copy.deepcopy(honest)
    b["events"][-1]["data"]["seed"] = "11" * 32
    b["seed"] = "11" * 32
    report = verify.verify_bundle(b, redecide=audit.redecide_dicts)
    assert report["ok"] is False
    assert report["checks"]["seed"]["ok"] is False
    # Without a seed that matches the commitment, digests are not checked and
    # re-deciding cannot run: both say so rather than pretend.
    assert report["checks"]["hash_chain"]["details"]["digests_checked"] is False
    assert report["checks"]["redecide"].get("skipped") is True


def test_header_commitment_must_match_the_stream(honest):
    b = copy.deepcopy(honest)
    b["game"]["seed_commitment"] = "0" * 64
    assert verify.verify_bundle(b, redecide=audit.redecide_dicts)["checks"]["seed"]["ok"] is False


def test_event_after_the_closing_event_is_refused(honest):
    b = copy.deepcopy(honest)
    extra = copy.deepcopy(b["events"][-2])
    extra["seq"] = b["events"][-1]["seq"] + 1
    extra["prev_hash"] = b["events"][-1]["hash"]
    extra["hash"] = verify.link_hash(GAME_ID, extra, extra["prev_hash"])
    b["events"].append(extra)
    chain = verify.verify_bundle(b, redecide=audit.redecide_dicts)["checks"]["hash_chain"]
    assert chain["details"]["first_broken_seq"] == extra["seq"]


def test_running_game_bundle_checks_links_only():
    b = record_game(finish=False)
    assert b["status"] == "active" and b["seed"] is None
    report = verify.verify_bundle(b, redecide=audit.redecide_dicts)
    assert report["ok"] is True
    assert report["checks"]["hash_chain"]["details"]["digests_checked"] is False
    assert report["checks"]["seed"]["details"]["revealed"] is False
    b["events"][5]["prev_hash"] = "f" * 64
    assert (
        verify.verify_bundle(b, redecide=audit.redecide_dicts)["checks"]["hash_chain"]["details"]["first_broken_seq"]
        == 6
    )


def test_online_redecide_agrees_with_offline(honest):
    events = bundle.from_bundle_events(GAME_ID, honest["events"])
    report = audit.audit_events(GAME_ID, events, projection=False)
    offline = verify.verify_bundle(honest, redecide=audit.redecide_dicts)
    for name in ("hash_chain", "seed", "redecide"):
        assert report.checks[name].ok == offline["checks"][name]["ok"] is True


def test_the_script_alone_runs_without_the_project(honest, tmp_path):
    """Copied out of the repo and run isolated (no site-packages, no project):
    chain and seed are checked, re-decide is skipped, exit codes are right."""
    script = tmp_path / "verify.py"
    shutil.copy(VERIFY_PY, script)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(honest))
    out = subprocess.run(
        [sys.executable, "-I", "-S", str(script), str(good)], capture_output=True, text=True, cwd=tmp_path
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "VERIFIED" in out.stdout and "SKIP" in out.stdout
    bad = copy.deepcopy(honest)
    _middle(bad)["data"]["x"] = 1
    bad_path = tmp_path / "bad.json"
    bad_path.write_text(json.dumps(bad))
    out = subprocess.run([sys.executable, "-I", "-S", str(script), str(bad_path)], capture_output=True, text=True)
    assert out.returncode == 1 and "FAILED" in out.stdout and "FAIL" in out.stdout
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    out = subprocess.run([sys.executable, "-I", "-S", str(script), str(junk)], capture_output=True, text=True)
    assert out.returncode == 2 and "cannot read" in out.stderr


def test_module_entry_point_redecides(honest, tmp_path):
    path = tmp_path / "b.json"
    path.write_text(bundle.dumps(honest))
    out = subprocess.run(
        [sys.executable, "-m", "service", "verify", str(path), "--json"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["checks"]["redecide"]["ok"] and not report["checks"]["redecide"].get("skipped")


def test_audit_md_digest_example_matches_both_implementations():
    """docs/AUDIT.md's worked example, parsed from the page."""
    from support.markdown import tables

    doc = pathlib.Path(__file__).resolve().parents[2] / "docs" / "AUDIT.md"
    rows = {r["name"]: r["value"] for r in tables(doc.read_text(encoding="utf-8"))["Digest example"]}
    seed, seq = bytes.fromhex(rows["seed"]), int(rows["seq"])
    data, meta = json.loads(rows["data"]), json.loads(rows["meta"])
    assert canonical.canonical(data).decode() == verify.canonical(data).decode() == rows["canonical(data)"]
    assert canonical.event_salt(seed, seq).hex() == rows["salt"]
    dd, md, h = canonical.seal(
        seed, rows["game_id"], seq, rows["type"], int(rows["schema_version"]), data, meta, rows["prev_hash"]
    )
    assert (dd, md, h) == (rows["data_digest"], rows["meta_digest"], rows["hash"])
    salt = verify.event_salt(seed, seq)
    line = {"seq": seq, "type": rows["type"], "schema_version": 1, "data_digest": dd, "meta_digest": md}
    assert verify.digest(salt, data) == dd and verify.digest(salt, meta) == md
    assert verify.link_hash(rows["game_id"], line, rows["prev_hash"]) == h
