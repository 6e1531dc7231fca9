import io
import socket
import threading

import main
from shoplib import Logger


def test_protocol_requires_auth():
    store, session = main.Store(), main.Session("pw")
    assert main.execute(store, session, "GET k") == "-NOAUTH Authentication required"
    assert main.execute(store, session, "AUTH nope") == "-WRONGPASS invalid password"
    assert main.execute(store, session, "AUTH pw") == "+OK"
    assert main.execute(store, session, "PING") == "+PONG"


def test_get_set_del_roundtrip():
    store, session = main.Store(), main.Session("")
    assert main.execute(store, session, "GET cart:u1") == "_"
    assert main.execute(store, session, 'SET cart:u1 [{"a": 1}]') == "+OK"
    assert main.execute(store, session, "GET cart:u1") == '$[{"a": 1}]'
    assert main.execute(store, session, "DEL cart:u1") == ":1"
    assert main.execute(store, session, "DEL cart:u1") == ":0"


def test_argument_errors():
    store, session = main.Store(), main.Session("")
    assert main.execute(store, session, "SET onlykey").startswith("-ERR")
    assert main.execute(store, session, "GET").startswith("-ERR")
    assert main.execute(store, session, "FLUSHALL").startswith("-ERR unknown command")


def test_tcp_server():
    server = main.Server(("127.0.0.1", 0), main.Store(), "s3cret", Logger("t", io.StringIO()))
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        with socket.create_connection(server.server_address, timeout=2) as sock:
            f = sock.makefile("rwb")
            replies = []
            for line in ("PING", "AUTH s3cret", "SET k v w", "GET k", "QUIT"):
                f.write(line.encode() + b"\r\n")
                f.flush()
                replies.append(f.readline().decode().strip())
        assert replies == ["-NOAUTH Authentication required", "+OK", "+OK", "$v w", "+OK"]
    finally:
        server.shutdown()
        server.server_close()
