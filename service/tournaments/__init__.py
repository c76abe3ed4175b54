"""Tournaments: the pure domain (spec: docs/TOURNAMENTS.md).

A tournament is a stream of events of its own, with a seed committed at
creation and revealed at the end, like a game.  This package is its pure core:
no Flask, psycopg, Redis or RQ, no clock and no global random.  Randomness
comes only from :class:`~service.games.rng.Rng` keyed by the tournament's seed,
one documented domain per use (:mod:`.pairing`, ``LOT_DOMAIN`` and
``round_domain``).

The modules, in the order a reader needs them:

* ``events``: the frozen events (``TournamentCreated``, ``PlayerRegistered``,
  ``TournamentStarted``, ``RoundPaired``, ``TableStarted``, ``TableFinished``,
  ``TournamentFinished``), their JSON form and a strict parser.
* ``commands``: the frozen commands (``CreateTournament``, ``RegisterPlayers``,
  ``StartTournament``, ``StartTable``, ``FinishTable``).
* ``evolve``: folds events into the state, a plain JSON-compatible dict.
* ``rules``: ``decide(state, command, seed=...)``, the one place events are
  made, with the automatic follow-ups (the next round's pairing after a round's
  last table, the end after the last round).  Refusals are the domain errors of
  ``service.domain.errors``.
* ``standings``: points from table places, tie-breaks, standings per round.
* ``pairing``: the table plan and ``pair(state, rng)``, Swiss and round robin.
* ``audit``: re-decides a whole stream from its events and the seed, and
  compares every pairing and the standings.
* ``simulate``: drives a whole tournament through ``decide`` with results from
  a caller (tests, demos, benchmarks).
"""
