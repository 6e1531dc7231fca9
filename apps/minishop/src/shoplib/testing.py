"""Helpers for service unit tests: run an App in-process on an ephemeral port."""

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from shoplib.http import App


@contextmanager
def running(app: App) -> Iterator[str]:
    """Serve `app` on 127.0.0.1:0 in a thread; yield its "host:port" address."""
    server = app.make_server("127.0.0.1", 0)
    # A short poll interval makes shutdown (and thus each test) fast.
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
