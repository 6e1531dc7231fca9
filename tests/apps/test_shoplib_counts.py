"""minishop's request histogram (http.server.request.duration) counts a 5xx whose caller hung up
before the answer was written: the screens read these counts, and a caller's timeout is exactly
when a fault's 5xx happen."""

from __future__ import annotations

import socket
import struct
import sys
import threading
import time
from pathlib import Path

import requests

SRC = Path(__file__).resolve().parents[2] / "apps" / "minishop" / "src"
sys.path.insert(0, str(SRC))

from shoplib.http import App, HTTPError  # noqa: E402
from shoplib.log import Logger  # noqa: E402
from shoplib.testing import running  # noqa: E402


def counted(addr: str, status: str) -> float:
    text = requests.get(f"http://{addr}/metrics", timeout=5).text
    total = 0.0
    for line in text.splitlines():
        if line.startswith("http_server_request_duration_seconds_count{") \
                and f'http_response_status_code="{status}"' in line and 'http_route="/slow"' in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def test_a_5xx_is_counted_when_the_caller_hung_up(tmp_path):
    app = App("t-svc", Logger("t-svc", stream=(tmp_path / "log").open("w")))
    answered = threading.Event()

    @app.route("GET", "/slow")
    def slow(_req: object) -> dict:
        time.sleep(0.5)  # past the caller's patience
        answered.set()
        raise HTTPError(503, "upstream timed out")

    with running(app) as addr:
        host, port = addr.split(":")
        for _ in range(3):
            answered.clear()
            s = socket.create_connection((host, int(port)))
            s.sendall(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
            time.sleep(0.1)
            # hang up with a reset, as a caller's timeout does: the server's write then fails
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
            assert answered.wait(5)
        deadline = time.time() + 5
        while counted(addr, "503") < 3 and time.time() < deadline:
            time.sleep(0.05)
        assert counted(addr, "503") == 3
        # and an answer that reaches its caller is counted once, as before
        assert requests.get(f"http://{addr}/slow", timeout=5).status_code == 503
        assert counted(addr, "503") == 4
