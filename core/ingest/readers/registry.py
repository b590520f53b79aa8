"""The table of readers by suffix, and `parse_document`: a file's bytes read by its reader, its metadata merged
(folder defaults < the file's own < its sidecar) and checked (`core.ingest.readers` re-exports them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from core.common.errors import DocumentError
from core.common.language import NAMES as LANGUAGE_NAMES
from core.common.language import detect_document
from core.common.values import Document
from core.ingest.documents import AUDIENCES, Parsed, sha256_of
from core.ingest.readers import markdown, pdf, plain, spreadsheet
from core.ingest.readers.sandbox import isolated

Reader = Callable[[bytes], Parsed]

READERS: dict[str, Reader] = {
    ".md": markdown.read,
    ".markdown": markdown.read,
    ".txt": plain.read,
    # Parsed in a child process with time and memory limits: PDFium is C; HTML can nest without end; Word and
    # Excel files are zip archives read by lxml.
    ".docx": isolated("docx", "read", "Word file"),
    ".pdf": pdf.read,
    ".html": isolated("html", "read", "HTML page"),
    ".htm": isolated("html", "read", "HTML page"),
    ".xlsx": isolated("spreadsheet", "read_xlsx", "Excel file"),
    ".csv": spreadsheet.read_csv,
}


def suffixes() -> tuple[str, ...]:
    return tuple(READERS)


def parse_document(
    rel_path: str,
    data: bytes,
    defaults: Mapping[str, str] | None = None,
    sidecar: Mapping[str, str] | None = None,
    meta_sha256: str = "",
    sha256: str = "",
) -> Document:
    """Read one file's bytes with the reader for its suffix; raises DocumentError with the reason.

    Metadata from outside the file: the sidecar wins over the file's own, which wins over folder defaults.
    """
    reader = READERS.get(Path(rel_path).suffix.lower())
    if reader is None:
        raise DocumentError(f"no reader for {Path(rel_path).suffix or 'files without a suffix'}")
    parsed = reader(data)
    defaults, sidecar = defaults or {}, sidecar or {}
    meta = {**defaults, **parsed.meta, **sidecar}
    audience = meta.get("audience", "internal").lower()
    if audience not in AUDIENCES:
        raise DocumentError(f"audience must be one of {', '.join(AUDIENCES)}, not {audience!r}")
    if not any(s.text.strip() for s in parsed.sections):
        raise DocumentError("the document has no text")
    title = sidecar.get("title") or parsed.meta.get("title") or parsed.title or defaults.get("title")
    language = meta.get("language", "").strip().lower()
    if language and language not in LANGUAGE_NAMES:
        raise DocumentError(f"language must be an ISO 639-1 code such as en or de, not {language!r}")
    return Document(
        path=rel_path,
        title=title or _title_from_name(rel_path),
        audience=audience,
        sections=parsed.sections,
        sha256=sha256 or sha256_of(data),  # the sync hashed the file already
        size=len(data),
        meta=meta,
        meta_sha256=meta_sha256,
        language=language or detect_document("\n\n".join(s.text for s in parsed.sections)) or "",
    )


def _title_from_name(rel_path: str) -> str:
    stem = Path(rel_path).stem.replace("-", " ").replace("_", " ").strip()
    return stem[:1].upper() + stem[1:] if stem else rel_path
