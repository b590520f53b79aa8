"""Settings from the environment (core/settings.py): a bad combination stops start-up in one sentence."""

import pytest

from core.errors import ConfigError
from core.settings import from_env


def test_choosing_llm_without_url_or_model_stops_start_up():
    with pytest.raises(ConfigError, match="VERBATIM_LLM_BASE_URL and VERBATIM_LLM_MODEL"):
        from_env({"VERBATIM_ANSWERER": "llm"})
