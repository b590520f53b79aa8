import ast
from pathlib import Path

import core


def test_every_name_in_all_exists_once():
    for name in core.__all__:
        assert hasattr(core, name), name
    assert len(set(core.__all__)) == len(core.__all__)


def test_core_never_imports_bot_or_chat_libraries():
    root = Path(core.__file__).parent
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not name.startswith(("bot", "slack", "telegram")), f"{path.name} imports {name}"
