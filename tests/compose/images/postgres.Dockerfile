# Debian's PostgreSQL, started by postgres-entrypoint.sh (initdb on first start, then postgres).
ARG BASE
FROM ${BASE}
RUN apt-get update \
 && apt-get install -y postgresql \
 && rm -rf /var/lib/apt/lists/* \
 && { pg_dropcluster "$(ls /usr/lib/postgresql)" main 2>/dev/null || true; }
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
ENV LANG=C.UTF-8 PGDATA=/var/lib/postgresql/data
# As the official image: SIGINT is PostgreSQL's fast shutdown (SIGTERM waits for every client).
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
