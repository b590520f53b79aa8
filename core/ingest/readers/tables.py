"""Tables as text: one line per row, `Header: value; Header: value`, so a row is read and quoted whole.

Every reader renders its tables through `rows_as_lines`; `core.common.text.split_sentences` recognises
the shape and never cuts a row, and the fragment packer never splits a line across fragments,
so a quote can't stitch one row's figure onto another row's label.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_SPACE = re.compile(r"\s+")


def _cell(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def rows_as_lines(rows: Sequence[Sequence[str]], header: bool = True) -> list[str]:
    """The table's rows as lines; with `header`, the first row names the cells of every other row.

    Empty cells are left out; a cell under an empty header stands alone. A table with only a header
    row, or without one, gives each row as its cells joined by "; ".
    """
    cleaned = [[_cell(c) for c in row] for row in rows]
    cleaned = [row for row in cleaned if any(row)]
    if not cleaned:
        return []
    if not header or len(cleaned) == 1:
        return ["; ".join(c for c in row if c) for row in cleaned]
    names, body = cleaned[0], cleaned[1:]
    lines = []
    for row in body:
        cells = []
        for i, value in enumerate(row):
            if not value:
                continue
            name = names[i] if i < len(names) else ""
            cells.append(f"{name}: {value}" if name and name != value else value)
        if cells:
            lines.append("; ".join(cells))
    return lines
