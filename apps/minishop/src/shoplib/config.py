"""Environment configuration shared by all services."""

import os
import sys

from shoplib.log import Logger


def listen_host() -> str:
    return os.environ.get("LISTEN_HOST", "").strip() or "127.0.0.1"


def require_port(log: Logger) -> int:
    """Return PORT from env; exit 1 with an ERROR log if missing or invalid.

    There is deliberately no default: a misconfigured deployment should fail
    loudly at start instead of listening on a port nobody routes to.
    """
    raw = os.environ.get("PORT", "").strip()
    if not raw:
        log.error("PORT is not set")
        sys.exit(1)
    try:
        port = int(raw)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        log.error(f"PORT is invalid: {raw!r}")
        sys.exit(1)
    return port
