"""The documentation can't drift from the code: every variable, every command, every page, every link."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from bot.cli import build_parser
from tests.conftest import REPO

DOCS = REPO / "docs"
README = REPO / "README.md"
CONFIGURATION = DOCS / "configuration.md"
VARIABLE = re.compile(r"^(?:(?:VERBATIM|SLACK|TELEGRAM)_[A-Z0-9][A-Z0-9_]*|PORT)$")
# A page another branch writes (the container's); linked from the README before it lands, checked once it has.
PENDING = {DOCS / "container.md"}


def variables_read_by_the_code() -> dict[str, str]:
    """{variable: the first file naming it}: every string literal in core/ and bot/ that is a variable's whole name.

    The code reads its settings through `env.get(NAME)`, `read.text(NAME)`, `port_from(env, NAME, …)` and the like,
    always with the name as a literal, so the literals are the variables it reads.
    """
    found: dict[str, str] = {}
    for path in sorted([*(REPO / "core").rglob("*.py"), *(REPO / "bot").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and VARIABLE.match(node.value):
                found.setdefault(node.value, path.relative_to(REPO).as_posix())
    return found


def documented_variables() -> set[str]:
    """The variables in the first column of docs/configuration.md's tables."""
    names = set()
    for line in CONFIGURATION.read_text(encoding="utf-8").splitlines():
        first = re.match(r"^\| `([A-Z0-9_]+)` \|", line)
        if first:
            names.add(first.group(1))
    return names


def test_the_scan_finds_the_variables_it_must():
    read = variables_read_by_the_code()
    # One read in each way the code reads them: Settings, each surface's config, the shared port, the voice.
    assert {"VERBATIM_MIN_SIMILARITY", "SLACK_SIGNING_SECRET", "TELEGRAM_WEBHOOK_URL", "PORT"} <= set(read)
    assert {"VERBATIM_COMPANY_NAME", "VERBATIM_DIGEST_CHANNEL", "VERBATIM_DATABASE_WAIT"} <= set(read)
    assert len(read) >= 40


def test_every_variable_the_code_reads_is_documented():
    documented = documented_variables()
    missing = {name: where for name, where in variables_read_by_the_code().items() if name not in documented}
    assert not missing, f"read by the code but not in docs/configuration.md's tables: {missing}"


def test_every_documented_variable_is_read_by_the_code():
    stale = documented_variables() - set(variables_read_by_the_code())
    assert not stale, f"in docs/configuration.md but read nowhere in core/ or bot/: {sorted(stale)}"


def test_every_settings_variable_is_read_from_the_environment():
    """Settings reads each of its fields from one variable; a field added without one would go unconfigurable."""
    from core.common import settings

    source = Path(settings.__file__).read_text(encoding="utf-8")
    body = source[source.index("def from_env") : source.index("def _check_combinations")]
    fields = re.findall(r"^\s+(\w+)=", body, re.MULTILINE)
    assert set(fields) == set(settings.Settings.__dataclass_fields__), "from_env sets every Settings field"
    # question_languages_set and chosen share the variables of the fields they describe
    assert len(re.findall(r'"VERBATIM_[A-Z_]+"', body)) >= len(fields) - 2


def test_env_example_names_only_real_variables_and_sets_no_port():
    lines = (REPO / ".env.example").read_text(encoding="utf-8").splitlines()
    named = {m.group(1) for line in lines if (m := re.match(r"^#? ?([A-Z][A-Z0-9_]+)=", line))}
    read = set(variables_read_by_the_code())
    assert named - read == set(), "every variable .env.example names is one the code reads"
    assert {"SLACK_BOT_TOKEN", "TELEGRAM_BOT_TOKEN", "VERBATIM_ANSWERER", "VERBATIM_LLM_BASE_URL"} <= named
    active = {line.split("=", 1)[0]: line.split("=", 1)[1] for line in lines if re.match(r"^[A-Z]", line)}
    assert "PORT" not in active, "the Telegram webhook would take it: set per bot or by the platform"
    assert "VERBATIM_QUESTION_LANGUAGES" not in active, "set, it turns off reading the documents' languages"
    assert "VERBATIM_EMBEDDER" not in active, "set, it overrides the choice made from the documents' languages"
    assert not {"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"} & set(active), "placeholders: two Slack errors for Telegram"
    assert "Hollowmere" not in active.get("VERBATIM_COMPANY_NAME", ""), "the demo's company is nobody's default"


def test_every_command_is_in_the_commands_page():
    commands = DOCS.joinpath("commands.md").read_text(encoding="utf-8")
    parser = build_parser()
    names = next(a for a in parser._actions if a.dest == "command").choices
    assert names, "the parser has sub-commands"
    missing = [name for name in names if f"`verbatim {name}" not in commands]
    assert not missing, f"not in docs/commands.md: {missing}"


def test_the_readme_links_every_docs_page():
    readme = README.read_text(encoding="utf-8")
    linked = {(REPO / target).resolve() for target in re.findall(r"\]\((docs/[^)#\s]+\.md)", readme)}
    pages = {page.resolve() for page in DOCS.glob("*.md")}
    assert pages, "docs/ has pages"
    assert pages - linked == set(), f"docs pages the README doesn't link: {sorted(p.name for p in pages - linked)}"


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    anchors = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"^#{1,6} (.+)$", line)
        if heading:
            text = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower().replace("`", ""))
            anchors.add(text.replace(" ", "-"))
    return anchors


@pytest.mark.parametrize("page", [README, *sorted(DOCS.glob("*.md"))], ids=lambda p: p.name)
def test_every_relative_link_and_anchor_resolves(page):
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue  # https://, mailto:
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            if file not in PENDING:
                broken.append(target)
            continue
        if anchor and file.suffix == ".md" and anchor not in _anchors(file):
            broken.append(target)
    assert not broken, f"links in {page.name} that lead nowhere: {broken}"


def test_the_readme_stays_short_and_keeps_the_quick_start_commands():
    readme = README.read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200, "the README is read in ten minutes; the rest belongs in docs/"
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1] in readme, ".ci/run runs the README's test command exactly"
    assert "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/verbatim chat" in readme


# How docs/how-it-works.md quotes the answer policy's numbers, and which value each must be.
POLICY_QUOTED = [
    (r"`VERBATIM_MIN_SIMILARITY`, default ([\d.]+)", "min_similarity"),
    (r"reads the (\d+) best candidates", "judged"),
    (r"`VERBATIM_JUDGE_THRESHOLD` \(([\d.]+)", "judge_threshold"),
    (r"`VERBATIM_SECOND_LOOK_FLOOR` \(([\d.]+);", "second_look_floor"),
    (r"`VERBATIM_SECOND_LOOK_FLOOR` \([\d.]+; ([\d.]+) on the multilingual", "multilingual.second_look_floor"),
    (r"`VERBATIM_SECOND_LOOK_THRESHOLD` \(([\d.]+);", "second_look_threshold"),
    (r"`VERBATIM_SECOND_LOOK_THRESHOLD` \([\d.]+; ([\d.]+) on the multilingual", "multilingual.second_look_threshold"),
    (
        r"`VERBATIM_JUDGE_THRESHOLD` \([\d.]+, a probability; ([\d.]+) on the multilingual",
        "multilingual.judge_threshold",
    ),
    (r"rates at ([\d.]+) or more is\s+quoted", "sure"),
    (r"at least ([\d.]+) above similarity's first", "first_margin"),
    (r"shorter than (\d+) or longer than ([\d,]+) characters", "limits.min_quote limits.max_quote"),
]


@pytest.mark.parametrize(("pattern", "names"), POLICY_QUOTED, ids=[row[1] for row in POLICY_QUOTED])
def test_the_numbers_how_it_works_quotes_are_the_answer_policys(pattern, names):
    from core.answering.policy import DEFAULT, LIMITS, MULTILINGUAL

    owners = {"multilingual": MULTILINGUAL, "limits": LIMITS}
    text = re.sub(r"\s+", " ", (REPO / "docs" / "how-it-works.md").read_text(encoding="utf-8"))
    found = re.search(pattern.replace(r"\s+", " "), text)
    assert found, f"docs/how-it-works.md no longer says {pattern!r}: update this table with the page"
    for quoted, name in zip(found.groups(), names.split(), strict=True):
        owner, _, field = name.rpartition(".")
        assert float(quoted.replace(",", "")) == getattr(owners.get(owner, DEFAULT), field), name
