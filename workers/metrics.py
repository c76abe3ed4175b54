"""Worker-side Prometheus metrics (exported through the API's /metrics in
multiprocess mode, or scraped from the worker's own port)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

JOB_SECONDS = Histogram("qd_job_seconds", "Projection job duration", ["job"])
#: House bots (``workers/bots.py``): CPU seconds per decision, and what each job did.
BOT_DECISION_CPU = Histogram(
    "qd_bot_decision_cpu_seconds",
    "House bots' CPU time per decision",
    ["game", "level"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.2, 0.5, 1.0, 2.5),
)
BOT_JOBS = Counter("qd_bot_jobs_total", "House bots' jobs, by what they did", ["outcome"])
