"""A complete Quarterdeck bot: plays ONE seat of a game to the end.

    python bot.py http://127.0.0.1:8000 <game id> <seat token> [seed]

It follows the seat's stream, acts whenever its seat is in ``to_act`` and
stops when the game has finished.  It picks a random legal intent: put your
strategy in ``choose``.  Needs ``pip install ./clients/python``.
"""

from __future__ import annotations

import random
import sys
import uuid

from quarterdeck_sdk import ApiError, Client, Conflict


def choose(board: dict, rng: random.Random) -> dict:
    """Your strategy: any element of ``board["legal"]``, posted as it is."""
    return rng.choice(board["legal"])


def play(url: str, game_id: str, token: str, seed: int | None = None) -> dict:
    api = Client(url)  # retries 429/502/503/504 and lost connections
    rng = random.Random(seed)
    while True:  # one stream after another, until the game ends
        for line in api.stream(game_id, token):
            if line["type"] == "end":  # the server closed this stream
                if line["reason"] == "finished":
                    return api.game(game_id, token)
                break  # shutdown, max_duration, idle: open a new stream
            board = line  # the board as this seat sees it, with its legal intents
            if board["status"] == "finished":
                return board
            if board["seat"] not in board["to_act"] or not board["legal"]:
                continue  # not our turn (or our simultaneous choice is made): wait for the next board
            intent = choose(board, rng)
            try:
                api.post_intent(
                    game_id,
                    token,
                    intent,
                    expected_version=board["version"],  # refused (409) if anyone moved since
                    idempotency_key=str(uuid.uuid4()),  # the client's retries can never act twice
                )
            except Conflict:
                pass  # someone moved first: the next board line is the new state
            except ApiError as err:
                if err.status != 422:
                    raise
                print(f"refused: {err.code}: {err.message}", file=sys.stderr)


if __name__ == "__main__":
    url, game_id, token = sys.argv[1:4]
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else None
    final = play(url, game_id, token, seed)
    print(f"game over: ranking {final['result']['ranking']}, seat {final['seat']}")
