"""Worker-side Prometheus metrics (exported through the API's /metrics in
multiprocess mode, or scraped from the worker's own port)."""

from __future__ import annotations

from prometheus_client import Histogram

JOB_SECONDS = Histogram("qd_job_seconds", "Projection job duration", ["job"])
