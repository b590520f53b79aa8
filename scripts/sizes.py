"""The largest modules and functions in core/ and bot/: the house's size limits, printed.

    python scripts/sizes.py          # the ten largest of each, and what is over the limits

A module over MODULE_LINES or a function over FUNCTION_LINES is a sign that it does several things;
tests/test_layout.py keeps both lists empty.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "bot")
MODULE_LINES = 400
FUNCTION_LINES = 60


def modules() -> list[tuple[int, str]]:
    """(lines, path) for every module, largest first."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found.append((len(path.read_text(encoding="utf-8").splitlines()), str(path.relative_to(ROOT))))
    return sorted(found, reverse=True)


def functions() -> list[tuple[int, str]]:
    """(lines, path:qualified name) for every function and method, largest first."""
    found = []
    for _, name in modules():
        tree = ast.parse((ROOT / name).read_text(encoding="utf-8"))
        found.extend(_walk(tree, name, ""))
    return sorted(found, reverse=True)


def _walk(node: ast.AST, path: str, prefix: str) -> list[tuple[int, str]]:
    found = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            qualified = f"{prefix}{child.name}"
            if not isinstance(child, ast.ClassDef):
                found.append((child.end_lineno - child.lineno + 1, f"{path}:{qualified}"))  # type: ignore[operator]
            found.extend(_walk(child, path, qualified + "."))
    return found


def main() -> int:
    for title, rows, limit in (("modules", modules(), MODULE_LINES), ("functions", functions(), FUNCTION_LINES)):
        print(f"largest {title} (limit {limit} lines):")
        for lines, name in rows[:10]:
            print(f"  {lines:5}  {name}{'  OVER' if lines > limit else ''}")
        over = [name for lines, name in rows if lines > limit]
        print(f"  {len(over)} over the limit\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
