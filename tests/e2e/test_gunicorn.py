"""The real thing: gunicorn and an RQ worker as separate processes, and a
client that knows nothing but the public API and follows /legal to the end."""

from __future__ import annotations

import json
import random
import socket
import time
from collections.abc import Iterator

import pytest
import requests
from support.live import live_service

#: Intents after which the client gives up (resigns).
GIVE_UP = 1500


@pytest.fixture(scope="module")
def live(settings) -> Iterator[str]:
    with live_service(settings) as url:
        yield url


def _play(
    s: requests.Session,
    url: str,
    gid: str,
    tokens: dict[int, str],
    version: int,
    chooser: random.Random,
    key: str,
    resign: bool = False,
) -> int:
    """One legal intent (or a resignation) by a seat to act, posted as a client
    that knows only the public API; returns the version it made."""
    state = s.get(f"{url}/v1/games/{gid}", params={"min_version": version}).json()
    seat = chooser.choice(state["to_act"])
    auth = {"Authorization": f"Bearer {tokens[seat]}"}
    legal = s.get(f"{url}/v1/games/{gid}/legal", params={"min_version": version}, headers=auth).json()
    intent = {"type": "resign"} if resign else chooser.choice(legal["intents"])
    resp = s.post(
        f"{url}/v1/games/{gid}/intents",
        json={"intent": intent, "expected_version": legal["version"]},
        headers=auth | {"Idempotency-Key": key},
    )
    assert resp.status_code == 201, resp.text
    return resp.json()["version"]


def test_a_client_that_only_follows_legal_plays_nautilus_industries_to_the_end(live):
    s = requests.Session()
    created = s.post(f"{live}/v1/games", json={"game": "nautilus-industries", "players": ["ann", "bob"]})
    assert created.status_code == 201
    game = created.json()
    gid, tokens = game["id"], {x["seat"]: x["token"] for x in game["seats"]}
    chooser = random.Random(7)
    version, posted = game["version"], 0
    while True:
        # Read-your-writes: wait until the read model shows our last write.
        state = s.get(f"{live}/v1/games/{gid}", params={"min_version": version}).json()
        assert state["version"] >= version
        if state["status"] == "finished":
            break
        # Random play ends a game in about 1,000 intents, but its length has no bound (the
        # seed is the service's; NIN-120: only a stock marker on 24 ends it): past
        # GIVE_UP intents the seat to act resigns, as a player who has had enough does.
        version = _play(s, live, gid, tokens, version, chooser, f"{gid}-{posted}", resign=posted >= GIVE_UP)
        posted += 1
    assert state["result"]["ranking"]
    if posted <= GIVE_UP:
        assert set(state["result"]["scores"]) == {"0", "1"}
    else:
        assert state["result"]["reason"] == "forfeit"
    # Seated by name, ann and bob are guests: the game is listed, on no player's page.
    listed = s.get(f"{live}/v1/games", params={"game": "nautilus-industries", "status": "finished"}).json()
    assert gid in [g["id"] for g in listed["games"]]
    assert gid not in [g["id"] for g in s.get(f"{live}/v1/games", params={"player": "ann"}).json()["games"]]
    ready = s.get(f"{live}/readyz")
    assert ready.status_code == 200
    assert "qd_intents_total" in s.get(f"{live}/metrics").text


def _read_to_close(sock: socket.socket) -> bytes:
    out = b""
    while chunk := sock.recv(65536):
        out += chunk
    return out


def _raw_post(url: str, path: str, head: dict[str, str], chunks: list[bytes]) -> tuple[int, bytes]:
    """POST with ``Transfer-Encoding: chunked`` over a plain socket (no
    Content-Length at all), as a hostile client frames it."""
    host, port = url.removeprefix("http://").split(":")
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}", "Transfer-Encoding: chunked", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in head.items()]
    body = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        answer = _read_to_close(s)
    status = int(answer.split(b" ", 2)[1])
    return status, answer.split(b"\r\n\r\n", 1)[1]


def test_an_oversized_chunked_body_is_refused_however_it_is_framed(live):
    """A valid 65,536-byte create request followed by garbage, chunked: the
    body is over the limit, so 413 body_too_large, and no game is created."""
    listed = requests.get(live + "/v1/games", params={"limit": 1}, timeout=5).json()["total"]
    valid = b'{"game": "nauticus", "players": ["ann", "bob"], "options": {}}'
    body = valid + b" " * (65536 - len(valid))  # valid JSON, exactly the limit
    status, answer = _raw_post(live, "/v1/games", {"Content-Type": "application/json"}, [body, b"garbage" * 100])
    assert status == 413, answer[:300]
    assert b'"body_too_large"' in answer
    # The same body within the limit, chunked, is accepted (the framing itself is fine).
    status, answer = _raw_post(live, "/v1/games", {"Content-Type": "application/json"}, [valid[:20], valid[20:]])
    assert status == 201, answer[:300]
    time.sleep(1.5)  # the worker projects the one game that was created
    assert requests.get(live + "/v1/games", params={"limit": 1}, timeout=5).json()["total"] == listed + 1


def test_a_control_character_in_a_header_gets_our_json_error(live):
    """docs/API.md "Errors": every refusal has the one JSON shape.  A control
    character in ``Idempotency-Key`` was refused by gunicorn itself with its
    HTML page (the app's own check, ``invalid_idempotency_key``, never ran)."""
    host, port = live.removeprefix("http://").split(":")
    body = b'{"intent": {"type": "resign"}}'
    request = (
        "POST /v1/games/00000000-0000-4000-8000-000000000000/intents HTTP/1.1\r\n"
        f"Host: {host}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Idempotency-Key: a\x01b\r\nConnection: close\r\n\r\n"
    ).encode() + body
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(request)
        answer = _read_to_close(s)
    head, _, payload = answer.partition(b"\r\n\r\n")
    assert head.split(b" ", 2)[1] == b"400", answer[:300]
    assert b"content-type: application/json" in head.lower(), head
    error = json.loads(payload)["error"]
    assert error["code"] == "bad_request" and set(error) == {"code", "message", "details"}


def _open_stream(url: str, path: str, protocol: str, token: str | None = None) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    sock.sendall(f"GET {path} {protocol}\r\nHost: {host}\r\n{auth}Accept: application/x-ndjson\r\n\r\n".encode())
    return sock


def _dechunked(body: bytes) -> bytes:
    """An HTTP/1.1 chunked body, strictly: every chunk framed, and the last one empty."""
    out, at = b"", 0
    while True:
        end = body.index(b"\r\n", at)
        size = int(body[at:end], 16)
        at = end + 2
        if size == 0:
            assert body[at:] == b"\r\n"
            return out
        out += body[at : at + size]
        assert body[at + size : at + size + 2] == b"\r\n"
        at += size + 2


def test_streams_written_by_the_listener_frame_every_line_as_the_client_spoke(settings, tmp_path):
    """docs/API.md "Streams", under gunicorn's gevent worker, where the hub
    writes a stream at the head itself (service/http/live/direct.py): an HTTP/1.1
    stream in chunks, an HTTP/1.0 one without, each line the board of its
    version in order, the last one the board that GET shows, then the end line."""
    # /metrics adds up both gunicorn workers' counters, as under `make run`.
    with live_service(settings, PROMETHEUS_MULTIPROC_DIR=str(tmp_path)) as url:
        s = requests.Session()
        game = s.post(f"{url}/v1/games", json={"game": "nauticus", "players": ["ann", "bob"]}).json()
        gid, tokens = game["id"], {x["seat"]: x["token"] for x in game["seats"]}
        seat_stream = _open_stream(url, f"/v1/games/{gid}/stream", "HTTP/1.1", tokens[0])
        public_stream = _open_stream(url, f"/v1/games/{gid}/stream", "HTTP/1.0")
        received = {}
        for name, sock in (("seat", seat_stream), ("public", public_stream)):
            first = b""
            while b"\n" not in first.partition(b"\r\n\r\n")[2]:
                first += sock.recv(65536)  # the headers and the first board: the stream is open
            received[name] = first
            sock.settimeout(60)
        chooser = random.Random(11)
        version = game["version"]
        for n in range(12):
            version = _play(s, url, gid, tokens, version, chooser, f"{gid}-{n}", resign=n == 11)
            time.sleep(0.05)  # the stream reaches the head between writes
        for name, sock in (("seat", seat_stream), ("public", public_stream)):
            with sock:
                received[name] += _read_to_close(sock)
        written = s.get(f"{url}/metrics").text
        final = {
            "seat": s.get(f"{url}/v1/games/{gid}", headers={"Authorization": f"Bearer {tokens[0]}"}).json(),
            "public": s.get(f"{url}/v1/games/{gid}").json(),
        }
    for name, raw in received.items():
        head, _, body = raw.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200" if name == "seat" else b"HTTP/1.0 200")
        assert (b"transfer-encoding: chunked" in head.lower()) is (name == "seat")
        text = _dechunked(body) if name == "seat" else body
        assert (b"\r\n" in text) is False  # no framing left in the lines
        lines = [json.loads(line) for line in text.splitlines()]
        boards = [line for line in lines if line["type"] == "board"]
        versions = [line["version"] for line in boards]
        assert versions == sorted(set(versions)), versions  # each once, in order
        assert versions[-1] == final[name]["version"] == version
        assert lines[-1] == {"type": "end", "reason": "finished", "version": version}
        last = {k: v for k, v in boards[-1].items() if k not in ("type", "legal")}
        assert last == final[name]
    whole = [line for line in written.splitlines() if line.startswith('qd_stream_direct_writes_total{outcome="whole"}')]
    assert whole and float(whole[0].split()[-1]) > 0, written[:2000]  # the listener wrote lines itself
