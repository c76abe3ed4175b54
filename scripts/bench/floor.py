"""The floor of live delivery on this machine (``make bench``, followers phase).

The cheapest way Python can hand a line to each of ``--streams`` followers and
read it back, with none of the service's work: no HTTP, no Redis, no JSON, no
gevent.  One process writes each change's line to the sockets of its game's
followers (``sendall`` on blocking sockets, one thread); a forked process
reads every socket (``epoll`` and ``recv``, one thread).  Loopback TCP, as the
bench's followers use.  It prints one JSON object: the lines sent and read,
and each side's CPU microseconds per line.

Whatever the service does on top of this only adds to it, so the figure bounds
what following can cost: at ``r`` changes a second with ``k`` followers per
game, at least ``r * k * (writer + reader)`` microseconds of CPU a second
(docs/PERFORMANCE.md, "Live delivery").

    python -m scripts.bench.floor --rate 450 --size 3000 [--streams 2000 --games 50 --seconds 10]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import socket
import time


def _pairs(n: int) -> tuple[list[socket.socket], list[socket.socket]]:
    """``n`` connected loopback TCP pairs: (reading ends, writing ends)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(n)
        readers, writers = [], []
        for _ in range(n):
            readers.append(socket.create_connection(listener.getsockname()))
            writers.append(listener.accept()[0])
    return readers, writers


def _read_all(readers: list[socket.socket], out_fd: int) -> None:
    """The reading side, in a forked child: read until every socket closes,
    then write ``lines, cpu_seconds`` to ``out_fd``."""
    poller = select.epoll()
    by_fd = {}
    for s in readers:
        s.setblocking(False)
        poller.register(s.fileno(), select.EPOLLIN)
        by_fd[s.fileno()] = s
    lines, open_ = 0, len(readers)
    while open_:
        for fd, _ in poller.poll():
            data = by_fd[fd].recv(65536)
            if not data:
                poller.unregister(fd)
                open_ -= 1
            lines += data.count(b"\n")
    # process_time (CLOCK_PROCESS_CPUTIME_ID): ns, not os.times()'s 10 ms ticks, which a
    # second of light reading can round down to nothing.
    os.write(out_fd, json.dumps([lines, time.process_time()]).encode())


def measure(rate: float, size: int, streams: int, games: int, seconds: float) -> dict[str, float]:
    """Send ``rate`` changes a second for ``seconds``, each one line of
    ``size`` bytes to each follower of the change's game."""
    readers, writers = _pairs(streams)
    line = b"x" * (size - 1) + b"\n"
    r_fd, w_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        for s in writers:
            s.close()
        os.close(r_fd)
        _read_all(readers, w_fd)
        os._exit(0)
    os.close(w_fd)
    for s in readers:
        s.close()
    by_game = [writers[g::games] for g in range(games)]
    sent = changes = 0
    t0, c0 = time.perf_counter(), time.process_time()
    while (now := time.perf_counter()) - t0 < seconds:
        while changes < int((now - t0) * rate):
            for s in by_game[changes % games]:
                s.sendall(line)
                sent += 1
            changes += 1
        time.sleep(0.0005)
    c1 = time.process_time()
    wall = time.perf_counter() - t0
    for s in writers:
        s.close()
    os.waitpid(pid, 0)
    with os.fdopen(r_fd, "rb") as f:
        read, reader_cpu = json.loads(f.read())
    writer_cpu = c1 - c0
    return {
        "changes_per_second": changes / wall,
        "lines_per_second": sent / wall,
        "line_bytes": size,
        "lines_sent": sent,
        "lines_read": read,
        "writer_us_per_line": 1e6 * writer_cpu / max(sent, 1),
        "reader_us_per_line": 1e6 * reader_cpu / max(read, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rate", type=float, required=True, help="changes a second, over all games")
    ap.add_argument("--size", type=int, default=3000, help="bytes a line")
    ap.add_argument("--streams", type=int, default=2000)
    ap.add_argument("--games", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()
    print(json.dumps(measure(args.rate, args.size, args.streams, args.games, args.seconds)))


if __name__ == "__main__":
    main()
