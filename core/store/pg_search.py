"""How the PostgreSQL store asks pgvector for a scope's nearest rows: the server's pgvector picks the method.

HNSW's recall at a fixed width (`hnsw.ef_search`) falls as the index grows, so the width grows with the
index (`width`). What a filter does to it depends on pgvector's version:

- **0.8 and later, iterative index scans:** a scan that has handed over `ef_search` rows and still lacks
  the scope's candidates goes on searching the graph (`hnsw.iterative_scan = relaxed_order`, at most
  `hnsw.max_scan_tuples` rows), so a narrow scope gets its candidates without a wider search for every
  question. Relaxed order hands rows over nearly sorted; the store's query sorts them again by their
  exact score, so the order the hits come in is exact.
- **Before 0.8:** the scan stops after `ef_search` rows, filter or not. The width is widened by the
  scope's share of the index, up to pgvector's limit of 1,000, so that the scope's own rows are as many
  as a search of the whole index would consider, and those candidates are ranked exactly; a scope the
  widest search would still cut short is ranked exactly from the start.

Either way a search whose candidates come back short is ranked exactly (the store's safety net).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from core.common.text import mb

# The first pgvector with iterative index scans (hnsw.iterative_scan, hnsw.max_scan_tuples).
ITERATIVE_SINCE = (0, 8)
# pgvector accepts ef_search from 1 to 1,000. A scan without iterative index scans hands over at most ef_search
# rows, so never fewer than the store's CANDIDATES (100); on small indexes 100 wide costs ~1 ms.
MIN_EF, MAX_EF = 100, 1000
# The width's growth with the index: GROWTH_WIDTH at GROWTH_AT rows, as rows ** GROWTH_POWER, never below MIN_EF
# (up to ~28,000 rows) nor above MAX_EF (from ~1.9M): 710 at 1M. Measured on clustered 384-dimension vectors
# (benchmarks/pgvector_scale.py, m 16, ef_construction 128), the store's recall@5: on 100,000 rows 0.990 at 100
# wide, 1.000 at 200 and 400; on 1,000,000, 0.968-0.974 at 300-400, 0.978-0.981 at 500, 0.983-0.989 at 700
# (pgvector 0.8.2), 0.988-0.993 at 508-1000 (0.6.2).
GROWTH_AT, GROWTH_WIDTH, GROWTH_POWER = 100_000, 200, 0.55
# A scope this small is ranked exactly from the start: scoring its rows costs less than any graph search would.
EXACT_UP_TO = 2_000
# pgvector's default hnsw.max_scan_tuples; an iterative scan for a narrow scope may go further, up to MAX_SCAN.
SCAN_TUPLES, MAX_SCAN = 20_000, 200_000


def version_tuple(text: str) -> tuple[int, ...]:
    """'0.8.2' -> (0, 8, 2); an unreadable version is (0,), the oldest."""
    parts = []
    for part in text.split("."):
        digits = "".join(c for c in part if c.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts) or (0,)


@dataclass(frozen=True)
class Method:
    """How this server's searches keep their recall; `status` says it."""

    pgvector: str  # the vector extension's version in the database, as `pg_extension` has it
    # The HNSW index's size and the server's shared_buffers, as `status` reads them (0: not read). At 1M fragments
    # the store's search took 7-8 ms p50 with the 2 GB index in 4 GB of shared_buffers, 16-18 ms with 128 MB
    # (docs/benchmarks.md, "pgvector 0.8 against 0.6").
    index_bytes: int = 0
    buffer_bytes: int = 0

    @property
    def iterative(self) -> bool:
        return version_tuple(self.pgvector) >= ITERATIVE_SINCE

    @property
    def name(self) -> str:
        return "iterative_scan" if self.iterative else "widened_exact_rerank"

    @property
    def outgrows_buffers(self) -> bool:
        """Whether the index is larger than the server's shared_buffers: each search then reads it through the
        operating system's cache, about twice as slow."""
        return self.buffer_bytes > 0 and self.index_bytes > self.buffer_bytes

    def describe(self) -> str:
        if self.iterative:
            how = "HNSW with iterative index scans for scoped searches, re-ranked exactly"
        else:
            how = (
                "HNSW widened by the scope's share and re-ranked exactly (no iterative index scans before "
                "pgvector 0.8: ALTER EXTENSION vector UPDATE where the server has 0.8)"
            )
        said = f"ranked in the database (PostgreSQL, pgvector {self.pgvector}: {how})"
        if self.outgrows_buffers:
            said += (
                f"; its index ({mb(self.index_bytes)}) is larger than shared_buffers "
                f"({mb(self.buffer_bytes)}): give the server enough to hold it, a search takes about twice as "
                "long without"
            )
        return said

    def to_json(self) -> dict[str, str | int]:
        return {
            "method": self.name,
            "pgvector": self.pgvector,
            "index_bytes": self.index_bytes,
            "shared_buffers_bytes": self.buffer_bytes,
        }


@dataclass(frozen=True)
class Plan:
    """How one search runs: exactly, or through the HNSW index with these settings."""

    exact: bool
    ef_search: int = MIN_EF
    max_scan_tuples: int = 0  # 0: no iterative scan
    exhaustive: bool = False  # the scan may read every row of the index: fewer candidates than asked are all there are

    def settings(self) -> str:
        """The SET LOCAL statements for this search's transaction (nothing to set for an exact one)."""
        if self.exact:
            return ""
        out = f"SET LOCAL hnsw.ef_search = {self.ef_search:d}"
        if self.max_scan_tuples:
            out += "; SET LOCAL hnsw.iterative_scan = relaxed_order"
            out += f"; SET LOCAL hnsw.max_scan_tuples = {self.max_scan_tuples:d}"
            # The scan also stops at work_mem times this (1 by default): room for as many rows as it may read.
            memory = min(10, math.ceil(self.max_scan_tuples / SCAN_TUPLES))
            if memory > 1:
                out += f"; SET LOCAL hnsw.scan_mem_multiplier = {memory:d}"
        return out


def width(rows: int) -> int:
    """The ef_search that kept recall@5 at 0.98 or more on an index of `rows` (see GROWTH_POWER)."""
    return min(MAX_EF, max(MIN_EF, math.ceil(GROWTH_WIDTH * (rows / GROWTH_AT) ** GROWTH_POWER)))


def plan(method: Method, rows: int, scope_rows: int, wanted: int) -> Plan:
    """How to find the `wanted` nearest of a scope of `scope_rows` in an index of `rows` rows."""
    if scope_rows <= EXACT_UP_TO:
        return Plan(exact=True)
    share = min(1.0, scope_rows / max(rows, 1))
    ef = width(rows)
    if method.iterative:
        # Deep enough for the scope's own rows to be as many as the widest of `ef` and `wanted`.
        needed = math.ceil(2 * max(ef, wanted) / share)
        if needed > MAX_SCAN:
            return Plan(exact=True)
        tuples = max(SCAN_TUPLES, needed)
        return Plan(exact=False, ef_search=ef, max_scan_tuples=tuples, exhaustive=tuples >= rows)
    if wanted / share > MAX_EF:
        return Plan(exact=True)  # even the widest search would hand over fewer than `wanted` of the scope's rows
    return Plan(exact=False, ef_search=min(MAX_EF, math.ceil(ef / share)))


def nearest_sql(searched: str, exact: bool) -> str:
    """The query for a scope's `%(limit)s` nearest rows to `%(q)s`: (fragment id, score, document id).

    `exact` orders by an expression the HNSW index can't serve, so the planner scores every row of the
    scope. The inner query hands rows over in the index's order (nearly sorted, under relaxed_order); the
    outer one sorts them by their exact score, and on ties in the in-memory corpus's order (public first,
    by path), which `select()` breaks ties by.
    """
    order = "1 - (f.embedding <=> %(q)s) DESC" if exact else "f.embedding <=> %(q)s"
    return f"""
        SELECT id, score, document_id FROM (
            SELECT f.id, f.document_id, 1 - (f.embedding <=> %(q)s) AS score,
                   d.audience != 'public' AS internal, d.path, f.position
            FROM fragments f JOIN documents d ON d.id = f.document_id
            WHERE f.staged = 0 AND d.state IN {searched} AND d.audience = ANY(%(audiences)s)
            ORDER BY {order}
            LIMIT %(limit)s
        ) nearest
        ORDER BY score DESC, internal, path COLLATE "C", position
        """


class Policy:
    """What one process knows of the server for searching: pgvector's version (read once), the rows the HNSW index
    holds and the searched rows in each audience (read again when the index's generation has moved)."""

    def __init__(self, searched: str) -> None:
        self.searched = searched  # the SQL condition on `d.state` for searched documents
        self._method: Method | None = None
        self._sizes: dict[str, int] = {}
        self._indexed = 0  # every row the index holds: staged batches and unsearched documents' rows too
        self._generation: str | None = None
        self._counting = threading.Lock()  # one recount at a time; the others plan with the last counts

    def method(self, db: Any) -> Method:
        """The server's method, read from the vector extension's version in this database."""
        if self._method is None:
            row = db.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'", prepare=False).fetchone()
            self._method = Method(str(row[0]) if row else "0")
        return self._method

    def sizes(self, db: Any) -> dict[str, int]:
        """Searched rows per audience. Counted again only for a new generation: at 1M rows a count takes
        0.2-0.4 s, reading the generation 0.05 ms. While one question recounts, the others plan with the last
        counts (a plan from stale counts still finds the rows: the exact search backs it)."""
        row = db.execute("SELECT value FROM meta WHERE key = 'generation'", prepare=False).fetchone()
        generation = str(row[0]) if row else ""
        if generation != self._generation and self._counting.acquire(blocking=self._generation is None):
            try:
                rows = db.execute(
                    f"SELECT d.audience, f.staged = 0 AND d.state IN {self.searched}, count(*) "
                    "FROM fragments f LEFT JOIN documents d ON d.id = f.document_id GROUP BY 1, 2",
                    prepare=False,
                ).fetchall()
                self._sizes = {str(r[0]): int(r[2]) for r in rows if r[1]}
                self._indexed = sum(int(r[2]) for r in rows)
                self._generation = generation
            finally:
                self._counting.release()
        return self._sizes

    def plan(self, db: Any, audiences: Iterable[str], wanted: int) -> Plan:
        """How this search runs (see `plan`)."""
        sizes = self.sizes(db)
        # The index's own row count: its scan visits staged and unsearched rows too, so a scan allowed fewer tuples
        # than that is not exhaustive.
        rows = max(self._indexed, sum(sizes.values()))
        return plan(self.method(db), rows, sum(sizes.get(a, 0) for a in audiences), wanted)
