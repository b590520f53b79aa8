"""Where Verbatim keeps what outlives a process: the index, the run log and the bots' shared state.

A `Store` bundles three small protocols, so a surface or a test can swap the engine:

    Store
     ├── index:   IndexStore     documents, fragments and vectors; `generation` changes with them
     ├── runlog:  RunLogStore    every answer and its feedback (user data: a re-index never drops it)
     └── state:   StateStore     seen event ids, conversation links, rate-limit counters

The protocols are `core.store.protocols`, the records they pass `core.store.records`, the choice of engine
`core.store.engines`; this package re-exports them. One implementation holds the SQL (`core.store.index`,
`core.store.runlog`); a small dialect per engine says how each engine differs (`core.store.sql`). SQLite
(`core.store.sqlite`) is the embedded engine, PostgreSQL + pgvector (`core.store.postgres`) the shared one;
nothing imports either until `open_store` is called, so importing `core` opens no database. The store keeps
records: answers and review dates are built from them above it.

May import: common, vectors.
"""

from core.store.engines import existing_store, open_store
from core.store.protocols import ACK_WAIT, IndexStore, RunLogStore, SearchingIndex, StateStore, Store
from core.store.records import (
    INDEX_FILE,
    RUNLOG_FILE,
    Disk,
    DocumentRecord,
    KnownDocument,
    Logged,
    Unreferenced,
    conversation_hash,
)

__all__ = [
    "ACK_WAIT",
    "INDEX_FILE",
    "RUNLOG_FILE",
    "Disk",
    "DocumentRecord",
    "IndexStore",
    "KnownDocument",
    "Logged",
    "RunLogStore",
    "SearchingIndex",
    "StateStore",
    "Store",
    "Unreferenced",
    "conversation_hash",
    "existing_store",
    "open_store",
]
