"""A re-index of 10,000 fragments in another process while a knowledge base keeps answering.

Run: python benchmarks/reindex_while_answering.py [DOCUMENTS] [FRAGMENTS_PER_DOCUMENT] [--reload-first]
(default 100 100). From 50,000 fragments (`BACKGROUND_RELOAD_ROWS`) a new generation loads in the
background; `--reload-first` makes every question wait for the load instead, as before, to compare.
Indexes a folder of DOCUMENTS x FRAGMENTS synthetic fragments (word-hash embedder: the point is the
store and the reloads, not the model), changes every fragment, and re-indexes it in a child process
(`core.ingest.sync`, as `verbatim index` would, the model paced at 1 ms a text so it lasts a while),
while this process asks questions through `KnowledgeBase.retrieve` back to back. Each question is
answered by a fragment in both versions. Prints the answer latency (p50, p95, max), the questions
that found nothing (a refusal), and how many generations the answering side went through.
Asserts nothing.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.answering.policy import DEFAULT  # noqa: E402
from core.common.questions import SCOPES  # noqa: E402
from core.common.settings import Settings  # noqa: E402
from core.ingest import sync  # noqa: E402
from core.measuring.fakes import WordEmbedder  # noqa: E402
from core.retrieval import knowledge  # noqa: E402
from core.retrieval.knowledge import KnowledgeBase  # noqa: E402
from core.store import INDEX_FILE  # noqa: E402
from core.store.sqlite import SQLiteIndex  # noqa: E402

WORDS = [
    "oak",
    "walnut",
    "beech",
    "ash",
    "pine",
    "maple",
    "cherry",
    "birch",
    "worktop",
    "front",
    "door",
    "drawer",
    "hinge",
    "handle",
    "delivery",
    "warranty",
    "price",
    "fitting",
    "oil",
    "varnish",
    "wax",
    "sanding",
    "joint",
    "dowel",
    "panel",
    "shelf",
    "cabinet",
    "frame",
    "glass",
    "steel",
    "brass",
]

CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from core.measuring.fakes import WordEmbedder
    from core.ingest import sync
    from core.store.sqlite import SQLiteIndex

    class Paced(WordEmbedder):
        def embed(self, texts):
            time.sleep(0.001 * len(texts))
            return super().embed(texts)

    report = sync(Path(sys.argv[1]), SQLiteIndex(Path(sys.argv[2])), Paced(dim=384))
    print(f"re-index: {report.updated} documents, {report.embedded} fragments embedded, {report.seconds:.1f} s")
    """
)


def write(folder: Path, documents: int, per_document: int, version: int) -> list[str]:
    """The folder's documents; returns one question per document, answered in every version."""
    rng = np.random.default_rng(1)
    questions = []
    for d in range(documents):
        sections = []
        for f in range(per_document):
            words = " ".join(rng.choice(WORDS, size=12))
            sections.append(f"## Part {f}\n\nItem d{d}f{f} {words}. Revision {version} of this part.")
        questions.append(f"item d{d}f0 " + sections[0].split("\n\n")[1].split(".")[0].split(" ", 2)[2])
        text = f"---\ntitle: Document {d}\naudience: public\n---\n" + "\n\n".join(sections) + "\n"
        (folder / f"doc-{d:04d}.md").write_text(text, encoding="utf-8")
    return questions


def main(documents: int, per_document: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder, data = Path(tmp) / "kb", Path(tmp) / "data"
        folder.mkdir()
        questions = write(folder, documents, per_document, 1)
        started = time.perf_counter()
        sync(folder, SQLiteIndex(data / INDEX_FILE), WordEmbedder(dim=384))
        print(f"{documents * per_document:,} fragments indexed in {time.perf_counter() - started:.0f} s")
        # The answering side never indexes itself (resync 0): it only follows the generations.
        kb = KnowledgeBase(Settings(knowledge_dir=folder, data_dir=data, resync_seconds=0), WordEmbedder(dim=384))
        kb.retrieve(questions[0], SCOPES["public"], DEFAULT.min_similarity)
        write(folder, documents, per_document, 2)
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(folder), str(data / INDEX_FILE)], cwd=ROOT, env={"PYTHONPATH": str(ROOT)}
        )
        latencies, empty, generations = [], 0, {kb.loaded_generation}
        i = 0
        while child.poll() is None:
            question = questions[i % len(questions)]
            mark = time.perf_counter()
            hits = kb.retrieve(question, SCOPES["public"], DEFAULT.min_similarity).hits
            latencies.append((time.perf_counter() - mark) * 1000)
            empty += not hits
            generations.add(kb.loaded_generation)
            i += 1
        kb.close()
        q = np.percentile(latencies, [50, 95])
        print(
            f"while re-indexing: {len(latencies)} questions, latency p50 {q[0]:.1f} ms, p95 {q[1]:.1f} ms, "
            f"max {max(latencies):.0f} ms; {empty} found nothing; {len(generations)} generations loaded"
        )


if __name__ == "__main__":
    if "--reload-first" in sys.argv:
        knowledge.BACKGROUND_RELOAD_ROWS = sys.maxsize
    args = [int(a) for a in sys.argv[1:] if a.isdigit()]
    main(*(args or [100, 100]))
