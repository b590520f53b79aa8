"""Socket Mode end to end: apps.connections.open hands out a local websocket that delivers an event."""

import json

import pytest

from bot.slack import build_app
from bot.slack.config import SlackSettings
from tests.bot.slack.conftest import WAIT, FakeSlack, event_body, mention, slack_api, socket_mode_server
from tests.fakes import FakeServer, Reply

pytest.importorskip("websockets.sync.server")


def test_socket_mode_receives_an_event_acks_it_and_answers(pipeline):
    envelope = {
        "envelope_id": "env-1",
        "type": "events_api",
        "accepts_response_payload": False,
        "retry_attempt": 0,
        "payload": json.loads(event_body(mention("how much is a walnut worktop?"))),
    }

    ws_server, ws_url, acks = socket_mode_server(envelope)

    def api(request):
        if request.path.endswith("apps.connections.open"):
            assert request.headers["authorization"] == "Bearer xapp-test"
            return Reply(200, {"ok": True, "url": ws_url})
        return slack_api(request)

    from slack_bolt.adapter.socket_mode import SocketModeHandler

    with FakeServer(api) as server:
        slack = FakeSlack(server)
        settings = SlackSettings("xoxb-test", "socket", app_token="xapp-test", api_url=server.url + "/api/")
        handler = SocketModeHandler(build_app(settings, pipeline), settings.app_token)
        try:
            handler.connect()
            assert acks.get(timeout=WAIT) == {"envelope_id": "env-1"}
            post = slack.wait_for("chat.postMessage")[0].body
            assert post["thread_ts"] == "1700000000.000100" and "520 EUR" in post["text"]
        finally:
            handler.close()
            ws_server.shutdown()
