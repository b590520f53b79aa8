"""How long a question waits while a running bot re-reads a folder that just grew by many small files, and what a
resync that can't fit leaves free on a nearly full disk.

Run: python benchmarks/resync_wait.py [--files 3000] [--embedder local|words] [--no-disk]

The wait: a knowledge base indexes one price list, then FILES small documents (a heading and two sentences) are
dropped into its folder and the resync falls due; questions go through `Pipeline.ask`, run log included.
- before: as up to this change, the question that finds the resync due runs it in its own thread: the sync,
  then the answer, timed together.
- after: the question starts the resync in a thread of its own and is answered from the index in use; questions
  are asked back to back until the resync is over.
Each starts from the same index. Prints the resync's seconds and the questions' waits: the first, the first
of each wording (nothing cached), and p50 and max over all.

The disk (needs a tmpfs, which needs root; skipped otherwise): the data folder on a 48 MB tmpfs left with 2 MB
free, 20 new documents of ~20 KB, 8 questions. Prints the bytes free before and after, the answers, and the
sentence `status` shows. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core import Pipeline  # noqa: E402
from core.common.questions import SCOPES  # noqa: E402
from core.common.settings import Settings  # noqa: E402
from core.measuring.fakes import WordEmbedder  # noqa: E402
from core.retrieval.knowledge import KnowledgeBase  # noqa: E402
from core.vectors.embeddings import Embedder, LocalEmbedder  # noqa: E402

PRICES = "---\ntitle: Prices\naudience: public\n---\n## Fronts\n\nOak fronts cost 185 EUR per m².\n"
WARM_UP = "Do oak fronts come in other woods?"  # loads the models; never asked again
ASKED = (  # one question in several wordings: the first time each is asked, no cache answers it
    "How much are oak fronts?",
    "What do oak fronts cost?",
    "What is the price of oak fronts?",
    "How much does an oak front cost per m²?",
    "Oak fronts: what is the price?",
    "What is the cost of oak fronts per square metre?",
    "How expensive are oak fronts?",
    "What are oak fronts priced at?",
)


def note(n: int) -> str:
    return (
        f"---\ntitle: Note {n}\naudience: public\n---\n## Visit {n}\n\n"
        f"Visit {n} measured {n % 7 + 2} cabinets in the kitchen. The fitter comes back in {n % 3 + 1} weeks.\n"
    )


def worktops(n: int) -> str:
    body = "\n\n".join(f"Walnut worktop {n}-{i} is oiled twice and costs {500 + i} EUR." for i in range(300))
    return f"---\ntitle: Worktops {n}\naudience: public\n---\n## Walnut\n\n{body}\n"


def knowledge(base: Path, embedder: Embedder) -> tuple[Pipeline, Path]:
    folder = base / "kb"
    folder.mkdir(parents=True)
    (folder / "prices.md").write_text(PRICES, encoding="utf-8")
    settings = Settings(knowledge_dir=folder, data_dir=base / "data", resync_seconds=0.5)
    pipeline = Pipeline(settings, KnowledgeBase(settings, embedder))
    pipeline.knowledge.sync()
    pipeline.ask(WARM_UP, SCOPES["public"], "bench")
    return pipeline, folder


def drop(folder: Path, files: int) -> None:
    for n in range(files):
        (folder / f"note-{n:05d}.md").write_text(note(n), encoding="utf-8")


def ask(pipeline: Pipeline, n: int = 0) -> tuple[float, str]:
    """The `n`th question: the price of oak fronts, in one of ASKED's wordings."""
    started = time.perf_counter()
    answer = pipeline.ask(ASKED[n % len(ASKED)], SCOPES["public"], "bench")
    return time.perf_counter() - started, answer.kind


def before(base: Path, embedder: Embedder, files: int) -> None:
    pipeline, folder = knowledge(base, embedder)
    drop(folder, files)
    started = time.perf_counter()
    pipeline.knowledge.sync()  # what the question that found the resync due did first
    synced = time.perf_counter() - started
    waited, kind = ask(pipeline)
    print(f"before: the question ran the resync: it waited {synced + waited:.2f} s ({synced:.2f} s of sync), {kind}")
    pipeline.close()


def after(base: Path, embedder: Embedder, files: int) -> None:
    pipeline, folder = knowledge(base, embedder)
    drop(folder, files)
    indexer = pipeline.knowledge.indexer
    indexer.synced_at = float("-inf")  # due now, as 60 s later
    started = time.perf_counter()
    waits, kinds = [], []
    while True:
        waited, kind = ask(pipeline, len(waits))
        waits.append(waited)
        kinds.append(kind)
        if not indexer.resyncing:
            break
    indexer.wait_for_resync()
    took = time.perf_counter() - started
    fresh = waits[: len(ASKED)]  # each wording's first time: nothing cached
    print(
        f"after:  the resync ran beside {len(waits)} questions for {took:.2f} s; the first waited {waits[0]:.3f} s; "
        f"the first {len(fresh)} (uncached) max {max(fresh):.3f} s; all: p50 {statistics.median(waits):.3f} s, "
        f"max {max(waits):.3f} s; {kinds.count('answered')} answered"
    )
    pipeline.close()


def disk(base: Path, embedder: Embedder) -> None:
    mount = base / "disk"
    mount.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(mount)], capture_output=True)
    if mounted.returncode:
        print(f"disk: skipped, a tmpfs can't be mounted here ({mounted.stderr.decode().strip()})")
        return
    try:
        folder = base / "disk-kb"
        folder.mkdir()
        (folder / "prices.md").write_text(PRICES, encoding="utf-8")
        settings = Settings(knowledge_dir=folder, data_dir=mount / "data", resync_seconds=0.5)
        pipeline = Pipeline(settings, KnowledgeBase(settings, embedder))
        pipeline.knowledge.sync()
        pipeline.ask(WARM_UP, SCOPES["public"], "bench")
        with (mount / "ballast").open("wb") as handle:
            os.posix_fallocate(handle.fileno(), 0, shutil.disk_usage(mount).free - 2_000_000)
        for n in range(20):
            (folder / f"worktops-{n}.md").write_text(worktops(n), encoding="utf-8")
        free = shutil.disk_usage(mount).free
        pipeline.knowledge.indexer.synced_at = float("-inf")
        kinds = []
        for n in range(8):
            kinds.append(ask(pipeline, n)[1])
            pipeline.knowledge.indexer.wait_for_resync()
        left = shutil.disk_usage(mount).free
        print(
            f"disk:   {free / 1e6:.2f} MB free before the resync, {left / 1e6:.2f} MB after it and 8 questions "
            f"({kinds.count('answered')} answered, {len(kinds) - kinds.count('answered')} not)"
        )
        print(f"        status: {pipeline.knowledge.store.index.sync_problem()}")
        pipeline.close()
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--embedder", choices=("local", "words"), default="local")
    parser.add_argument("--no-disk", action="store_true")
    args = parser.parse_args()
    embedder: Embedder = LocalEmbedder() if args.embedder == "local" else WordEmbedder(384)
    print(f"{args.files:,} small files, {args.embedder} embedder")
    with tempfile.TemporaryDirectory() as tmp:
        after(Path(tmp) / "after", embedder, args.files)
        before(Path(tmp) / "before", embedder, args.files)
        if not args.no_disk:
            disk(Path(tmp), embedder)


if __name__ == "__main__":
    main()
