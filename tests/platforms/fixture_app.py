"""Fixtures for the local platform: a tiny app (front -> back) in a temporary catalog repository."""

from __future__ import annotations

import textwrap
from pathlib import Path

APP_YAML = """\
schema: faultkit/app/v1
name: fix
version: "1"
source: src
common: [lib]
entry: front
services:
  - name: front
    language: python
    source: front
    workload: {kind: Deployment, name: front}
    ports: [{name: http, port: 8080}]
  - name: back
    language: python
    source: back
    workload: {kind: Deployment, name: back}
    ports: [{name: http, port: 9000}]
edges: [[front, back]]
"""

LIB = """\
import json, sys, time

def log(service, level, message, **fields):
    record = {"ts": time.time(), "level": level, "service": service, "message": message}
    print(json.dumps({**record, **fields}), flush=True)
"""

SERVER = """\
import os, sys, time, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from lib.log import log

NAME = os.environ.get("NAME", "svc")
HELD = []
if os.environ.get("ALLOC_MB"):
    for _ in range(int(os.environ["ALLOC_MB"])):
        HELD.append(b"x" * 1048576)
        time.sleep(0.005)
VERSION = "v1"


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def do_GET(self):
        if self.path in ("/readyz", "/healthz"):
            return self.reply(200, "ok")
        if self.path == "/crash":
            log(NAME, "ERROR", "crashing on request")
            os._exit(3)
        if self.path == "/":
            target = os.environ.get("BACK_ADDR")
            if not target:
                return self.reply(200, f"{NAME} {VERSION} {os.getpid()}")
            url = target if "://" in target else f"http://{target}/"
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    return self.reply(200, f"{NAME} -> " + r.read().decode())
            except Exception as e:  # noqa: BLE001
                log(NAME, "ERROR", f"calling back failed: {e}")
                return self.reply(502, f"back failed: {e}")
        self.reply(404, "no")

    def reply(self, code, text):
        data = text.encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


log(NAME, "INFO", "starting", port=os.environ["PORT"])
ADDRESS = (os.environ.get("LISTEN_HOST", "0.0.0.0"), int(os.environ["PORT"]))
ThreadingHTTPServer(ADDRESS, H).serve_forever()
"""


def manifest(name: str, port: int, env: dict[str, str], replicas: int = 1, memory: str = "128Mi") -> str:
    env_yaml = "".join(f'            - {{name: {k}, value: "{v}"}}\n' for k, v in env.items())
    return textwrap.dedent(f"""\
    apiVersion: apps/v1
    kind: Deployment
    metadata: {{name: {name}}}
    spec:
      replicas: {replicas}
      selector: {{matchLabels: {{app: {name}}}}}
      template:
        metadata: {{labels: {{app: {name}}}}}
        spec:
          containers:
          - name: server
            command: ["python3", "main.py"]
            workingDir: /app
            ports: [{{name: http, containerPort: {port}}}]
            env:
    __ENV__        resources: {{limits: {{memory: {memory}}}}}
            readinessProbe:
              httpGet: {{path: /readyz, port: http}}
              periodSeconds: 1
    ---
    apiVersion: v1
    kind: Service
    metadata: {{name: {name}}}
    spec:
      selector: {{app: {name}}}
      ports: [{{name: http, port: {port}, targetPort: {port}}}]
    """).replace("__ENV__", env_yaml)


def write_app(root: Path, back_replicas: int = 1) -> Path:
    app = root / "apps" / "fix"
    for folder in ("src/front", "src/back", "src/lib", "manifests"):
        (app / folder).mkdir(parents=True, exist_ok=True)
    (app / "app.yaml").write_text(APP_YAML)
    (app / "src/lib/__init__.py").write_text("")
    (app / "src/lib/log.py").write_text(LIB)
    (app / "src/front/main.py").write_text(SERVER)
    (app / "src/back/main.py").write_text(SERVER)
    (app / "manifests/front.yaml").write_text(
        manifest(
            "front",
            8080,
            {
                "NAME": "front",
                "PORT": "8080",
                "LISTEN_HOST": "0.0.0.0",
                "BACK_ADDR": "http://back:9000/",
            },
        )
    )
    (app / "manifests/back.yaml").write_text(
        manifest(
            "back",
            9000,
            {"NAME": "back", "PORT": "9000", "LISTEN_HOST": "0.0.0.0"},
            replicas=back_replicas,
        )
    )
    return app


def wait_for(cond, timeout: float = 15.0, every: float = 0.1):  # noqa: ANN001, ANN201
    """Poll `cond` until it returns something truthy; fail the test after `timeout` seconds."""
    import time

    deadline = time.time() + timeout
    while time.time() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"condition not met within {timeout}s")


def get(url: str, timeout: float = 10.0) -> tuple[int, str]:
    import requests

    try:
        r = requests.get(url, timeout=timeout)
        return r.status_code, r.text
    except requests.RequestException as e:
        return 0, str(e)
