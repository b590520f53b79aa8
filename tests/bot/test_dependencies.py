"""Every library `bot/` imports is one the project declares, not one that another's extra happens to bring."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _name(requirement: str) -> str:
    """A requirement's distribution name, normalised: "python-telegram-bot[webhooks]>=22" → python-telegram-bot."""
    return re.sub(r"[-_.]+", "-", re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0]).lower()


def imported_libraries(package: Path) -> set[str]:
    """The top-level modules a package's code imports, less the standard library and the project itself."""
    found = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"__future__", "bot", "core"}


def test_every_library_bot_imports_is_a_declared_dependency():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {_name(r) for r in project["dependencies"]}
    provided_by = packages_distributions()  # a module's name → the distributions that install it
    undeclared = {
        module: provided_by.get(module, [module])
        for module in imported_libraries(ROOT / "bot")
        if not declared & {_name(d) for d in provided_by.get(module, [module])}
    }
    assert not undeclared, f"imported by bot/ but not in [project] dependencies: {undeclared}"
