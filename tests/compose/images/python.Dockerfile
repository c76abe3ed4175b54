# Debian's python3 (3.11) in a venv on PATH, so that `python` and `pip` are what the project's
# Dockerfile expects of python:3.11-slim (Debian's own pip refuses system installs, PEP 668).
ARG BASE
FROM ${BASE}
RUN apt-get update \
 && apt-get install -y python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/python
ENV PATH=/opt/python/bin:$PATH LANG=C.UTF-8
CMD ["python3"]
