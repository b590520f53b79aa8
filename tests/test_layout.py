"""The house's shape: core/ is one package per pipeline stage, each importing only the stages below it (as
its `__init__` says), and no module or function grows past the size limits (scripts/sizes.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import load_file

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "core"
STAGES = sorted(p.name for p in CORE.iterdir() if (p / "__init__.py").is_file())


def allowed(stage: str) -> set[str]:
    """The stages a package's docstring says it may import."""
    docstring = ast.get_docstring(ast.parse((CORE / stage / "__init__.py").read_text(encoding="utf-8"))) or ""
    line = re.search(r"^May import: (.*)$", docstring, re.MULTILINE)
    assert line, f"core/{stage}/__init__.py doesn't say what it may import"
    if line.group(1).startswith("nothing"):
        return set()
    return {name.strip(" .") for name in line.group(1).split(",")}


def imported_stages(path: Path) -> set[tuple[str, int]]:
    """(stage, line) for every import of core.<stage>, TYPE_CHECKING and function-level ones included."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module != "core":
                names = [node.module]
            else:  # `from core import Pipeline` is the public API; `from core import judge` a stage's module
                names = [f"core.{a.name}" if (CORE / a.name).is_dir() else "core" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "core":
                found.add((parts[1] if len(parts) > 1 else "", node.lineno))
    return found


def test_the_top_of_core_is_the_stages_and_the_public_api():
    modules = sorted(p.name for p in CORE.glob("*.py"))
    assert modules == ["__init__.py"], f"modules outside a stage: {modules}"
    assert set(STAGES) == {"common", "vectors", "store", "ingest", "retrieval", "answering", "measuring"}


@pytest.mark.parametrize("stage", STAGES)
def test_a_stage_imports_only_the_stages_its_docstring_allows(stage):
    may = allowed(stage) | {stage}
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports core.{target or '(the public API)'}"
        for path in sorted((CORE / stage).rglob("*.py"))
        for target, line in sorted(imported_stages(path))
        if target not in may
    ]
    assert not wrong, "\n".join(wrong)


def test_the_floors_have_no_cycle():
    # Each stage may import only stages that are themselves allowed fewer: a strict order.
    for stage in STAGES:
        for below in allowed(stage):
            assert stage not in allowed(below), f"{stage} and {below} may import each other"


def test_the_adapters_use_only_the_public_api():
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports core.{target}"
        for path in sorted((ROOT / "bot").rglob("*.py"))
        for target, line in sorted(imported_stages(path))
        if target
    ]
    assert not wrong, "\n".join(wrong)


def test_no_module_or_function_is_over_the_size_limits():
    sizes = load_file(ROOT / "scripts" / "sizes.py")
    big_modules = [f"{name}: {lines} lines" for lines, name in sizes.modules() if lines > sizes.MODULE_LINES]
    big_functions = [f"{name}: {lines} lines" for lines, name in sizes.functions() if lines > sizes.FUNCTION_LINES]
    assert not big_modules + big_functions, "\n".join(big_modules + big_functions)


def _numeric(node: ast.expr) -> bool:
    """A number written in code: a literal, a sum or power of literals, or Decimal/int/float of one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return _numeric(node.operand)
    if isinstance(node, ast.BinOp):
        return _numeric(node.left) and _numeric(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("Decimal", "int", "float"):
        return all(_numeric(a) for a in node.args)
    return False


def _table_of_numbers(node: ast.expr) -> bool:
    if isinstance(node, ast.Dict):
        return bool(node.values) and all(_numeric(v) for v in node.values)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return bool(node.elts) and all(_numeric(e) for e in node.elts)
    return False


def test_every_number_that_shapes_an_answer_is_in_the_answer_policy():
    # A threshold or count defined beside the code that reads it is one more place a decision hides: it goes in
    # core/answering/policy.py, with its meaning. Tables of data (number words, operator precedence) are private.
    found = []
    for path in sorted((CORE / "answering").glob("*.py")):
        if path.name == "policy.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        # The module's own names and its classes' constants (one level down; a dataclass field's default, written
        # with its annotation, is a record's value, not a decision).
        constants = [n for c in tree.body if isinstance(c, ast.ClassDef) for n in c.body if isinstance(n, ast.Assign)]
        for node in [*tree.body, *constants]:
            if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            public = any(not name.startswith("_") for name in names)
            if _numeric(node.value) or (public and _table_of_numbers(node.value)):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {', '.join(names)}")
    assert not found, f"numbers outside core/answering/policy.py: {found}"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The core modules `path` imports (TYPE_CHECKING and function-level ones included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module and node.module.startswith("core"):
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)  # `from core.x import module`
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("core"))
    return found


def test_no_import_cycle_inside_a_package():
    # Between stages the floors keep arrows one way; inside a stage, two modules that import each other (even for
    # types) are one module in two files, or a third waiting to be found. A package's __init__ re-exporting its
    # modules is not a cycle.
    modules = {_module_name(p): p for p in CORE.rglob("*.py")}
    graph = {
        name: {m for m in _imports(path) if m in modules and m != name and not name.startswith(m + ".")}
        for name, path in modules.items()
        if path.name != "__init__.py"
    }
    cycles = []
    for start, targets in graph.items():
        package = start.rsplit(".", 1)[0]
        seen: set[str] = set()
        stack = [(t, [start, t]) for t in targets if t.rsplit(".", 1)[0] == package]
        while stack:
            node, trail = stack.pop()
            if node == start:
                cycles.append(" -> ".join(trail))
                continue
            if node in seen:
                continue
            seen.add(node)
            stack.extend((t, [*trail, t]) for t in graph.get(node, ()) if t.rsplit(".", 1)[0] == package)
    assert not cycles, f"import cycles inside a package: {sorted(set(cycles))[:5]}"


def test_a_package_door_only_opens():
    # A package's __init__ says what the package owns and re-exports its modules' names: logic there is a room
    # behind the door, which the modules beside it can only reach by importing the package back.
    rooms = []
    for path in sorted(CORE.rglob("__init__.py")):
        for i, node in enumerate(ast.parse(path.read_text(encoding="utf-8")).body):
            docstring = i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            exports = isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["__all__"]
            if not (docstring or exports or isinstance(node, ast.Import | ast.ImportFrom)):
                rooms.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not rooms, f"more than re-exports in a package's __init__: {rooms}"


def test_no_module_imports_names_from_its_own_package_door():
    # `from core.store import Logged` inside core/store/runlog.py goes through the __init__ that imports runlog's
    # neighbours: the loop the door's re-exports would hide from the cycle check above. Inside a package, a module
    # imports its sibling modules (or a sibling module itself: `from core.ingest.readers import html_hidden`).
    found = []
    for path in sorted(CORE.rglob("*.py")):
        if path.name == "__init__.py":
            continue
        package = _module_name(path).rsplit(".", 1)[0]
        folder = path.parent
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module == package:
                names = [a.name for a in node.names]
                through = [n for n in names if not (folder / f"{n}.py").is_file() and not (folder / n).is_dir()]
                if through:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {', '.join(through)}")
    assert not found, f"names imported through the module's own package: {found}"
