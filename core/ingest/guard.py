"""The guard a sync passes before it changes anything: may this folder's listing decide what the index holds?

Without it, a data folder pointed at another company's folder, or at a folder most of which is missing (a
share not mounted, a copy under way), would mark the first folder's documents removed without a word. A
folder at another path is the same folder, moved, only when most of the indexed documents' contents are in it
(one shared file name, a README.md, is not enough); a sync that would remove more than half of the indexed
documents, and more than one, needs `replace`. A document whose content is in the folder under another name
was renamed, not removed, and `renamed` tells a sync which ones, so that each is one update.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from core.common.errors import DocumentError, KnowledgeError
from core.ingest.documents import sha256_of
from core.ingest.folder import read_file
from core.store import IndexStore, KnownDocument

REPLACE_HINT = "`verbatim index --replace`"


def check_folder(
    folder: Path, files: list[Path], unreadable: Iterable[str], index: IndexStore, limit: int, replace: bool
) -> None:
    """Raise KnowledgeError, changing nothing, when the folder is not the one indexed or would remove most of
    what is; with `replace`, let it through. Remembers the folder's path once it passes."""
    where = str(folder.resolve())
    indexed = index.folder()
    live = {path: d for path, d in index.known().items() if d.state != "removed"}
    names = {f.relative_to(folder).as_posix(): f for f in files}
    if live and not replace:
        if indexed != where and files:
            _same_folder(folder, indexed, live, names, limit)
        kept = tuple(unreadable)  # subfolders that can't be listed: their documents are kept, not removed
        gone = {p: d for p, d in live.items() if p not in names and not p.startswith(kept)}
        if _most(gone, live):
            gone = {p: d for p, d in gone.items() if p not in _held(folder, gone, names, live, limit)}
            if _most(gone, live):
                raise KnowledgeError(
                    f"Indexing {folder} would remove {len(gone)} of the {len(live)} documents indexed "
                    f"({_some(gone)}), which are not there: if they were deleted on purpose, run {REPLACE_HINT}; "
                    "if the folder is incomplete (a drive not mounted, a copy under way), complete it and run again."
                )
    if indexed != where:
        index.set_folder(where)


def _same_folder(
    folder: Path, indexed: str | None, live: Mapping[str, KnownDocument], names: Mapping[str, Path], limit: int
) -> None:
    """Refuse a folder at another path unless most of the indexed documents' contents are in it (it moved).

    Replicas that mount the folder at their own paths come here on every sync: most names with their sizes
    settle it without reading a file, and only a folder still in doubt is hashed."""
    if 2 * sum(d.size > 0 and p in names and _size(names[p]) == d.size for p, d in live.items()) > len(live):
        return
    held = len(_held(folder, live, names, live, limit))
    if 2 * held > len(live):
        return
    some = "none" if not held else f"only {held}"
    raise KnowledgeError(
        f"This data folder holds the index of another knowledge folder ({indexed or 'an earlier one'}, "
        f"{len(live)} documents), and {some} of them {'is' if held < 2 else 'are'} in {folder}: give {folder} a data "
        "folder of its own with --data (or VERBATIM_DATA_DIR), so that neither folder's documents are marked "
        f"removed, or run {REPLACE_HINT} to index it in their place."
    )


def _most(gone: Mapping[str, KnownDocument], live: Mapping[str, KnownDocument]) -> bool:
    """More than half of the indexed documents, and more than one: deleting one file is an ordinary edit."""
    return len(gone) > 1 and 2 * len(gone) > len(live)


def _some(gone: Mapping[str, KnownDocument], shown: int = 3) -> str:
    names = sorted(gone)
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _held(
    folder: Path,
    docs: Mapping[str, KnownDocument],
    names: Mapping[str, Path],
    live: Mapping[str, KnownDocument],
    limit: int,
) -> set[str]:
    """The documents among `docs` whose content is in the folder: under their own name, or under a name the
    index does not know (renamed). Files are hashed only here, when the folder looks like another one."""
    held = {p for p, d in docs.items() if p in names and _sha256(folder, names[p], limit) == d.sha256}
    return held | set(_renames(folder, {p: d for p, d in docs.items() if p not in held}, names, live, limit).values())


def renamed(
    folder: Path, files: list[Path], unreadable: Iterable[str], known: Mapping[str, KnownDocument], limit: int
) -> dict[str, str]:
    """{new name: indexed path} for each indexed document gone from the folder whose content is in it under a name
    the index does not know: a sync makes each one update, not a removal and an addition. Files are hashed only
    when an indexed document is gone, and only those the index does not know."""
    names = {f.relative_to(folder).as_posix(): f for f in files}
    kept = tuple(unreadable)  # subfolders that can't be listed: their documents are kept, not renamed
    gone = {p: d for p, d in known.items() if d.state == "indexed" and p not in names and not p.startswith(kept)}
    return _renames(folder, gone, names, known, limit) if gone else {}


def _renames(
    folder: Path,
    docs: Mapping[str, KnownDocument],
    names: Mapping[str, Path],
    live: Mapping[str, KnownDocument],
    limit: int,
) -> dict[str, str]:
    """{new name: path} for the documents among `docs` whose content is in the folder under a name `live` lacks."""
    wanted = {d.sha256: p for p, d in docs.items()}
    found: dict[str, str] = {}
    for rel, file in names.items():
        if not wanted:
            break
        if rel not in live and (digest := _sha256(folder, file, limit)) in wanted:
            found[rel] = wanted.pop(digest)
    return found


def _sha256(folder: Path, file: Path, limit: int) -> str | None:
    """The file's SHA-256 as the index records it; None when the folder's guard refuses it (a link out, a secret,
    over the size limit) or it can't be read."""
    try:
        return sha256_of(read_file(folder, file, limit))
    except DocumentError:
        return None


def _size(file: Path) -> int:
    """A plain file's size; -1 for a link (whose target the guard must judge, by reading it) or what can't be seen."""
    try:
        return -1 if file.is_symlink() else file.stat().st_size
    except OSError:
        return -1
