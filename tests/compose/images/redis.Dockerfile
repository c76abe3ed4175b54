# Debian's redis-server; compose.yaml's command (with the test override's port) runs it.
ARG BASE
FROM ${BASE}
RUN apt-get update \
 && apt-get install -y redis-server \
 && rm -rf /var/lib/apt/lists/*
CMD ["redis-server"]
