"""The house bots' turns waiting in Redis (docs/BOTS.md "House bots"; the worker is
``workers/bots.py``).

:class:`PendingTurns` marks a (game, bot) whose turn has a job waiting, on the read
side's Redis, so that at most one waits per turn: the mark is a key of the game's
hash tag, set only if absent (``SET NX``) and gone after :data:`PENDING_TTL` seconds
at most.

:class:`FairLine` holds the waiting turns on the queue's Redis, one line per account
and the ring of the accounts with turns waiting (a list, and a set of its members):
the bot queue's job takes the next turn of the next account in the ring, so the bots
serve accounts round-robin and one account's many games never starve another's.
Both of its steps are one Lua script each, atomic on that Redis (a plain Redis, never
a cluster: docs/SCALING.md).
"""

from __future__ import annotations

from typing import Any

from service.domain import identity

#: Seconds a (game, bot) stays marked pending: a job lost meanwhile delays that
#: turn until the mark expires and the next resync asks again.
PENDING_TTL = 600

#: KEYS: the ring, its members, the account's line; ARGV: the account, the turn.
_PUSH = """
redis.call('RPUSH', KEYS[3], ARGV[2])
if redis.call('SADD', KEYS[2], ARGV[1]) == 1 then redis.call('RPUSH', KEYS[1], ARGV[1]) end
return 1
"""
#: KEYS: the ring, its members; ARGV: the lines' prefix.  The account popped goes back
#: to the ring's end while its line still holds turns.
_POP = """
local owner = redis.call('LPOP', KEYS[1])
if not owner then return false end
local line = ARGV[1] .. owner
local turn = redis.call('LPOP', line)
if redis.call('LLEN', line) > 0 then redis.call('RPUSH', KEYS[1], owner) else redis.call('SREM', KEYS[2], owner) end
if not turn then return false end
return turn
"""


class PendingTurns:
    """The marks of the bots' turns that have a job waiting (see the module's docstring)."""

    def __init__(self, client: Any, ttl: int = PENDING_TTL) -> None:
        """``client``: the read side's Redis."""
        self.redis = client
        self.ttl = ttl

    def key(self, game_id: str, handle: str) -> str:
        """The mark of a waiting job for ``handle``'s seat of ``game_id`` (the game's hash tag)."""
        return f"g:{{{game_id}}}:bot:{identity.handle_key(handle)}"

    def mark(self, game_id: str, handle: str) -> bool:
        """Mark the turn pending; False when it was marked already."""
        return bool(self.redis.set(self.key(game_id, handle), "1", nx=True, ex=self.ttl))

    def unmark(self, game_id: str, handle: str) -> None:
        self.redis.delete(self.key(game_id, handle))


class FairLine:
    """The bots' turns of one queue, one line per account, and the ring of accounts with
    turns waiting (see the module's docstring)."""

    def __init__(self, client: Any, queue_name: str) -> None:
        """``client``: the queue's Redis (the one its jobs are on); ``queue_name``: the queue."""
        self.redis = client
        self.prefix = f"bots:fair:{queue_name}:"
        self.ring, self.members = self.prefix + "ring", self.prefix + "members"

    def line(self, account: str) -> str:
        return f"{self.prefix}line:{account}"

    def push(self, account: str, game_id: str, handle: str) -> None:
        """Put the turn at the end of ``account``'s line (the account joins the ring if it was not in it)."""
        self.redis.eval(_PUSH, 3, self.ring, self.members, self.line(account), account, f"{game_id} {handle}")

    def pop(self) -> tuple[str, str] | None:
        """The next turn (game id, handle) of the next account in the ring (that account
        goes to its end); None when no turn waits."""
        turn = self.redis.eval(_POP, 2, self.ring, self.members, self.prefix + "line:")
        if not turn:
            return None
        game_id, handle = (turn.decode() if isinstance(turn, bytes) else turn).split(" ", 1)
        return game_id, handle
