"""docs/SCALING.md, "Redis by role": the read side runs on a Redis Cluster, which
refuses a command (or a script, or a transaction) whose keys are in different
slots.  These tests record the commands the read side sends and check that
every multi-key command and script keeps to one slot (redis-py's ``key_slot``),
and that nothing subscribes by pattern."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from redis.cluster import key_slot

from projections import game_lists, keys, leaderboards, publish, runner
from projections import tournaments as tournament_view
from service.bootstrap import rate_limits
from service.config import Settings
from service.redis_roles import is_cluster_url, same_slot, split_cluster_flag

ROOT = Path(__file__).resolve().parents[2]


def _slot(name: Any) -> int:
    return key_slot(name if isinstance(name, bytes) else str(name).encode())


class Recorder:
    """Stands for a client or a pipeline: records each command's words."""

    def __init__(self, *replies: list[Any]) -> None:
        self.commands: list[tuple[Any, ...]] = []
        #: What each ``execute`` answers, in turn.
        self.replies = list(replies)

    def __getattr__(self, name: str):
        def record(*args: Any, **kwargs: Any) -> None:
            words = [name.upper(), *args]
            if "mapping" in kwargs:
                words += list(itertools.chain(*kwargs["mapping"].items()))
            self.commands.append(tuple(words))

        return record

    def pipeline(self, transaction: bool = True) -> Recorder:
        assert not transaction, "a MULTI over several games' keys would span slots"
        return self

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def execute(self) -> list[Any]:
        return self.replies.pop(0) if self.replies else []


def _write(status: str = "active", first: bool = True, finished_now: bool = False) -> runner._Write:
    info = {
        "id": "6f1c1f5e-0000-4000-8000-000000000001",
        "game": "nauticus",
        "players": ["ann", "bob", "cy"],
        "accounts": [True, True, False],
        "rated": True,
        "table": "t-1",
        "created_at": "2026-12-04T10:00:00Z",
        "clock": {"per_decision": 60},
    }
    fields = {"version": "12", "status": status, "to_act": "[0]", "views": "{}", "state": "{}", "auth": "[]"}
    return runner._Write(
        keys.game(info["id"]),
        info,
        fields,
        finished_now,
        "2999-01-01T00:00:00Z",  # news: the account events are announced
        None if finished_now else "2026-12-04T10:01:00Z",
        3600 if finished_now else 0,
        first,
    )


#: The key-taking commands a projection write may send; each names one key (word 1).
_ONE_KEY = {"HSET", "EXPIRE", "ZADD", "ZREM", "SPUBLISH"}


@pytest.mark.parametrize(("status", "first", "finished_now"), [("active", True, False), ("finished", False, True)])
def test_a_projection_write_on_a_cluster_keeps_its_script_to_the_games_slot(status, first, finished_now):
    write = _write(status, first, finished_now)
    n, words, before, after = runner.cluster_plan(write)
    slot = _slot(write.key)
    i, seen = 0, 0
    while i < len(words):
        size, command = words[i], words[i + 1 : i + 1 + words[i]]
        i += size + 1
        seen += 1
        assert command[0] in _ONE_KEY, command
        assert _slot(command[1]) == slot, command[:2]
    assert seen == n > 0
    # The game's own announcements are sharded (SSUBSCRIBE hears only SPUBLISH).
    gid = write.info["id"]
    channels = [words[j + 1] for j in range(len(words) - 1) if words[j] == "SPUBLISH"]
    assert channels == [publish.board_channel(gid), publish.game_channel(gid)]
    assert "PUBLISH" not in words
    # The game lists go before, each command one key; the clocks' index as one versioned
    # script whose two keys share a slot.
    lists = [c for c in before if c[0] != "EVAL"]
    assert lists and all(c[0] in ("ZADD", "ZREM") for c in lists)
    (entry,) = [c for c in before if c[0] == "EVAL"]
    assert entry[2] == 2 and same_slot(entry[3], entry[4])
    assert entry[5:7] == (write.info["id"], "12") and (entry[7] == "") == finished_now
    for command in after:
        assert command[0] in _ONE_KEY, command
    # The accounts' news go after, sharded on each account's slot.
    assert after and all(c[0] == "SPUBLISH" and c[1].startswith("a:{") for c in after)


def test_the_game_lists_write_every_combination_one_key_a_command():
    write = _write()
    r = Recorder()
    game_lists.index_game(r, write.info, write.fields, False)
    written = {c[1] for c in r.commands if c[0] == "ZADD"}
    # 3 facets of its own (game, status, rated) and 2 players with accounts (the third seat
    # is a guest's name, listed under no one): 2^3 combinations with no player, 2^3 with
    # each account, less the empty one (games:all, written too).
    assert len(written) == 8 + 2 * 8 and keys.GAMES_ALL in written
    assert not any("player=cy" in key for key in written)
    assert keys.games_list({"game": "nauticus", "status": "active", "player": "bob", "rated": "true"}) in written
    assert all(c[0] in ("ZADD", "ZREM") for c in r.commands)


@pytest.mark.parametrize(
    "facets",
    [
        dict(chosen)
        for n in range(5)
        for chosen in itertools.combinations(
            [("game", "nauticus"), ("status", "active"), ("player", "ann"), ("rated", "true")], n
        )
    ],
)
def test_a_game_list_with_any_filters_reads_one_key(facets):
    r = Recorder([0, []], [])
    game_lists.page(r, facets, 0, 20)
    key_commands = [c for c in r.commands if c[0] in ("ZCARD", "ZREVRANGE")]
    assert {c[1] for c in key_commands} == {keys.games_list(facets)}
    assert not [c for c in r.commands if "STORE" in c[0] or c[0].startswith("ZINTER")]


def test_the_rate_limits_scripts_keep_each_clients_keys_in_one_slot():
    limits = rate_limits(Settings())
    r = Recorder([[-1, -1], [-1, -1]])
    limits.redis = r
    clients = [("a:203.0.113.9", limits.windows["intents", False]), ("k:abc", limits.windows["intents", True])]
    limits._in_redis(clients)
    assert len(r.commands) == 2
    for command in r.commands:
        assert command[0] == "EVALSHA"
        numkeys = command[2]
        script_keys = command[3 : 3 + numkeys]
        assert numkeys >= 2 and same_slot(*script_keys), script_keys


def test_leaderboards_and_tournaments_keys_are_tagged():
    board = [
        leaderboards.CURSOR,
        leaderboards.META,
        leaderboards.FORMAT_KEY,
        leaderboards.stats_key("nauticus"),
        leaderboards.board_key("waters-of-nereus"),
        leaderboards.recent_key("ann"),
    ]
    assert same_slot(*board)
    tid = "0b7c9a1e-0000-4000-8000-000000000002"
    assert same_slot(tournament_view.key(tid), f"{tournament_view.key(tid)}:changed")
    gid = "6f1c1f5e-0000-4000-8000-000000000001"
    assert same_slot(keys.game(gid), publish.game_channel(gid), publish.board_channel(gid))


def test_the_read_side_never_subscribes_by_pattern_nor_intersects_across_keys():
    """The modules of the read side: no PSUBSCRIBE, no multi-key set algebra."""
    forbidden = re.compile(r"\.(psubscribe|zinterstore|zunionstore|zintercard|sinterstore|sunionstore|zdiffstore)\(")
    found = []
    for folder in ("service", "projections", "workers"):
        for path in (ROOT / folder).rglob("*.py"):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if forbidden.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, found


def test_a_cluster_url_says_so():
    assert split_cluster_flag("redis://10.0.0.5:7000/0?cluster=1") == ("redis://10.0.0.5:7000/0", True)
    assert split_cluster_flag("redis://h:1/0?cluster=0&x=1") == ("redis://h:1/0?x=1", False)
    assert not is_cluster_url("redis://127.0.0.1:6379/0")
