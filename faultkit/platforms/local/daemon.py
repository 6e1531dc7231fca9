"""The supervisor as a detached process: `python -m faultkit.platforms.local.daemon`.

Started by `faultkit up` (platform.py), it holds a lock on the state folder (one supervisor per
folder), serves the supervisor's API on 127.0.0.1 with a fresh token (control.py), writes the
address, pid and token to state_dir/local/supervisor.json, deploys the app in a thread and
stops everything on SIGTERM, SIGINT, SIGHUP or the API's `shutdown`.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import secrets
import signal
import sys
import threading
import time
from pathlib import Path

from faultkit.platforms.local.control import serve
from faultkit.platforms.local.state import DAEMON_MODULE, LocalState
from faultkit.platforms.local.supervisor import Supervisor
from faultkit.workspace import Workspace

LOCKED_EXIT = 3  # another supervisor holds the state folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=DAEMON_MODULE)
    parser.add_argument("--root", required=True)
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--replicas", type=int, default=0)
    args = parser.parse_args(argv)
    ws = Workspace(root=Path(args.root), state_dir=Path(args.state_dir))
    state = LocalState(ws.state_dir)
    state.base.mkdir(parents=True, exist_ok=True)
    lock = open(state.base / "supervisor.lock", "w")  # noqa: SIM115 - held for the process lifetime
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print("another supervisor holds this state folder", file=sys.stderr)
        return LOCKED_EXIT
    sup = Supervisor(ws, args.app, args.replicas, dict(os.environ))
    token = secrets.token_hex(16)
    server = serve(sup, token)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: sup.stopping.set())
    state.write_info(
        {
            "pid": os.getpid(),
            "port": server.server_address[1],
            "token": token,
            "app": args.app,
            "started": time.time(),
        }
    )
    threading.Thread(target=sup.deploy, daemon=True, name="deploy").start()
    while not sup.stopping.wait(0.5):
        pass
    sup.stop_everything()
    server.shutdown()
    state.remove_info(os.getpid())
    return 0


if __name__ == "__main__":
    sys.exit(main())
