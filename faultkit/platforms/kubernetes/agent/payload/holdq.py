"""Hold every packet of one netfilter queue for a fixed time, then let it through: a packet delay
without tc netem (kernels built without sch_netem still have NFQUEUE).

Usage (in the target pod's network namespace): holdq.py QUEUE_NUM DELAY_MS

It speaks nfnetlink_queue over a raw netlink socket (Python's standard library only; the agent image
has no libnetfilter_queue): bind the queue, copy packet metadata only, and answer each packet with
an ACCEPT verdict DELAY_MS after it arrived. Packets leave in arrival order, so one batch verdict
(every id up to the newest due one) releases them. On SIGTERM every held packet is let through at
once. Once bound, the process renames itself `holdq-bound`, which the agent waits for before it adds
the rule that sends packets here (the rule also has --queue-bypass: no holder, no hold).
"""

from __future__ import annotations

import collections
import ctypes
import os
import select
import signal
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
SOL_NETLINK, NETLINK_NO_ENOBUFS = 270, 5
NFNL_SUBSYS_QUEUE = 3
MSG_PACKET, MSG_CONFIG, MSG_VERDICT_BATCH = 0, 2, 3
CFG_CMD, CFG_PARAMS, CFG_QUEUE_MAXLEN = 1, 2, 3
CMD_BIND = 1
COPY_META = 1
PACKET_HDR, VERDICT_HDR = 1, 2
NF_ACCEPT = 1
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
PR_SET_NAME = 15


def attr(kind: int, payload: bytes) -> bytes:
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * ((4 - length % 4) % 4)


def message(kind: int, queue: int, attrs: bytes, seq: int, flags: int = NLM_F_REQUEST) -> bytes:
    body = struct.pack("=BBH", socket.AF_UNSPEC, 0, socket.htons(queue)) + attrs
    return struct.pack("=IHHII", 16 + len(body), (NFNL_SUBSYS_QUEUE << 8) | kind, flags, seq, 0) + body


def attrs_of(data: bytes) -> dict[int, bytes]:
    out, i = {}, 0
    while i + 4 <= len(data):
        length, kind = struct.unpack_from("=HH", data, i)
        if length < 4:
            break
        out[kind & 0x7FFF] = data[i + 4:i + length]
        i += (length + 3) & ~3
    return out


def config(sock: socket.socket, queue: int, attrs: bytes, seq: int) -> None:
    sock.send(message(MSG_CONFIG, queue, attrs, seq, NLM_F_REQUEST | NLM_F_ACK))
    reply = sock.recv(65536)
    if len(reply) >= 20:
        _, kind, _, _, _ = struct.unpack_from("=IHHII", reply)
        if kind == NLMSG_ERROR:
            (err,) = struct.unpack_from("=i", reply, 16)
            if err:
                raise OSError(-err, f"nfqueue config: {os.strerror(-err)}")


def bind(queue: int) -> socket.socket:
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.bind((0, 0))
    sock.setsockopt(SOL_NETLINK, NETLINK_NO_ENOBUFS, 1)
    try:
        sock.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE: room for a burst of held packets
    except OSError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    config(sock, queue, attr(CFG_CMD, struct.pack("!BBH", CMD_BIND, 0, socket.AF_INET)), 1)
    config(sock, queue, attr(CFG_PARAMS, struct.pack("!IB", 0, COPY_META)), 2)
    config(sock, queue, attr(CFG_QUEUE_MAXLEN, struct.pack("!I", 65536)), 3)
    return sock


def release(sock: socket.socket, queue: int, last_id: int) -> None:
    sock.send(message(MSG_VERDICT_BATCH, queue, attr(VERDICT_HDR, struct.pack("!II", NF_ACCEPT, last_id)), 0))


def run(queue: int, delay_ms: int) -> None:
    sock = bind(queue)
    ctypes.CDLL(None).prctl(PR_SET_NAME, b"holdq-bound", 0, 0, 0)
    delay = delay_ms / 1000
    held: collections.deque[tuple[float, int]] = collections.deque()
    stopping = False

    def on_term(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_term)
    while not stopping:
        wait = max(0.0, held[0][0] - time.monotonic()) if held else 1.0
        try:
            ready, _, _ = select.select([sock], [], [], wait)
        except InterruptedError:
            continue
        if ready:
            data = sock.recv(1 << 20)
            now = time.monotonic()
            i = 0
            while i + 16 <= len(data):
                length, kind = struct.unpack_from("=IH", data, i)
                if length < 16:
                    break
                if kind == (NFNL_SUBSYS_QUEUE << 8) | MSG_PACKET:
                    hdr = attrs_of(data[i + 20:i + length]).get(PACKET_HDR)
                    if hdr:
                        held.append((now + delay, struct.unpack_from("!I", hdr)[0]))
                i += (length + 3) & ~3
        now = time.monotonic()
        last = None
        while held and held[0][0] <= now:
            last = held.popleft()[1]
        if last is not None:
            release(sock, queue, last)
    if held:
        release(sock, queue, held[-1][1])


if __name__ == "__main__":
    run(int(sys.argv[1]), int(sys.argv[2]))
