"""Pipelines on the demo knowledge base that the core tests share: extractive, and LLM against a fake server."""

import pytest

from core.answering.llm import LLMAnswerer
from core.answering.pipeline import Pipeline
from core.common.questions import SCOPES
from core.retrieval.knowledge import KnowledgeBase

PUBLIC, STAFF = SCOPES["public"], SCOPES["internal"]
COMPOUND = (
    "I want a 3 m oak worktop carried to the 3rd floor: what does the worktop cost, "
    "how heavy is it, and what is the carrying fee?"
)
# Generous: the fake server answers in milliseconds, and a loaded machine must not turn a slow reply
# into a retry. The hanging-server test brings its own short timeout.
LLM_TIMEOUT = 10.0


@pytest.fixture
def knowledge(settings, local_embedder):
    kb = KnowledgeBase(settings, local_embedder)
    kb.sync()
    return kb


@pytest.fixture
def extractive(settings, knowledge):
    return Pipeline(settings, knowledge)


@pytest.fixture
def llm(settings, knowledge, fake_server):
    answerer = LLMAnswerer(
        fake_server.url + "/v1", "test-model", api_key="sk-test-secret", timeout=LLM_TIMEOUT, base_delay=0.01
    )
    return Pipeline(settings, knowledge, answerer)


def quotes_of(answer):
    return [q for s in answer.statements for q in s.quotes]
