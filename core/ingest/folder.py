"""The knowledge folder: which files in it are documents, the metadata beside them (sidecars and
defaults files), and the one way a knowledge file is read (`read_file`): through the guard that refuses
anything leading outside the folder, anything that looks like a secret, and a file over the size limit.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections import Counter
from pathlib import Path
from typing import NamedTuple

from core.common.errors import DocumentError, KnowledgeError
from core.ingest.documents import parse_metadata
from core.ingest.readers import suffixes

log = logging.getLogger(__name__)


DEFAULT_MAX_DOCUMENT_BYTES = 10_000_000
SIDECAR_SUFFIX = ".meta.yml"  # `price-list.pdf.meta.yml` beside `price-list.pdf`


DEFAULTS_FILE = "defaults.meta.yml"  # in any folder: metadata for every document below it


class Listing(NamedTuple):
    files: list[Path]  # the documents a reader handles, in a stable order
    unreadable: dict[str, str]  # subfolders that can't be listed (`sub/` → why)
    skipped: list[str]  # visible files no reader handles (spreadsheets, images…), relative paths


def find_files(folder: Path) -> list[Path]:
    """The documents below `folder` that a reader handles, in a stable order; hidden files are skipped."""
    return list_folder(folder).files


SKIPPED_NAMES = 10  # the skipped files named in the summary; the rest are counted


def skipped_summary(skipped: list[str]) -> str:
    """ "3 files skipped (no reader for their type): .png 2, .pptx 1 (logo.png, slides.pptx, sub/photo.png)",
    the first SKIPPED_NAMES named and the rest counted ("…, and 4 more"); "" when none was."""
    if not skipped:
        return ""
    kinds = Counter(Path(rel).suffix.lower() or "(no extension)" for rel in skipped)
    listed = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items(), key=lambda item: (-item[1], item[0])))
    names = ", ".join(skipped[:SKIPPED_NAMES])
    if len(skipped) > SKIPPED_NAMES:
        names += f", and {len(skipped) - SKIPPED_NAMES} more"
    files = f"{len(skipped)} file{'s' if len(skipped) != 1 else ''}"
    return f"{files} skipped (no reader for their type): {listed} ({names})"


def list_folder(folder: Path) -> Listing:
    """`find_files`, the subfolders that can't be listed, and the files skipped for their type.

    A knowledge folder that can't be listed raises KnowledgeError: nothing may be removed
    from the index because a listing came back empty.
    """
    if not folder.exists():
        raise KnowledgeError(f"The knowledge folder {folder} does not exist.")
    if not folder.is_dir():
        raise KnowledgeError(f"The knowledge folder {folder} is not a folder.")
    known = suffixes()
    files: list[Path] = []
    unreadable: dict[str, str] = {}
    skipped: list[str] = []

    def failed(exc: OSError) -> None:
        where = Path(exc.filename) if exc.filename else folder
        reason = exc.strerror or str(exc)
        if where == folder:
            raise KnowledgeError(
                f"The knowledge folder {folder} can't be listed ({reason}); the index is left as it was."
            ) from exc
        rel = where.relative_to(folder).as_posix() + "/"
        log.warning("folder %s can't be listed: %s", rel, reason)
        unreadable[rel] = f"folder can't be listed ({reason}); its documents indexed before are kept"

    # os.walk, not rglob: rglob skips a folder it can't list without a word.
    for root, dirs, names in os.walk(folder, onerror=failed):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            path = Path(root, name)
            if name.startswith(".") or not path.is_file():
                continue
            if path.suffix.lower() in known:
                files.append(path)
            elif not (name.endswith(SIDECAR_SUFFIX) or name == DEFAULTS_FILE):  # metadata, not a document
                skipped.append(path.relative_to(folder).as_posix())
    return Listing(sorted(files), unreadable, sorted(skipped))


def read_file(folder: Path, file: Path, limit: int = DEFAULT_MAX_DOCUMENT_BYTES) -> bytes:
    """The bytes of a file in the knowledge folder, read through the folder's guard: DocumentError for a link
    out of the folder or a secret file (`refuse_outside`), a file over `limit` bytes (told before it is read),
    or one that can't be read. Every read of a knowledge file goes through here: a sync's, the language
    sampler's (core.retrieval.choosing), the guard's hashes (core.ingest.guard) and the metadata files'."""
    refuse_outside(folder, file)
    try:
        size = file.stat().st_size
        if size <= limit:
            with file.open("rb") as handle:
                data = handle.read(limit + 1)  # the file may have grown since
            size = len(data)
    except FileNotFoundError as exc:  # listed a moment ago: renamed or removed since
        raise DocumentError(VANISHED) from exc
    except OSError as exc:
        raise DocumentError(f"can't be read ({exc.strerror})") from exc
    if size > limit:
        raise DocumentError(
            f"is {size / 1e6:.1f} MB, over the {limit / 1e6:g} MB limit (VERBATIM_MAX_DOCUMENT_MB); "
            "split it or raise the limit"
        )
    return data


def outside_metadata(
    folder: Path, file: Path, limit: int = DEFAULT_MAX_DOCUMENT_BYTES
) -> tuple[dict[str, str], dict[str, str], str]:
    """Folder defaults (nearest folder wins), the file's sidecar, and a hash of the files they came from."""
    digest = hashlib.sha256()
    used = False

    def read(path: Path) -> dict[str, str]:
        nonlocal used
        if not path.exists() and not path.is_symlink():
            return {}
        try:  # a sidecar linked to ../.env must not be read (nor quoted in an error)
            data = read_file(folder, path, limit)
        except DocumentError as exc:
            if not os.path.lexists(path):  # gone since it was seen: as if it had never been there
                return {}
            raise DocumentError(f"its metadata file {path.name}: {exc}") from exc
        used = True
        digest.update(path.name.encode() + b"\0" + data + b"\0")
        try:
            return parse_metadata(data.decode("utf-8-sig"), what=path.name)
        except UnicodeDecodeError as exc:
            raise DocumentError(f"its metadata file {path.name} is not valid UTF-8") from exc

    defaults: dict[str, str] = {}
    rel_parts = file.parent.relative_to(folder).parts
    for depth in range(len(rel_parts) + 1):
        defaults.update(read(folder.joinpath(*rel_parts[:depth], DEFAULTS_FILE)))
    sidecar = read(file.with_name(file.name + SIDECAR_SUFFIX))
    return defaults, sidecar, digest.hexdigest() if used else ""


VANISHED = "it was removed or renamed while the sync was reading it; the next sync takes the change in"

# Files that hold secrets, never indexed even inside the knowledge folder (their names, as the link's target has them).
_SECRET_NAMES = re.compile(r"^(\.env(\..*)?|.*\.(pem|key|p12|pfx)|id_(rsa|dsa|ecdsa|ed25519)(\..*)?|\.netrc|\.pgpass)$")


def refuse_outside(folder: Path, file: Path) -> None:
    """DocumentError for a file that is a link out of the knowledge folder, or a well-known secret file.

    A link to `../.env` would index the bot's own keys, quote them and send them to a model provider.
    """
    try:
        target = file.resolve(strict=True)
        root = folder.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        if not os.path.lexists(file):  # listed a moment ago: it went while the sync was under way
            raise DocumentError(VANISHED) from exc
        raise DocumentError("it is a link that leads nowhere; not read") from exc  # dangling, or a loop
    if not target.is_relative_to(root):
        raise DocumentError("it is a link to a file outside the knowledge folder; not read")
    if _SECRET_NAMES.match(target.name.lower()) or _SECRET_NAMES.match(file.name.lower()):
        raise DocumentError(f"{target.name} looks like a file of secrets (keys, passwords); not read")
