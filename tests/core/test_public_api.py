import ast
from pathlib import Path

import core

REPO = Path(core.__file__).resolve().parent.parent


def _imports(root: Path):
    """(file, module, names) for every `import` and `from … import` below root."""
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield path, alias.name, []
            elif isinstance(node, ast.ImportFrom) and node.module:
                yield path, node.module, [a.name for a in node.names]


def test_every_name_in_all_exists_once():
    for name in core.__all__:
        assert hasattr(core, name), name
    assert len(set(core.__all__)) == len(core.__all__)


def test_core_never_imports_bot_or_chat_libraries():
    for path, module, _ in _imports(REPO / "core"):
        assert not module.startswith(("bot", "slack", "telegram")), f"{path.name} imports {module}"


def test_all_imports_are_exported():
    """bot/ uses core only through `from core import …`, and only names in core.__all__."""
    for path, module, names in _imports(REPO / "bot"):
        if module == "core" or module.startswith("core."):
            where = path.relative_to(REPO)
            assert module == "core", f"{where} imports from {module}; use `from core import …`"
            missing = set(names) - set(core.__all__)
            assert not missing, f"{where} imports {sorted(missing)}, which core.__all__ does not export"


def test_the_refusal_heading_is_written_in_one_place_only():
    writers = [
        path.relative_to(REPO).as_posix()
        for folder in ("core", "bot")
        for path in (REPO / folder).rglob("*")
        if path.suffix in (".py", ".toml") and "Not in the knowledge base" in path.read_text(encoding="utf-8")
    ]
    assert writers == ["bot/presenter/catalogues/en.toml"]
