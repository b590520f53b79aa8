"""Plain text: optional front matter as in Markdown, then one section of blank-line paragraphs."""

from __future__ import annotations

import re

from core.common.values import Section
from core.ingest.documents import Parsed, decode_text, paragraphs
from core.ingest.readers.markdown import split_front_matter

_H1 = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)


def read(data: bytes) -> Parsed:
    meta, body = split_front_matter(decode_text(data))
    found = paragraphs(body.split("\n"))
    heading = _H1.search(body)
    return Parsed(heading.group(1) if heading else None, meta, (Section((), "\n\n".join(found)),) if found else ())
