"""Reading knowledge documents: UTF-8 Markdown or text with optional front matter."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import DocumentError, KnowledgeError

SUFFIXES = (".md", ".markdown", ".txt")
AUDIENCES = ("public", "internal")
FRONT_MATTER_KEYS = ("title", "audience", "owner", "as_of", "source")
_H1 = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Document:
    """One knowledge document, decoded, with its front matter."""

    path: str  # relative to the knowledge folder, with forward slashes
    title: str
    audience: str
    body: str
    sha256: str
    size: int
    meta: dict[str, str] = field(default_factory=dict)

    @property
    def is_markdown(self) -> bool:
        return not self.path.endswith(".txt")


def find_files(folder: Path) -> list[Path]:
    """The documents below `folder`, in a stable order; hidden files are skipped."""
    if not folder.exists():
        raise KnowledgeError(f"The knowledge folder {folder} does not exist.")
    if not folder.is_dir():
        raise KnowledgeError(f"The knowledge folder {folder} is not a folder.")
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.suffix.lower() in SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse_document(rel_path: str, data: bytes) -> Document:
    """Decode and parse one file's bytes; raises DocumentError with the reason."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"not valid UTF-8 (byte {exc.start})") from exc
    if "\x00" in text:
        raise DocumentError("looks like a binary file (contains NUL bytes)")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    meta, body = _split_front_matter(text)
    audience = meta.get("audience", "internal").lower()
    if audience not in AUDIENCES:
        raise DocumentError(f"audience must be one of {', '.join(AUDIENCES)}, not {audience!r}")
    if not body.strip():
        raise DocumentError("the document has no text")
    title = meta.get("title") or _first_heading(body) or _title_from_name(rel_path)
    return Document(
        path=rel_path,
        title=title,
        audience=audience,
        body=body,
        sha256=sha256_of(data),
        size=len(data),
        meta=meta,
    )


def _split_front_matter(text: str) -> tuple[dict[str, str], str]:
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 3)
    while end != -1 and text[end + 4 : end + 5] not in ("\n", ""):
        end = text.find("\n---", end + 4)
    if end == -1:
        raise DocumentError("front matter starts with --- but is never closed by a --- line")
    meta: dict[str, str] = {}
    for number, line in enumerate(text[4:end].split("\n"), start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep or not key.strip():
            raise DocumentError(f"front matter line {number} is not 'key: value': {line.strip()!r}")
        meta[key.strip().lower()] = value.strip().strip("\"'")
    return meta, text[end + 5 :]


def _first_heading(body: str) -> str | None:
    match = _H1.search(body)
    return match.group(1) if match else None


def _title_from_name(rel_path: str) -> str:
    stem = Path(rel_path).stem.replace("-", " ").replace("_", " ").strip()
    return stem[:1].upper() + stem[1:] if stem else rel_path
