# Quarterdeck API / worker image.  Default command: the API under gunicorn on port 8000.
# The worker runs the same image with `python -m workers` (see compose.yaml).
# BASE_IMAGE: the official image by default; a machine without registry access builds the same
# file on a local base with `python` and `pip` on PATH (tests/compose/base_images.sh makes one).
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PORT=8000 \
    WEB_CONCURRENCY=2 \
    GUNICORN_WORKER_CONNECTIONS=4000

RUN groupadd --system --gid 10001 quarterdeck \
 && useradd --system --uid 10001 --gid quarterdeck --home-dir /app --shell /usr/sbin/nologin quarterdeck

WORKDIR /app
COPY pyproject.toml ./
COPY service ./service
COPY workers ./workers
COPY projections ./projections
COPY schemas ./schemas
# Editable, so that data files next to the code (service/adapters/migrations/*.sql, ...) are used from /app
# exactly as in development; the code stays root-owned and read-only for the service user.
# Bytecode compiled at build time: PYTHONDONTWRITEBYTECODE (and the read-only code) would make every
# process start compile the modules from source again.
RUN pip install -e . && python -m compileall -q service workers projections schemas && python -c "import service, workers"

USER quarterdeck
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD python -c "import os, urllib.request; urllib.request.urlopen(f'http://127.0.0.1:{os.environ.get(\"PORT\", \"8000\")}/healthz', timeout=2)"
# exec: gunicorn is PID 1 and gets SIGTERM directly (graceful stop).  Its settings (gevent workers,
# time limits on headers and bodies) are make run's: service/http/gunicorn_conf.py.
CMD exec gunicorn -c python:service.http.gunicorn_conf service.http.wsgi:app --bind "0.0.0.0:${PORT}" \
    --workers "${WEB_CONCURRENCY}" --no-control-socket \
    --log-level "$(echo "${QD_LOG_LEVEL:-info}" | tr 'A-Z' 'a-z')"
