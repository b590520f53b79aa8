"""The shared store for several replicas: one PostgreSQL database with pgvector.

Chosen by `VERBATIM_DATABASE_URL=postgresql://…`; the SQL is the shared store's
(`core.store.index`, `core.store.runlog`), so the semantics are SQLite's, and any replica can take
any event: seen event ids have a unique key, rate slots are counted under a per-key advisory
lock, the run log is one table for all. What is here is PostgreSQL's own: one indexer at a time
(an advisory lock), a vector column that gets its dimension (and its HNSW index) from the first
batch embedded and loses them when the embedder changes (`reset`), and ranking in the database.

The connection pool, its migrations and its sentences for an outage are in `core.store.postgres_pool`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np

try:
    import pgvector.psycopg  # noqa: F401
    import psycopg
    import psycopg_pool  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installed extra
    from core.common.errors import ConfigError

    raise ConfigError(
        "VERBATIM_DATABASE_URL names PostgreSQL, but its client isn't installed: pip install 'verbatim[postgres]'."
    ) from exc

from core.common.errors import IndexFileError
from core.common.values import PER_DOCUMENT, TOP_K, Hit
from core.store.corpus import Corpus, select
from core.store.index import FRAGMENT_COLUMNS, SEARCHED_STATES, SQLIndex, fragment_from
from core.store.pg_search import Method, Policy, nearest_sql
from core.store.postgres_pool import INDEXER_LOCK, Database
from core.store.protocols import SearchingIndex
from core.store.runlog import SQLRunLog
from core.store.secret import new_secret, parse_secret
from core.store.sql import PostgresDialect, Sql

# How long one use waits for a connection. A pool of short transactions never waits this long unless
# the server can't be reached, and a question caught by a restart of a few seconds is answered late, not lost.
CONNECTION_WAIT = 10.0
# How many of the nearest rows the scope may read are handed over for the floor, top k and per-document cap:
# the best of the HNSW search (its width is `core.store.pg_search`'s), so widening it costs no more rows to sort.
CANDIDATES = 100
# How the HNSW graph is built. pgvector's default ef_construction (64) gave recall@5 0.84 / 0.93 at ef_search
# 40 / 100 on 100,000 clustered vectors (benchmarks/pgvector_scale.py --ef-construction 64); 128 gave 0.96 /
# 1.00, for a build 1.5 times as long.
HNSW = "WITH (m = 16, ef_construction = 128)"
HNSW_INDEX = "fragments_by_embedding"  # its name, for building, dropping and sizing it


class PostgresIndex(SQLIndex):
    """Documents, fragments and their vectors in PostgreSQL, ranked where they are; see `IndexStore`."""

    dialect = PostgresDialect()

    def __init__(self, database: Database) -> None:
        super().__init__()
        self.database = database
        self.policy = Policy(SEARCHED_STATES)
        self.exact_searches = 0  # searches ranked exactly: planned so, or their HNSW candidates fell short

    @contextmanager
    def _read(self) -> Iterator[Sql]:
        with self.database.use() as db:
            yield Sql(db, self.dialect)

    _write = _read  # every use is one transaction

    def searching(self) -> SearchingIndex:
        return self

    def method(self) -> Method:
        """How this server's searches keep their recall (pgvector's version decides; see `core.store.pg_search`),
        with the index's size and the server's shared_buffers as they are now."""
        with self.database.use() as db:
            row = db.execute(
                "SELECT coalesce(pg_relation_size(to_regclass(%s)), 0), "
                "pg_size_bytes(current_setting('shared_buffers'))",
                (HNSW_INDEX,),
                prepare=False,
            ).fetchone()
            index_bytes, buffer_bytes = (int(row[0]), int(row[1])) if row else (0, 0)
            return replace(self.policy.method(db), index_bytes=index_bytes, buffer_bytes=buffer_bytes)

    def recover(self) -> bool:
        return False  # nothing on this host's disk to lose: the database is the index

    @contextmanager
    def sole_indexer(self, wait: bool = True) -> Iterator[bool]:
        """Hold the indexer lock while the block runs; False (without waiting) when another process holds it."""
        with self.database.use() as db:
            db.autocommit = True  # a session lock, held across the sync's many transactions
            if wait:
                db.execute("SELECT pg_advisory_lock(%s)", (INDEXER_LOCK,))
                mine = True
            else:
                mine = bool(db.execute("SELECT pg_try_advisory_lock(%s)", (INDEXER_LOCK,)).fetchone()[0])  # type: ignore[index]
            try:
                yield mine
            finally:
                if mine:
                    db.execute("SELECT pg_advisory_unlock(%s)", (INDEXER_LOCK,))
                db.autocommit = False

    def _forget_dimension(self, db: Sql) -> None:
        # Another model's vectors may have another dimension: the column and its index start over.
        db.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
        db.execute("ALTER TABLE fragments ALTER COLUMN embedding TYPE vector")

    def _set_dimension(self, db: Sql, dim: int) -> None:
        """Give the vector column its dimension and an HNSW (cosine) index once the first batch is embedded."""
        db.execute("SELECT pg_advisory_xact_lock(?)", (INDEXER_LOCK + 1,))
        known = self._meta(db, "dimension")
        if known == str(dim):
            return
        if known is not None:
            raise IndexFileError(f"The index holds {known}-dimension vectors, not {dim}: re-index from scratch.")
        db.execute(f"ALTER TABLE fragments ALTER COLUMN embedding TYPE vector({dim:d})")
        db.execute(f"CREATE INDEX {HNSW_INDEX} ON fragments USING hnsw (embedding vector_cosine_ops) {HNSW}")
        db.execute("INSERT INTO meta VALUES ('dimension', ?)", (str(dim),))

    def load(self) -> Corpus:
        with self.database.use() as db, db.transaction():
            # One snapshot: the generation and the rows it names.
            db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            sql = Sql(db, self.dialect)
            generation = int(self._meta(sql, "generation") or 0)
            dim = int(self._meta(sql, "dimension") or 0)
            rows = sql.all(
                f"SELECT {FRAGMENT_COLUMNS}, f.embedding FROM fragments f JOIN documents d ON d.id = f.document_id "
                f"WHERE f.staged = 0 AND d.state IN {SEARCHED_STATES} "
                # Public rows first: the public scope is then a slice of the matrix, not a copy of it.
                f"ORDER BY d.audience != 'public', d.path{self.dialect.byte_order}, f.position"
            )
        vectors = [self.dialect.array(r[-1]) for r in rows]
        return Corpus(
            ids=np.array([r[0] for r in rows], dtype=np.int64),
            fragments=tuple(fragment_from(r) for r in rows),
            matrix=np.vstack(vectors) if rows else np.zeros((0, dim), dtype=np.float32),
            audiences=np.array([r[2] for r in rows], dtype=object),
            documents=np.array([r[1] for r in rows], dtype=np.int64),
            generation=generation,
        )

    def search(
        self,
        query: np.ndarray,
        scope: Iterable[str],
        floor: float,
        k: int = TOP_K,
        per_document: int = PER_DOCUMENT,
    ) -> list[Hit]:
        """The hits for a unit query vector, ranked in the database: rows outside `scope` are never scored.

        The HNSW index gives the scope's `CANDIDATES` nearest rows (the audience filter is in the same
        query as the ranking), searching as wide as `core.store.pg_search` plans for the index's size,
        the scope's share and the server's pgvector; the floor, top k and per-document cap are then
        `select()`'s, on the candidates in the in-memory corpus's order, so both searches keep the same hits.

        When the candidates neither fill the k hits nor reach below the floor, they may have been cut
        short (a scan that stopped before the scope had its rows), and the scope is ranked exactly; so
        is a scope the plan finds too small for the index to be worth it.
        """
        vector = np.asarray(query, dtype=np.float32)
        audiences = sorted(set(scope))
        if k <= 0 or not audiences:
            return []
        with self.database.use() as db:
            plan = self.policy.plan(db, audiences, k * per_document)
            rows: list[tuple[int, float, int]] = []
            chosen: list[int] = []
            if not plan.exact:
                db.execute(plan.settings(), prepare=False)
                rows = self._candidates(db, vector, audiences, CANDIDATES, exact=False)
                chosen = select(np.array([r[1] for r in rows]), np.array([r[2] for r in rows]), floor, k, per_document)
            # Fewer than k hits, none of the candidates below the floor: the scan may have stopped short.
            short = len(chosen) < k and not (rows and rows[-1][1] < floor)
            if plan.exact or (short and not (plan.exhaustive and len(rows) < CANDIDATES)):
                self.exact_searches += 1
                limit = max(CANDIDATES, 4 * k * per_document)
                while True:
                    rows = self._candidates(db, vector, audiences, limit, exact=True)
                    scores = np.array([r[1] for r in rows])
                    chosen = select(scores, np.array([r[2] for r in rows]), floor, k, per_document)
                    # Done unless the per-document cap used up every row above the floor in a full window.
                    if len(chosen) == k or len(rows) < limit or scores[-1] < floor:
                        break
                    limit *= 4
            ids = [rows[i][0] for i in chosen]
            found = {
                r[0]: fragment_from(r)
                for r in db.execute(
                    f"SELECT {FRAGMENT_COLUMNS} FROM fragments f JOIN documents d ON d.id = f.document_id "
                    "WHERE f.id = ANY(%s)",
                    (ids,),
                    prepare=False,
                )
            }
        return [Hit(int(rows[i][0]), found[rows[i][0]], float(rows[i][1])) for i in chosen]

    def _candidates(
        self, db: psycopg.Connection[Any], vector: np.ndarray, audiences: list[str], limit: int, exact: bool
    ) -> list[tuple[int, float, int]]:
        """(fragment id, score, document id) of the scope's `limit` nearest rows, in the corpus's order on ties.

        `exact` orders by an expression the HNSW index can't serve, so the planner scans the scope.
        Never a prepared statement: a plan cached under one setting would be reused under another
        (the benchmark once timed sequential scans as HNSW that way), and planning costs ~0.1 ms.
        """
        rows = db.execute(
            nearest_sql(SEARCHED_STATES, exact),
            {"q": vector, "audiences": audiences, "limit": limit},
            prepare=False,
        ).fetchall()
        return [(int(r[0]), float(r[1]), int(r[2])) for r in rows]

    def close(self) -> None:
        pass  # the pool is the store's, closed with it


class PostgresLog(SQLRunLog):
    """The run log (append-only) and the bots' shared state; see `RunLogStore` and `StateStore`."""

    dialect = PostgresDialect()
    path = None  # no file: the run log is in the database

    def __init__(self, database: Database) -> None:
        super().__init__()
        self.database = database
        with self._write() as db:  # the first replica's key is every replica's: one row, never replaced
            db.execute("INSERT INTO secrets VALUES ('id_key', ?) ON CONFLICT (name) DO NOTHING", (new_secret(),))
            stored = db.value("SELECT value FROM secrets WHERE name = 'id_key'")
        self.secret = parse_secret(str(stored), f"in {database.where}'s secrets table")

    @contextmanager
    def _write(self, wait: float | None = None) -> Iterator[Sql]:
        with self.database.use(wait) as db:
            yield Sql(db, self.dialect)

    def _read(self, wait: float | None = None) -> Any:
        return self._write(wait)

    @contextmanager
    def _serialized(self, key: str) -> Iterator[Sql]:
        with self._write() as db:
            # Replicas asking for the same key queue on this lock until our transaction ends.
            db.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (key,))
            yield db

    def close(self) -> None:
        pass  # the pool is the store's, closed with it


class PostgresStore:
    """The index, the run log and the bots' state in one PostgreSQL database, shared by every replica.

    A server that can't be reached at start-up is tried again for `wait` seconds, then a `ConfigError`.
    """

    def __init__(self, url: str, wait: float = 30.0) -> None:
        self.database = Database(url, wait, CONNECTION_WAIT)
        self.where = f"the PostgreSQL database at {self.database.where}"
        self.index = PostgresIndex(self.database)
        log_ = PostgresLog(self.database)
        self.runlog = log_
        self.state = log_

    def close(self) -> None:
        self.database.close()
