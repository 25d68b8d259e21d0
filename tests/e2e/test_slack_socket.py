"""`deskmate slack --socket` as an operator runs it (a real process), against Slack's Socket Mode on 127.0.0.1:
the Web API's apps.connections.open hands out the address of a local websocket server, which pushes an event;
deskmate acknowledges the envelope and answers through chat.postMessage."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest

from tests.conftest import FIXTURE_KB
from tests.e2e.deskmate_process import DESKMATE, REPO, deskmate_env
from tests.e2e.slack_server import SlackApiServer, SocketModeServer

pytestmark = pytest.mark.slow

TOKEN = "xoxb-test-0000-deskmate"
APP_TOKEN = "xapp-1-test-0000-deskmate"
SECRET = "8f14e45fceea167a5a36dedd4bea2543"


def _until(condition, process: subprocess.Popen, log_path, what: str) -> None:
    """Until `condition` holds; fails at once, with the log, when the process exits first."""
    deadline = time.monotonic() + 300
    while not condition():
        if process.poll() is not None:
            raise AssertionError(
                f"deskmate slack --socket exited with {process.returncode} before {what}:\n"
                f"{log_path.read_text(errors='replace')[-3000:]}"
            )
        assert time.monotonic() < deadline, f"no {what}:\n{log_path.read_text(errors='replace')[-3000:]}"
        time.sleep(0.2)


def test_socket_mode_acknowledges_a_pushed_event_and_answers_it_in_the_thread(tmp_path):
    with (
        SocketModeServer() as socket,
        SlackApiServer(
            token=TOKEN, emails={"UBOB": "bob@example.test"}, app_token=APP_TOKEN, socket_url=socket.url
        ) as slack,
    ):
        env = deskmate_env(
            tmp_path / "data",
            DESKMATE_KB_DIR=str(FIXTURE_KB),
            DESKMATE_SLACK_BOT_TOKEN=TOKEN,
            DESKMATE_SLACK_SIGNING_SECRET=SECRET,
            DESKMATE_SLACK_APP_TOKEN=APP_TOKEN,
            DESKMATE_SLACK_API_URL=slack.url,
        )
        log_path = tmp_path / "slack-socket.log"
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                DESKMATE + ["slack", "--socket"], env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT
            )
        try:
            _until(lambda: socket.connections >= 1, process, log_path, "websocket connection")
            assert slack.posts("apps.connections.open"), "the websocket address came from apps.connections.open"
            envelope = socket.push_event(
                {
                    "type": "message",
                    "user": "UBOB",
                    "text": "how do I connect to the vpn",
                    "channel": "DBOB",
                    "channel_type": "im",
                    "ts": "1700000100.000100",
                },
                event_id="EvSocket1",
            )
            _until(lambda: any(a["envelope_id"] == envelope for a in socket.acks), process, log_path, "ack")
            _until(
                lambda: any(p.get("thread_ts") == "1700000100.000100" for p in slack.posts()),
                process,
                log_path,
                "answer",
            )
            [answer] = [p for p in slack.posts() if p.get("thread_ts") == "1700000100.000100"]
            assert answer["channel"] == "DBOB" and answer["text"] and answer.get("blocks")
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
