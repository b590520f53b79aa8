"""The provenance register: every document the index has seen, what needs attention, what nothing refers to.

`read_register(settings)` reads the store without changing it (a file in the folder that was
never indexed shows as `queued`) and lists what needs a person: failed documents, documents
past their review date, documents with no owner, and, while a public surface is configured, no
public document, or prices, opening hours or terms that only staff-only documents hold; and why the
last sync failed, when it did (a bot's resync that would have filled the disk, a folder gone).
`sweep_data(settings, apply)` finds what nothing refers to (fragments and vectors of no indexed
document, rows of removed documents, damaged index copies moved aside as `*.corrupt-*`) and
removes it only when asked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Literal

from core.answering.review import dated, parse_date, parse_period, review_due
from core.common.errors import KnowledgeError
from core.common.settings import Settings
from core.measuring.coverage import Shortfall, shortfalls
from core.store import DocumentRecord, IndexStore, Unreferenced, existing_store
from core.vectors import approximate

STATES = ("queued", "indexing", "indexed", "failed", "removed")
AttentionKind = Literal[
    "failed", "past_review", "no_owner", "bad_metadata", "no_public_document", "public_lacks", "sync_failed"
]


@dataclass(frozen=True)
class Attention:
    """One thing a person should look at; `detail` is the reason, the due date, the surfaces concerned, or what
    the public documents lack (`prices`, `hours`, `terms`, with the staff-only `documents` that hold it)."""

    kind: AttentionKind
    document: str  # the document's path; "" for the folder as a whole
    detail: str = ""
    documents: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "document": self.document, "detail": self.detail, "documents": list(self.documents)}


@dataclass(frozen=True)
class RegisterStatus:
    """The register as `verbatim status` shows it."""

    documents: tuple[DocumentRecord, ...]
    attention: tuple[Attention, ...]
    review_days: int  # VERBATIM_REVIEW_DAYS (0: only documents with their own `review_every` are reviewed)
    review_dates: dict[str, str] = field(default_factory=dict)  # path → ISO due date, for those that have one
    search: str = ""  # how questions are searched: exact, the approximate index's check, or in the database
    skipped: tuple[str, ...] = ()  # files in the knowledge folder no reader handles
    # In the database: its method, pgvector's version, the index's size and shared_buffers (bytes).
    search_method: dict[str, str | int] = field(default_factory=dict)

    @property
    def totals(self) -> dict[str, int]:
        """Documents per state (every state, zeros included), and fragments searched."""
        counts = Counter(d.state for d in self.documents)
        totals = {state: counts.get(state, 0) for state in STATES}
        totals["documents"] = len(self.documents)
        totals["fragments"] = sum(d.fragments for d in self.documents if d.state in ("indexed", "indexing"))
        return totals

    def to_json(self) -> dict[str, Any]:
        return {
            "documents": [{**vars(d), "review_due": self.review_dates.get(d.path)} for d in self.documents],
            "totals": self.totals,
            "attention": [a.to_json() for a in self.attention],
            "review_days": self.review_days,
            "search": self.search,
            "search_method": self.search_method,
            "skipped": list(self.skipped),
        }


@dataclass(frozen=True)
class Leftovers:
    """What `verbatim sweep` found (and, with `applied`, removed)."""

    index: Unreferenced
    corrupt_files: tuple[str, ...]  # names in the data folder
    applied: bool = False
    where: str = ""  # the store's place, as a person reads it: the data folder, or the database

    @property
    def empty(self) -> bool:
        return not (self.index.fragments or self.index.removed or self.corrupt_files)

    def to_json(self) -> dict[str, Any]:
        return {
            "orphan_fragments": self.index.orphan_fragments,
            "unindexed_fragments": self.index.unindexed_fragments,
            "stale_batches": self.index.stale_batches,
            "removed_documents": list(self.index.removed),
            "corrupt_files": list(self.corrupt_files),
            "applied": self.applied,
        }


def read_register(settings: Settings, public_surfaces: Sequence[str] = (), today: date | None = None) -> RegisterStatus:
    """The register of `settings.data_dir` against `settings.knowledge_dir`; nothing is created or changed.

    `public_surfaces` names the configured surfaces that answer the public (e.g. a Telegram bot);
    with any, a folder without an indexed public document needs attention.
    """
    records: list[DocumentRecord] = []
    search = ""
    method: dict[str, str | int] = {}
    lacking: list[Shortfall] = []
    problem: str | None = None  # why the last sync failed (a bot's resync: a full disk, a missing folder)
    store = existing_store(settings.data_dir, settings.database_url, settings.database_wait)
    if store is not None:
        try:
            records = store.index.register()
            if (searching := store.index.searching()) is not None:
                # Read once: the version, the index's size and shared_buffers take a query to the server.
                in_database = searching.method()
                search, method = in_database.describe(), in_database.to_json()
            else:
                search = _search(store.index, records)
            problem = store.index.sync_problem()
            if public_surfaces:
                lacking = shortfalls(fragment for _, fragment in store.index.load().each())
        finally:
            store.close()
    queued, skipped = _never_indexed(settings.knowledge_dir, {r.path for r in records if r.state != "removed"})
    records.extend(queued)
    records.sort(key=lambda r: r.path)
    today = today or date.today()
    attention: list[Attention] = [Attention("sync_failed", "", problem)] if problem else []
    due_dates: dict[str, str] = {}
    for record in records:
        if record.state == "failed":
            attention.append(Attention("failed", record.path, record.error or "failed"))
        if record.state not in ("indexed", "indexing"):
            continue
        since = dated(record.as_of, record.modified)
        due = review_due(since, record.review_every, settings.review_days)
        if due is not None:
            due_dates[record.path] = due.isoformat()
            if today > due:
                attention.append(Attention("past_review", record.path, due.isoformat()))
        if not (record.owner or "").strip():
            attention.append(Attention("no_owner", record.path))
        attention.extend(_unreadable_metadata(record))
    if public_surfaces and not any(r.state in ("indexed", "indexing") and r.audience == "public" for r in records):
        attention.append(Attention("no_public_document", "", ", ".join(public_surfaces)))
    else:  # with no public document at all, the line above says it all
        attention.extend(Attention("public_lacks", "", s.kind, s.documents) for s in lacking)
    return RegisterStatus(
        tuple(records), tuple(attention), settings.review_days, due_dates, search, tuple(skipped), method
    )


def _search(index: IndexStore, records: Sequence[DocumentRecord]) -> str:
    """How questions over an index in memory are searched, as the bots would search it now."""
    path = index.approximate_path
    if path is None:
        return "exact search"
    searched = [r for r in records if r.state in ("indexed", "indexing")]
    scopes = [sum(r.fragments for r in searched), sum(r.fragments for r in searched if r.audience == "public")]
    return approximate.describe(path, index.generation(), scopes)


def _never_indexed(folder: Path, registered: set[str]) -> tuple[list[DocumentRecord], list[str]]:
    """Files in the folder the register has no row for (queued for the next sync), and the files skipped."""
    from core.ingest.folder import list_folder  # the readers load only when a folder is looked at

    try:
        files, _, skipped = list_folder(folder)
    except KnowledgeError:
        return [], []  # a missing folder is the index's business, not the register's
    out = []
    for file in files:
        rel = file.relative_to(folder).as_posix()
        if rel not in registered:
            out.append(DocumentRecord(rel, "queued", size=_size(file)))
    return out, skipped


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0


def _unreadable_metadata(record: DocumentRecord) -> list[Attention]:
    found = []
    if record.as_of and parse_date(record.as_of) is None:
        found.append(Attention("bad_metadata", record.path, f"as_of {record.as_of!r} is not a date such as 2026-10-01"))
    if record.review_every:
        try:
            parse_period(record.review_every)
        except ValueError as exc:
            found.append(Attention("bad_metadata", record.path, str(exc)))
    return found


def sweep_data(settings: Settings, apply: bool = False) -> Leftovers:
    """What nothing refers to in the store; removed only with `apply`. A store not yet created holds nothing."""
    store = existing_store(settings.data_dir, settings.database_url, settings.database_wait)
    if store is None:
        return Leftovers(Unreferenced(), (), applied=apply, where=str(settings.data_dir))
    try:
        corrupt = store.index.damaged_copies()
        index = store.index.drop_unreferenced() if apply else store.index.unreferenced()
        if apply:
            for path in corrupt:
                path.unlink(missing_ok=True)
        return Leftovers(index, tuple(p.name for p in corrupt), applied=apply, where=store.where)
    finally:
        store.close()
