"""``python -m scripts.bench [phase ...]``: ``make bench`` (scripts/bench/run.py)."""

from scripts.bench.run import main

raise SystemExit(main())
