"""The container's contract (Dockerfile, compose.yaml, .ci/run), and that CI's answer check catches a quote that is
not in its document. The image itself is built and run by .ci/container (docs/container.md), not here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import load_file

ROOT = Path(__file__).resolve().parent.parent


def _read(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def test_the_dockerfile_keeps_its_base_user_and_entry_point():
    dockerfile = _read("Dockerfile")
    assert re.search(r"^ARG BASE_IMAGE=python:3\.11-slim$", dockerfile, re.MULTILINE)
    assert re.search(r"^ARG PIP_CERT=$", dockerfile, re.MULTILINE)
    users = re.findall(r"^USER (\S+)$", dockerfile, re.MULTILINE)
    assert users and users[-1] not in ("root", "0")
    assert 'ENTRYPOINT ["verbatim"]' in dockerfile
    assert dockerfile.rstrip().endswith('CMD ["serve", "slack"]')
    assert "VERBATIM_KNOWLEDGE_DIR=/app/knowledge" in dockerfile


def test_compose_takes_the_db_image_as_a_variable_and_mounts_the_documents_read_only():
    compose = _read("compose.yaml")
    assert "image: ${VERBATIM_DB_IMAGE:-pgvector/pgvector:pg16}" in compose
    assert "- ./knowledge:/app/knowledge:ro" in compose
    assert compose.count("@db:5432/verbatim") == 3  # the anchor and both replicas: one store


def test_ci_runs_the_container_check_before_the_readmes_test_command():
    lines = _read(".ci/run").splitlines()
    assert "bash .ci/container" in lines
    assert lines[-1].endswith(".venv/bin/python -m pytest")
    assert lines.index("bash .ci/container") < len(lines) - 1


@pytest.fixture
def checks():
    return load_file(ROOT / ".ci" / "container_checks.py")


def _answer(tmp_path: Path, quote: str) -> str:
    answer = {
        "kind": "answered",
        "reason": None,
        "statements": [{"text": quote, "quotes": [{"text": quote, "document": "prices.md", "caption": "Prices"}]}],
    }
    (tmp_path / "prices.md").write_text("# Prices\n\nZone B, 15 to 50 km: 85 EUR.\n", encoding="utf-8")
    path = tmp_path / "answer.json"
    path.write_text(json.dumps(answer), encoding="utf-8")
    return str(path)


def test_the_answer_check_passes_a_quote_from_the_document(checks, tmp_path, capsys):
    checks.quotes(_answer(tmp_path, "Zone B, 15 to 50 km: 85 EUR."), str(tmp_path), "85 EUR")
    assert "quoted: Zone B, 15 to 50 km: 85 EUR." in capsys.readouterr().out


def test_the_answer_check_fails_a_quote_the_document_does_not_hold(checks, tmp_path):
    with pytest.raises(SystemExit, match=r"is not in prices\.md word for word"):
        checks.quotes(_answer(tmp_path, "Zone B, 15 to 50 km: 58 EUR."), str(tmp_path), "58 EUR")
