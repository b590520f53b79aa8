"""pgvector's HNSW against exact search, and against the in-memory numpy search, in one run.

Run: python benchmarks/pgvector_scale.py [N ...]   (default: 100000)
Starts PostgreSQL + pgvector (pgserver, the dev extra) in a temporary folder, loads N synthetic
384-dimension unit vectors (clustered, as sentence embeddings are: 1,000 topics plus noise),
builds an HNSW cosine index, and for 200 queries near the data measures p50/p95 and recall@5
of HNSW at ef_search 40 and 100 against exact search, with numpy's exact product beside them.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

DIM = 384
QUERIES = 200


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def data(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    centres = unit(rng.normal(size=(1000, DIM)))
    vectors = unit(centres[rng.integers(0, 1000, n)] + 0.35 * rng.normal(size=(n, DIM)) / np.sqrt(DIM) * 8)
    queries = unit(vectors[rng.integers(0, n, QUERIES)] + 0.2 * rng.normal(size=(QUERIES, DIM)) / np.sqrt(DIM) * 8)
    return vectors, queries


def pct(times: list[float]) -> str:
    return f"p50 {np.percentile(times, 50):7.2f} ms  p95 {np.percentile(times, 95):7.2f} ms"


def main(sizes: list[int]) -> None:
    import psycopg
    from pgvector.psycopg import register_vector

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        server = pgserver.get_server(Path(tmp) / "pg", cleanup_mode="stop")
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        with psycopg.connect(server.get_uri(), autocommit=True) as db:
            register_vector(db)
            for n in sizes:
                vectors, queries = data(n, rng)
                db.execute("DROP TABLE IF EXISTS bench")
                db.execute(f"CREATE TABLE bench (id integer PRIMARY KEY, embedding vector({DIM}))")
                started = time.perf_counter()
                with db.cursor().copy("COPY bench (id, embedding) FROM STDIN WITH (FORMAT BINARY)") as copy:
                    copy.set_types(["int4", "vector"])
                    for i, v in enumerate(vectors):
                        copy.write_row((i, v))
                loaded = time.perf_counter() - started
                started = time.perf_counter()
                db.execute("SET maintenance_work_mem = '1GB'")
                db.execute("CREATE INDEX ON bench USING hnsw (embedding vector_cosine_ops)")
                built = time.perf_counter() - started
                print(
                    f"{n:,} vectors: loaded in {loaded:.1f} s, HNSW (m 16, ef_construction 64) built in {built:.1f} s"
                )

                exact_ids, numpy_ms = [], []
                for q in queries:
                    mark = time.perf_counter()
                    top = np.argpartition(-(vectors @ q), 5)[:5]
                    numpy_ms.append((time.perf_counter() - mark) * 1000)
                    exact_ids.append(set(int(i) for i in top))
                print(f"  numpy exact (1 process, in memory): {pct(numpy_ms)}")

                sql = "SELECT id FROM bench ORDER BY embedding <=> %s LIMIT 5"
                db.execute("SET enable_indexscan = off")
                exact_ms = []
                for q in queries[:50]:
                    mark = time.perf_counter()
                    db.execute(sql, (q,)).fetchall()
                    exact_ms.append((time.perf_counter() - mark) * 1000)
                print(f"  PostgreSQL exact (sequential scan, 50 queries): {pct(exact_ms)}")
                db.execute("SET enable_indexscan = on")
                for ef in (40, 100):
                    db.execute(f"SET hnsw.ef_search = {ef}")
                    times, recall = [], []
                    for q, truth in zip(queries, exact_ids, strict=True):
                        mark = time.perf_counter()
                        got = {row[0] for row in db.execute(sql, (q,)).fetchall()}
                        times.append((time.perf_counter() - mark) * 1000)
                        recall.append(len(got & truth) / 5)
                    print(f"  HNSW ef_search {ef:>3}: {pct(times)}  recall@5 {np.mean(recall):.3f}")
                plan = db.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, (queries[0],)).fetchall()
                lines = [row[0].strip() for row in plan if "Order By" not in row[0]]  # not the 384 numbers
                print("  one query's plan: " + " | ".join(lines[:3]))
        server.cleanup()


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [100_000])
