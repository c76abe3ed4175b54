"""``make bench`` as one package: ``python -m scripts.bench [phase ...] [--only a,b] [--help]``.

``run`` holds the phases (``@phase``) and the CLI; the other modules are what they
measure with: ``env`` (the bench database, Redis DB and processes), ``load`` (closed-loop
HTTP load), ``cpu`` (CPU per process group), ``report`` (figures, targets, the table).
``followers``, ``floor`` and ``minimum_serve`` are started as processes by the phases;
``inprocess``, ``lobby`` and ``storage`` also run alone (``python -m scripts.bench.inprocess``).

Nothing is imported here: ``followers`` patches the standard library with gevent
before its own imports, and a module run with ``-m`` imports this package first.
"""
