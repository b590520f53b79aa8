from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from core.common.settings import Settings
from core.vectors.embeddings import LocalEmbedder
from tests.fakes import FakeEmbedder, FakeServer

# A real PostgreSQL for the store's tests: pg_server, database_url, outage.
pytest_plugins = ["tests.postgres"]

REPO = Path(__file__).resolve().parent.parent
DEMO_KB = REPO / "knowledge"


def load_file(path: Path) -> ModuleType:
    """A script outside the packages (benchmarks/, scripts/, .ci/), loaded as a module named for its file."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's .env or VERBATIM_* variables, or writes outside tmp_path."""
    for name in list(os.environ):
        if name.startswith(("VERBATIM_", "SLACK_", "TELEGRAM_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbedder:
    """The real embedded model, loaded once for the whole run."""
    return LocalEmbedder()


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def write_kb(tmp_path: Path) -> Callable[[dict[str, str | bytes]], Path]:
    """Write a small knowledge folder from {file name: content} and return its path."""
    folder = tmp_path / "kb"

    def write(files: dict[str, str | bytes]) -> Path:
        folder.mkdir(exist_ok=True)
        for name, content in files.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return folder

    return write


@pytest.fixture(scope="session")
def demo_index(tmp_path_factory: pytest.TempPathFactory, local_embedder: LocalEmbedder) -> Path:
    """The demo knowledge base indexed once per run; tests start from a copy (re-indexing is tested on its own)."""
    from core.retrieval.knowledge import KnowledgeBase
    from core.store import INDEX_FILE

    data = tmp_path_factory.mktemp("demo-index")
    kb = KnowledgeBase(Settings(knowledge_dir=DEMO_KB, data_dir=data), local_embedder)
    kb.sync()
    kb.close()
    return data / INDEX_FILE


@pytest.fixture
def seed_index(demo_index: Path) -> Callable[[Path], Path]:
    """Put a copy of the demo index into a data folder; syncing it then finds every file unchanged."""

    def seed(data_dir: Path) -> Path:
        data_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(demo_index, data_dir / demo_index.name)
        return data_dir

    return seed


@pytest.fixture
def settings(tmp_path: Path, seed_index: Callable[[Path], Path]) -> Settings:
    return Settings(knowledge_dir=DEMO_KB, data_dir=seed_index(tmp_path / "data"))


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    with FakeServer() as server:
        yield server


@pytest.fixture
def pipeline(settings: Settings, local_embedder: LocalEmbedder):
    """The extractive pipeline on (a copy of) the indexed demo knowledge base."""
    from core.answering.pipeline import Pipeline
    from core.retrieval.knowledge import KnowledgeBase

    kb = KnowledgeBase(settings, local_embedder)
    kb.sync()
    return Pipeline(settings, kb)
