"""PostgreSQL + pgvector search at scale, against exact search and today's in-memory numpy search, in one run.

Run: python benchmarks/pgvector_scale.py [N ...] [--data topics|noise] [--ef-search 40,100] [--store-ef 100,400]
                                         [--ef-construction 128] [--shared-buffers 2GB]   (default: 100000, topics)
Starts PostgreSQL 16 + pgvector (pgserver, the dev extra) in a temporary folder and, per size, fills
the real store's tables (`core/store/postgres.py`) with N synthetic 384-dimension unit vectors
(clustered, as sentence embeddings are: 1,000 topics plus noise), 100 fragments per document, one
document in four public. Then, for 200 queries near the data:
- bare HNSW (`ORDER BY embedding <=> q LIMIT 5`, no filter) at ef_search 40 and 100: p50/p95 and
  recall@5 against exact search; PostgreSQL's own exact scan; the HNSW index's build time;
- the same HNSW query through a statement prepared while index scans were off, as the earlier
  version of this benchmark timed it (a cached plan ignores the setting: it times a sequential scan);
- the store's `search` (what answering calls: audience filter, floor 0.40, top 5, 3 per document)
  for the public and the staff scope, and today's in-memory `Searcher` on the same vectors, with how
  often the two agree and how many searches fell back to exact ranking;
- up to `LOAD_UP_TO` fragments, `load()`: what each replica paid to search in memory.
Prints figures; asserts nothing. Needs disk for the index (1M: about 4 GB) and memory for numpy.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import signal
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.common.values import Fragment  # noqa: E402
from core.retrieval.knowledge import SCOPES  # noqa: E402
from core.retrieval.search import Searcher  # noqa: E402
from core.store.corpus import Corpus  # noqa: E402

DIM = 384
QUERIES = 200
PER_DOCUMENT = 100
FLOOR = 0.40
LOAD_UP_TO = int(os.environ.get("LOAD_UP_TO", "200000"))  # load() at 1M holds several GB


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def data(n: int, rng: np.random.Generator, kind: str = "topics") -> tuple[np.ndarray, np.ndarray]:
    """N unit vectors and the queries.

    `topics` (the default), shaped like sentence embeddings of documents: each fragment is on one
    subject of about ten fragments (spread over documents), each subject within a topic. A query is
    about one subject: its ~10 fragments score about 0.67, the topic's others about 0.23, the rest
    about 0, so what answering keeps above the floor is distinctly near, as with a real question.
    `noise`, the earlier generator: 1,000 topics drowned in noise; a query's source fragment scores
    about 0.53 and every other at noise level (~0.06), so its "5 nearest" are mostly noise's order.
    """
    vectors = np.empty((n, DIM), dtype=np.float32)
    if kind == "noise":
        centres = unit(rng.normal(size=(1000, DIM)))
        for start in range(0, n, 100_000):  # in slices: the float64 noise for 1M rows would be 3 GB at once
            end = min(n, start + 100_000)
            noise = rng.normal(size=(end - start, DIM)) / np.sqrt(DIM) * 8
            vectors[start:end] = unit(centres[rng.integers(0, 1000, end - start)] + 0.35 * noise)
        sources = vectors[rng.integers(0, n, QUERIES)]
        return vectors, unit(sources + 0.2 * rng.normal(size=(QUERIES, DIM)) / np.sqrt(DIM) * 8)
    subjects = max(1, n // 10)
    topics = unit(rng.normal(size=(max(1, subjects // 100), DIM)))
    subject_vectors = unit(rng.normal(size=(subjects, DIM)))
    topic_of = rng.integers(0, len(topics), subjects)
    subject_of = rng.integers(0, subjects, n)
    for start in range(0, n, 100_000):
        end = min(n, start + 100_000)
        s = subject_of[start:end]
        noise = rng.normal(size=(end - start, DIM)) / np.sqrt(DIM)
        vectors[start:end] = unit(0.5 * topics[topic_of[s]] + 0.7 * subject_vectors[s] + 0.5 * noise)
    asked = subject_of[rng.integers(0, n, QUERIES)]  # subjects that have fragments
    noise = rng.normal(size=(QUERIES, DIM)) / np.sqrt(DIM)
    return vectors, unit(0.5 * topics[topic_of[asked]] + 0.7 * subject_vectors[asked] + 0.7 * noise)


def line(label: str, figures: str) -> None:
    print(f"  {label:<52} {figures}")


def pct(times: list[float]) -> str:
    return f"p50 {np.percentile(times, 50):7.2f} ms  p95 {np.percentile(times, 95):7.2f} ms"


def rss_mb() -> float:
    """Resident memory now (not the peak: generating the data had a higher one)."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * resource.getpagesize() / 2**20


@contextmanager
def timed(into: list[float]) -> Iterator[None]:
    mark = time.perf_counter()
    yield
    into.append((time.perf_counter() - mark) * 1000)


class Placeholders:
    """`Corpus.fragments` for synthetic rows: a Fragment made when a hit needs one, not 1M kept in memory."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, row: int) -> Fragment:
        return Fragment(f"doc{row // PER_DOCUMENT:06d}.md", "", "", (), row % PER_DOCUMENT + 1, PER_DOCUMENT, "")


def in_memory(n: int, vectors: np.ndarray, documents: np.ndarray, public_rows: np.ndarray) -> Corpus:
    """The corpus `load()` would give for these rows, without reading them back from the database."""
    return Corpus(
        ids=np.arange(1, n + 1, dtype=np.int64),
        fragments=Placeholders(n),  # type: ignore[arg-type]
        matrix=vectors,
        audiences=np.where(public_rows, "public", "internal").astype(object),
        documents=documents.astype(np.int64),
    )


def fill(db, n: int, vectors: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    """The store's tables as `verbatim index` leaves them, written with COPY; rows are numbered 1..n."""
    documents = (n + PER_DOCUMENT - 1) // PER_DOCUMENT
    audience = ["public" if d % 4 == 0 else "internal" for d in range(documents)]
    with db.cursor().copy("COPY documents (id, path, title, audience, sha256, size, state) FROM STDIN") as copy:
        for d in range(documents):
            copy.write_row((d + 1, f"doc{d:06d}.md", f"Document {d}", audience[d], "0" * 64, 1000, "indexed"))
    db.execute(f"ALTER TABLE fragments ALTER COLUMN embedding TYPE vector({DIM})")
    filler = " ".join(["The quick brown fox jumps over the lazy dog."] * 9)  # ~400 characters, a typical fragment
    columns = "id, document_id, position, total, section, text, embedding, hash, staged"
    with db.cursor().copy(f"COPY fragments ({columns}) FROM STDIN WITH (FORMAT BINARY)") as copy:
        copy.set_types(["int8", "int8", "int4", "int4", "text", "text", "vector", "text", "int8"])
        for i in range(n):
            text = f"Fragment {i}. {filler}"
            digest = hashlib.sha256(text.encode()).hexdigest()
            d = i // PER_DOCUMENT
            copy.write_row((i + 1, d + 1, i % PER_DOCUMENT + 1, PER_DOCUMENT, '["Part"]', text, vectors[i], digest, 0))
    db.execute("INSERT INTO meta VALUES ('dimension', %s)", (str(DIM),))


def measure(  # type: ignore[no-untyped-def]
    server,
    n: int,
    rng: np.random.Generator,
    kind: str,
    store_efs: list[int],
    ef_construction: int | None,
    efs: list[int],
) -> None:
    import psycopg
    from pgvector.psycopg import register_vector

    import core.store.postgres as postgres
    from core.store.postgres import PostgresStore

    name = f"bench{n}"
    with psycopg.connect(server.get_uri(), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
    url = server.get_uri(name)
    store = PostgresStore(url)  # applies the migrations
    vectors, queries = data(n, rng, kind)
    documents = np.arange(n) // PER_DOCUMENT
    public_rows = documents % 4 == 0

    with psycopg.connect(url, autocommit=True) as db:
        register_vector(db)
        started = time.perf_counter()
        fill(db, n, vectors)
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        db.execute("SET maintenance_work_mem = '4GB'")  # the graph fits in memory: no slow on-disk build phase
        options = postgres.HNSW if ef_construction is None else f"WITH (ef_construction = {ef_construction})"
        db.execute(
            f"CREATE INDEX fragments_by_embedding ON fragments USING hnsw (embedding vector_cosine_ops) {options}"
        )
        built = time.perf_counter() - started
        db.execute("ANALYZE")
        size = db.execute(
            "SELECT pg_size_pretty(pg_table_size('fragments')), "
            "pg_size_pretty(pg_relation_size('fragments_by_embedding'))"
        ).fetchone()
        print(
            f"{n:,} fragments: copied in {loaded:.1f} s; HNSW {options} built in {built:.1f} s; "
            f"table {size[0]}, index {size[1]}"
        )

        # In memory, the way answering searched before: one matrix-vector product over every row, with the
        # BLAS threads the Searcher pins for this size.
        searcher = Searcher(in_memory(n, vectors, documents, public_rows))
        truth, numpy_ms = [], []
        for q in queries:
            with timed(numpy_ms):
                top = np.argpartition(-(vectors @ q), 5)[:5]
            truth.append({int(i) + 1 for i in top})
        from threadpoolctl import threadpool_info

        threads = max((pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"), default=0)
        line(f"numpy exact, all rows, top 5 ({threads} BLAS thread(s))", pct(numpy_ms))

        bare = "SELECT id FROM fragments ORDER BY embedding <=> %s LIMIT 5"
        exact = "SELECT id FROM fragments ORDER BY 1 - (embedding <=> %s) DESC LIMIT 5"  # no index serves this order
        exact_ms = []
        sample = queries[: 50 if n <= 200_000 else 20]
        for q in sample:
            with timed(exact_ms):
                db.execute(exact, (q,), prepare=False).fetchall()
        line(f"PostgreSQL exact, sequential scan ({len(sample)} queries)", pct(exact_ms))
        for ef in efs:
            db.execute(f"SET hnsw.ef_search = {ef}")
            times, recall = [], []
            for q, expected in zip(queries, truth, strict=True):
                with timed(times):
                    got = {row[0] for row in db.execute(bare, (q,), prepare=False).fetchall()}
                recall.append(len(got & expected) / 5)
            line(f"HNSW ef_search {ef}, no filter", f"{pct(times)}  recall@5 {np.mean(recall):.3f}")
        server_ms = []
        for q in queries[:50]:
            plan = db.execute("EXPLAIN (ANALYZE) " + bare, (q,), prepare=False).fetchall()
            server_ms += [float(r[0].split()[2]) for r in plan if r[0].startswith("Execution Time")]
        line(f"HNSW ef_search {efs[-1]}, inside the server (EXPLAIN)", pct(server_ms))

        # The earlier benchmark's figure: its HNSW query text had been prepared (psycopg prepares a statement
        # on its 5th run) while `enable_indexscan` was off for the exact scan, and a cached plan ignores it.
        db.execute("SET enable_indexscan = off")
        for q in sample[:6]:
            db.execute(bare, (q,)).fetchall()
        db.execute("SET enable_indexscan = on")
        trap_ms = []
        for q in sample:
            with timed(trap_ms):
                db.execute(bare, (q,)).fetchall()
        line("the same, prepared under enable_indexscan off", f"{pct(trap_ms)}  (the earlier benchmark's figure)")

    # What answering calls, against today's in-memory search on the same vectors.
    index = store.index
    default = postgres.SEARCH_EF
    for scope_name in ("public", "internal"):
        scope = SCOPES[scope_name]
        searcher.search(queries[0], scope, FLOOR)  # the scope's rows found once, as in a bot
        memory_ms, expected = [], []
        for q in queries:
            with timed(memory_ms):
                expected.append([h.fragment_id for h in searcher.search(q, scope, FLOOR)])
        found = sum(len(e) for e in expected) / QUERIES
        line(f"{scope_name} scope, in memory (Searcher)", f"{pct(memory_ms)}  {found:.1f} hits a query")
        for postgres.SEARCH_EF in store_efs:
            sql_ms, same, kept, fallbacks = [], 0, 0, index.exact_searches
            for q, wanted in zip(queries, expected, strict=True):
                with timed(sql_ms):
                    got = [h.fragment_id for h in index.search(q, scope, FLOOR)]
                same += got == wanted
                kept += len(set(got) & set(wanted))
            recall = kept / max(1, sum(len(e) for e in expected))
            line(
                f"{scope_name} scope, store search (SQL), ef_search {postgres.SEARCH_EF}",
                f"{pct(sql_ms)}  same hits {same}/{QUERIES}, recall {recall:.3f}, "
                f"{index.exact_searches - fallbacks} ranked exactly",
            )
    postgres.SEARCH_EF = default
    if n <= LOAD_UP_TO:
        before, started = rss_mb(), time.perf_counter()
        loaded_corpus = index.load()
        line(
            "load(), what an in-memory search needs first",
            f"{time.perf_counter() - started:.1f} s, +{rss_mb() - before:.0f} MB resident",
        )
        del loaded_corpus
    store.close()


def main(
    sizes: list[int],
    kind: str = "topics",
    store_efs: tuple[int, ...] = (100, 400),
    buffers: str = "",
    ef_construction: int | None = None,
    efs: tuple[int, ...] = (40, 100),
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
        import pgserver

    # Killed (SIGTERM) on a shared machine, stop the server on the way out rather than leave it running.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="pgvector-scale-") as tmp:
        server = pgserver.get_server(Path(tmp) / "pg", cleanup_mode="stop")
        try:
            if buffers:  # takes a restart; pg_ctl restart keeps the socket options pgserver started it with
                from pgserver._commands import pg_ctl

                server.psql(f"ALTER SYSTEM SET shared_buffers = '{buffers}';")
                pg_ctl(["-w", "-m", "fast", "restart"], pgdata=server.pgdata, user=server.system_user)
            import psycopg

            with psycopg.connect(server.get_uri()) as db:
                version, shared = (
                    db.execute(f"SHOW {name}").fetchone()[0] for name in ("server_version", "shared_buffers")
                )
                vector = db.execute(
                    "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
                ).fetchone()
            print(f"PostgreSQL {version} with pgvector {vector[0]} (pgserver), shared_buffers {shared}")
            print(f"data: {kind}; floor {FLOOR}; {QUERIES} queries")
            for n in sizes:
                measure(server, n, rng, kind, list(store_efs), ef_construction, list(efs))
        finally:
            server.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[100_000])
    parser.add_argument("--data", choices=["topics", "noise"], default="topics")
    parser.add_argument("--ef-search", default="40,100", help="ef_search values for bare HNSW, comma-separated")
    parser.add_argument(
        "--store-ef", default="100,400", help="ef_search values for the store's search, comma-separated"
    )
    parser.add_argument("--shared-buffers", default="", help="e.g. 2GB (pgserver starts with 128MB)")
    parser.add_argument("--ef-construction", type=int, help="build the graph so (default: as the store does)")
    args = parser.parse_args()
    store_efs = tuple(int(c) for c in args.store_ef.split(","))
    efs = tuple(int(c) for c in args.ef_search.split(","))
    main(args.sizes, args.data, store_efs, args.shared_buffers, args.ef_construction, efs)
