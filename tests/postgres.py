"""A real PostgreSQL 16 with pgvector for the tests (a pytest plugin: the root conftest loads it).

`pgserver` (a dev dependency) starts one server per run on a Unix socket in a temp folder
(`pg_server`); each test asks for its own empty database (`database_url`). `outage` is a server of
the test's own, which it may stop and start again as an operator's restart or a crash would.
When no server can be started the tests are skipped with the reason, and fail under CI.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def unavailable(reason: str) -> None:
    """Skip on a developer's machine without PostgreSQL; in CI (.ci/run installs pgserver and sets
    VERBATIM_REQUIRE_POSTGRES, whether or not the CI service sets CI) it is a failure."""
    if os.environ.get("CI") or os.environ.get("VERBATIM_REQUIRE_POSTGRES"):
        pytest.fail(reason)
    pytest.skip(reason)


def start_server(folder: Path) -> Any:
    """A pgserver PostgreSQL on a Unix socket in `folder`, with the vector extension available."""
    try:
        import psycopg

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
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


@pytest.fixture
def database_url(pg_server, request) -> str:
    """A fresh, empty database on the session's server."""
    import psycopg

    name = f"t_{abs(hash(request.node.nodeid)) % 10**12}"
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as db:
        db.execute(f"DROP DATABASE IF EXISTS {name}")
        db.execute(f"CREATE DATABASE {name}")
    return pg_server.get_uri(name)


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
