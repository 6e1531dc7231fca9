"""The node agent's network pieces in a network namespace of the test's own (no cluster needed):
holdq.py really holds each packet for the delay, and clearing the agent's chain leaves the
namespace with no iptables table at all, as a new pod's is."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from faultkit.platforms.kubernetes.agent.payload import nodeagent

PAYLOAD = Path(nodeagent.__file__).resolve().parent
SERVER = """
import socket, threading, time, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', 9999)); s.listen()
def serve():
    while True:
        c, _ = s.accept(); c.sendall(c.recv(10)); c.close()
threading.Thread(target=serve, daemon=True).start()
times = []
for _ in range(4):
    t = time.monotonic(); c = socket.create_connection(('127.0.0.1', 9999)); c.sendall(b'x'); c.recv(10); c.close()
    times.append(time.monotonic() - t)
print(sorted(times)[1])
"""


@pytest.fixture
def netns() -> Iterator[str]:
    if os.geteuid() != 0:
        pytest.fail("network namespaces need root (the kubernetes tests run as root, as the cluster does)")
    name = f"fk-agent-{uuid.uuid4().hex[:6]}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
    yield f"/run/netns/{name}"
    subprocess.run(["ip", "netns", "del", name], check=True)


def _in(netns: str, *argv: str) -> str:
    return subprocess.run(["nsenter", f"--net={netns}", *argv], capture_output=True, text=True, check=True).stdout


def test_the_holder_delays_each_packet_and_clearing_leaves_no_table(netns: str) -> None:
    plain = float(_in(netns, sys.executable, "-c", SERVER))
    holder = subprocess.Popen(["nsenter", f"--net={netns}", sys.executable, str(PAYLOAD / "holdq.py"), "4242", "300"])
    try:
        deadline = time.monotonic() + 10
        while Path(f"/proc/{holder.pid}/comm").read_text().strip() != "holdq-bound":
            assert time.monotonic() < deadline and holder.poll() is None, "holdq.py never bound its queue"
            time.sleep(0.05)
        chain = nodeagent.chain_of("0123456789")
        _in(netns, "iptables", "-w", "-N", chain)
        _in(netns, "iptables", "-w", "-A", chain, "-p", "tcp", "-m", "multiport", "--dports", "9999", "-j", "NFQUEUE",
            "--queue-num", "4242", "--queue-bypass")
        _in(netns, "iptables", "-w", "-I", "INPUT", "1", "-j", chain)
        held = float(_in(netns, sys.executable, "-c", SERVER))
        # the SYN and the request each wait 300 ms on their way in
        assert held - plain > 0.5, (plain, held)
        nodeagent.net_clear(netns, chain)
    finally:
        holder.terminate()
        holder.wait(10)
    assert holder.returncode == 0  # SIGTERM: every held packet let through, a clean exit
    assert _in(netns, "iptables-save").strip() == ""
    assert float(_in(netns, sys.executable, "-c", SERVER)) < plain + 0.2
