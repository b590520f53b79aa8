# The scale-out image: one Verbatim process per container, the store in PostgreSQL (see compose.yaml).
# Built and run in CI by .ci/container; docs/container.md has the recipe for Docker and for podman.
#
#   docker build -t verbatim .
#   docker run --rm -v "$PWD/knowledge:/app/knowledge:ro" verbatim ask "How much is delivery 30 km away?"
#
# BASE_IMAGE: any Debian-like image with Python >= 3.11 whose `python` and `pip` are on PATH (CI builds a
# stand-in from a debootstrapped Debian, since it can't pull from an image registry).
ARG BASE_IMAGE=python:3.11-slim

FROM ${BASE_IMAGE} AS build
# PIP_CERT: a CA bundle for pip where a proxy re-signs TLS (podman: mount it with -v at build time);
# PIP_INDEX_URL: a package index other than PyPI. Empty: the base image's own CA bundle, and PyPI.
ARG PIP_CERT=
ARG PIP_INDEX_URL=
ENV PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PATH=/opt/verbatim/bin:$PATH
RUN python -m venv /opt/verbatim
# The dependencies first, read from pyproject.toml alone, so that a change to the code reuses this layer.
COPY pyproject.toml /src/
RUN [ -n "$PIP_CERT" ] || unset PIP_CERT; [ -n "$PIP_INDEX_URL" ] || unset PIP_INDEX_URL; \
    python -c 'import tomllib; p = tomllib.load(open("/src/pyproject.toml", "rb"))["project"]; \
print("\n".join(p["dependencies"] + p["optional-dependencies"]["postgres"]))' > /tmp/requirements.txt \
 && pip install -r /tmp/requirements.txt
COPY README.md LICENSE /src/
COPY core /src/core
COPY bot /src/bot
# The embedding model and the answerability judge are package data: no download at start-up.
RUN [ -n "$PIP_CERT" ] || unset PIP_CERT; [ -n "$PIP_INDEX_URL" ] || unset PIP_INDEX_URL; \
    pip install --no-deps /src && verbatim --help >/dev/null

FROM ${BASE_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PATH=/opt/verbatim/bin:$PATH
# Only the installed environment: no sources, no build tools, no pip cache.
COPY --from=build /opt/verbatim /opt/verbatim
# A non-root user. Its data folder exists in the image, so a named volume mounted there is the user's to write.
# The working directory is /app, and /app/var leads to the data folder: a .env copied from .env.example
# (VERBATIM_KNOWLEDGE_DIR=knowledge, VERBATIM_DATA_DIR=var) names the same two folders as the defaults below.
RUN useradd --create-home --uid 10001 verbatim && mkdir /app /app/knowledge \
 && install -d -o verbatim -g verbatim /home/verbatim/var && ln -s /home/verbatim/var /app/var
USER verbatim
WORKDIR /app
# The knowledge folder is mounted read-only at /app/knowledge. With VERBATIM_DATABASE_URL set the index and
# run log live in PostgreSQL; without it, in SQLite in the data folder.
ENV VERBATIM_KNOWLEDGE_DIR=/app/knowledge VERBATIM_DATA_DIR=/home/verbatim/var
ENTRYPOINT ["verbatim"]
CMD ["serve", "slack"]
