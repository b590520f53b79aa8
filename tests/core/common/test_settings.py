"""Settings from the environment (core/common/settings.py): every variable is read into its field, and a bad value
or combination stops start-up in one sentence."""

from dataclasses import fields
from pathlib import Path

import pytest

from core.common.errors import ConfigError
from core.common.settings import Settings, from_env

REMOTE = {"VERBATIM_EMBEDDING_BASE_URL": "http://127.0.0.1:9/v1", "VERBATIM_EMBEDDING_MODEL": "m"}
LLM = {"VERBATIM_LLM_BASE_URL": "http://127.0.0.1:9/v1", "VERBATIM_LLM_MODEL": "m"}

# Each variable, a value that is not its default, and what the field then holds (with whatever the value
# needs beside it to be a valid combination).
READ = [
    ("VERBATIM_KNOWLEDGE_DIR", "docs", "knowledge_dir", Path("docs"), {}),
    ("VERBATIM_DATA_DIR", "state", "data_dir", Path("state"), {}),
    ("VERBATIM_EMBEDDER", "remote", "embedder", "remote", REMOTE),
    ("VERBATIM_EMBEDDING_BASE_URL", "https://e.example/v1", "embedding_base_url", "https://e.example/v1", {}),
    ("VERBATIM_EMBEDDING_MODEL", "e5", "embedding_model", "e5", {}),
    ("VERBATIM_EMBEDDING_API_KEY", "k1", "embedding_api_key", "k1", {}),
    ("VERBATIM_MIN_SIMILARITY", "0.3", "min_similarity", 0.3, {}),
    ("VERBATIM_FOUND_THRESHOLD", "0.7", "found_threshold", 0.7, {}),
    ("VERBATIM_JUDGE", "off", "judge", False, {}),
    ("VERBATIM_JUDGE_THRESHOLD", "0.45", "judge_threshold", 0.45, {}),
    ("VERBATIM_SECOND_LOOK_FLOOR", "0.3", "second_look_floor", 0.3, {}),
    ("VERBATIM_SECOND_LOOK_THRESHOLD", "0.95", "second_look_threshold", 0.95, {}),
    ("VERBATIM_LLM_JUDGE", "on", "llm_judge", True, {}),
    ("VERBATIM_ANSWERER", "llm", "answerer", "llm", LLM),
    ("VERBATIM_LLM_BASE_URL", "https://l.example/v1", "llm_base_url", "https://l.example/v1", {}),
    ("VERBATIM_LLM_MODEL", "qwen", "llm_model", "qwen", {}),
    ("VERBATIM_LLM_API_KEY", "k2", "llm_api_key", "k2", {}),
    ("VERBATIM_LLM_TIMEOUT", "12", "llm_timeout", 12.0, {}),
    ("VERBATIM_LLM_DEADLINE", "20", "llm_deadline", 20.0, {}),
    ("VERBATIM_RESYNC_SECONDS", "5", "resync_seconds", 5.0, {}),
    ("VERBATIM_QUESTION_LANGUAGES", "de, en", "question_languages", ("de", "en"), {}),
    ("VERBATIM_QUESTION_LANGUAGES", "en", "question_languages_set", True, {}),
    ("VERBATIM_EMBEDDER", "local", "embedder_set", True, {}),
    ("VERBATIM_MAX_DOCUMENT_MB", "2.5", "max_document_mb", 2.5, {}),
    ("VERBATIM_REVIEW_DAYS", "90", "review_days", 90, {}),
    ("VERBATIM_DATABASE_URL", "postgresql://u@h/db", "database_url", "postgresql://u@h/db", {}),
    ("VERBATIM_DATABASE_WAIT", "3", "database_wait", 3.0, {}),
]


@pytest.mark.parametrize(("name", "raw", "field", "value", "beside"), READ, ids=[row[2] for row in READ])
def test_each_variable_is_read_into_its_field(name, raw, field, value, beside):
    assert getattr(from_env({}), field) != value, "the test value must differ from the default"
    assert getattr(from_env({**beside, name: raw}), field) == value


def test_every_field_has_a_variable():
    # A field added without a variable (or a variable dropped) fails here, not in production.
    assert {row[2] for row in READ} == {f.name for f in fields(Settings)}


def test_defaults_with_nothing_set():
    assert from_env({}) == Settings()


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"VERBATIM_MIN_SIMILARITY": "high"}, "VERBATIM_MIN_SIMILARITY must be a number, not 'high'"),
        ({"VERBATIM_FOUND_THRESHOLD": "9"}, "VERBATIM_FOUND_THRESHOLD must be between -1.0 and 3.0, not 9"),
        ({"VERBATIM_JUDGE": "maybe"}, "VERBATIM_JUDGE must be one of on, off, not 'maybe'"),
        ({"VERBATIM_REVIEW_DAYS": "-3"}, "VERBATIM_REVIEW_DAYS must be a whole number of days"),
        ({"VERBATIM_QUESTION_LANGUAGES": "xx"}, "VERBATIM_QUESTION_LANGUAGES must be 'any' or ISO codes"),
        ({"VERBATIM_EMBEDDER": "remote"}, "VERBATIM_EMBEDDING_BASE_URL and VERBATIM_EMBEDDING_MODEL"),
        ({"VERBATIM_ANSWERER": "llm"}, "VERBATIM_LLM_BASE_URL and VERBATIM_LLM_MODEL"),
        ({"VERBATIM_DATABASE_URL": "mysql://h/db"}, "VERBATIM_DATABASE_URL must start with postgresql://"),
        ({"VERBATIM_LLM_BASE_URL": "ftp://h"}, "VERBATIM_LLM_BASE_URL must start with http:// or https://"),
    ],
)
def test_a_bad_value_or_combination_stops_start_up_in_one_sentence(env, message):
    with pytest.raises(ConfigError) as caught:
        from_env(env)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_remote_embedder_accepts_questions_in_any_language_by_default():
    assert from_env({"VERBATIM_EMBEDDER": "remote", **REMOTE}).question_languages == ()
    assert from_env({"VERBATIM_QUESTION_LANGUAGES": "any"}).question_languages == ()


def test_keys_never_reach_repr():
    settings = from_env({"VERBATIM_LLM_API_KEY": "sk-secret", "VERBATIM_DATABASE_URL": "postgresql://u:pw@h/db"})
    assert "sk-secret" not in repr(settings) and "pw@" not in repr(settings)
