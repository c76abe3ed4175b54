"""Hand-made tournament states for the unit tests: rounds given table by table,
folded through ``evolve`` (no pairing involved), so each number is checkable by hand."""

from __future__ import annotations

from typing import Any

from service.games.rng import commitment
from service.tournaments import standings
from service.tournaments.events import (
    PairedTable,
    PlayerRegistered,
    RoundPaired,
    TableFinished,
    TableStarted,
    TournamentCreated,
    TournamentStarted,
)
from service.tournaments.evolve import fold

SEED = bytes(range(32))


def result(ranks: list[int], scores: list[int] | None = None, forfeited: list[int] | None = None) -> dict[str, Any]:
    """A completed game's result from per-seat ranks (and scores)."""
    n = len(ranks)
    ranking = sorted(range(n), key=lambda s: (ranks[s], s))
    return {
        "reason": "completed",
        "forfeited": forfeited or [],
        "ranking": ranking,
        "ranks": {str(s): ranks[s] for s in range(n)},
        "scores": {str(s): (scores[s] if scores else 0) for s in range(n)},
    }


def state_of(
    players: list[str],
    rounds: list[list[tuple[list[str], dict[str, Any]]]],
    *,
    sizes: tuple[int, ...] = (3,),
    preferred: int | None = None,
    points: dict[str, list[int]] | None = None,
    byes: list[list[str]] | None = None,
) -> dict[str, Any]:
    """Players (registration order = lot), then rounds of ``(players in seat order, result)``."""
    preferred = preferred or sizes[-1]
    events: list[Any] = [
        TournamentCreated(
            name="Hand",
            game="nautilus-industries",
            organiser="org",
            format="swiss",
            table_size=preferred,
            table_sizes=sizes,
            rounds=len(rounds),
            clock=None,
            rated=True,
            points=points or standings.default_points(sizes),
            seed_commitment=commitment(SEED),
        )
    ]
    events += [PlayerRegistered(p) for p in players]
    events.append(TournamentStarted("org", len(rounds), tuple(players)))
    for r, tables in enumerate(rounds, 1):
        round_byes = tuple(byes[r - 1]) if byes else ()
        events.append(RoundPaired(r, tuple(PairedTable(i, tuple(t)) for i, (t, _) in enumerate(tables, 1)), round_byes))
        for i, (_, res) in enumerate(tables, 1):
            events.append(TableStarted(r, i, f"g{r}-{i}"))
            events.append(TableFinished(r, i, f"g{r}-{i}", res))
    return fold(events)
