"""Waters of Nereus scoring and game end (WON-140 to WON-142)."""

from __future__ import annotations

from support.waters_of_nereus import act, give, rng, start

from service.games.waters_of_nereus import ENGINE, legal, scoring
from service.games.waters_of_nereus import commands as c


def final_position(players=3):
    s = start(players)
    s["phase"] = "final"
    s["turn"] = None
    s["active"] = 0
    s["order"] = list(range(1, players))
    return s


def finish_all(s):
    while s["phase"] == "final":
        act(s, s["active"], c.FinishScoring())


def test_won_140_unbounded_score():
    """WON-140: scores go past 50 (an unbounded integer)."""
    s = final_position()
    s["seats"][0]["vp"] = 60
    s["seats"][0]["gold"] = 0  # the setup W sells for 2: no gold VP
    s["seats"][0]["vp_by"]["actions"] = 60
    finish_all(s)
    assert ENGINE.result(s)["scores"]["0"] == 60


def test_won_141_final_conversions():
    """WON-141: game-end cards first (paying power), then storage sold (2 per treasure, 5 per gem),
    then 1 VP per full 5 gold; treasures in incomplete holds are worth nothing."""
    s = final_position()
    me = s["seats"][0]
    me["gold"] = 4
    give(s, 0, "storage", "K", "*")  # W (setup) + K = 4 gold, gem = 5 gold
    give(s, 0, "hold", "K", crew="captain")
    me["hand"], s["science_deck"] = ["SC16"], s["science_deck"] + [x for x in me["hand"] if x != "SC16"]
    if "SC16" in s["science_deck"]:
        s["science_deck"].remove("SC16")
    for p in s["seats"][1:]:
        if "SC16" in p["hand"]:
            p["hand"].remove("SC16")
            p["hand"].append(s["science_deck"].pop())
    me["science"] = 1
    act(s, 0, c.PlayScience("SC16"))  # 3 VP per gem in storage: 3
    assert me["vp"] == 3 and me["science"] == 0
    finish_all(s)
    # 4 + 4 + 5 = 13 gold -> 2 VP
    result = ENGINE.result(s)
    assert me["gold"] == 13
    assert result["breakdown"]["0"]["end_cards"] == 3
    assert result["breakdown"]["0"]["gold_left"] == 13
    assert result["breakdown"]["0"]["gold"] == 2
    assert result["scores"]["0"] == 5
    ENGINE.check_invariants(s)


def test_won_141_cards_before_selling():
    """WON-141: once a seat sells at final scoring it may no longer play game-end cards."""
    s = final_position()
    me = s["seats"][0]
    me["science"] = 2
    me["hand"].append(s["science_deck"].pop())
    end = next(x for x in s["science_deck"] if x >= "SC13")
    s["science_deck"].remove(end)
    me["hand"].append(end)
    assert c.PlayScience(end) in ENGINE.legal(s, 0)
    act(s, 0, c.SellTreasure("W"))
    assert c.PlayScience(end) not in ENGINE.legal(s, 0)


def test_won_142_tie_breaks():
    """WON-142: most VP; tie -> more completed holds; tie -> higher science; else shared."""
    s = start(3)
    for p in s["seats"]:
        p["vp"] = 10
    s["seats"][1]["completed"] = ["purser"]
    r = scoring.compute_result(s)
    assert r["ranking"][0] == 1 and r["tiebreak"] == "completed_holds"
    s["seats"][0]["completed"] = ["pilot"]
    s["seats"][0]["science"] = 2
    r = scoring.compute_result(s)
    assert r["ranking"][:2] == [0, 1] and r["tiebreak"] == "science_power"
    assert r["ranks"] == {"0": 1, "1": 2, "2": 3}
    s["seats"][1]["science"] = 2
    r = scoring.compute_result(s)
    assert r["ranks"]["0"] == r["ranks"]["1"] == 1 and r["tiebreak"] == "shared"
    s["seats"][2]["vp"] = 11
    r = scoring.compute_result(s)
    assert r["ranking"][0] == 2


def test_won_142_result_shape_after_full_game():
    """WON-142: result has scores, ranks, ranking, a breakdown per category, the tie-break."""
    s = final_position(2)
    finish_all(s)
    r = ENGINE.result(s)
    assert set(r) == {"scores", "ranks", "ranking", "breakdown", "tiebreak"}
    assert set(r["breakdown"]["0"]) >= {"holds", "chest", "actions", "science", "end_cards", "gold", "total"}
    assert ENGINE.to_act(s) == []
    assert legal.legal(s, 0) == []
    assert ENGINE.decide is not None and rng() is not None
