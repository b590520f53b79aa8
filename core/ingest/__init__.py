"""Ingestion: bring a store's index in line with a knowledge folder.

`sync(folder, index, embedder)` reads new and changed files with the reader for their
suffix, cuts them into fragments, embeds only the fragments whose text is new (per-fragment
hashes), stages them in batches and swaps each document in one transaction; a removed file's
fragments are dropped and its register row kept, marked `removed`. A folder that can't be
listed changes nothing, nor does another folder or one that would remove most of the index
(`guard`); a file over the size limit fails before it is read. A renamed file is one update (its
content found under a new name), and a sync that would fill the index's disk stops before it writes (`space`).

May import: common, vectors, store.
"""

from core.ingest.syncing import (
    FRAGMENT_BATCH,
    SENTENCE_BATCH,
    FragmentListener,
    FragmentProgress,
    Progress,
    SyncReport,
    sync,
)

__all__ = [
    "FRAGMENT_BATCH",
    "SENTENCE_BATCH",
    "FragmentListener",
    "FragmentProgress",
    "Progress",
    "SyncReport",
    "sync",
]
