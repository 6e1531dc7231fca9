"""The stand-ins of apps/bankofanthos/images on the real engine: a Dockerfile written for the postgres image (FROM postgres:16,
`apk add`, init scripts in /docker-entrypoint-initdb.d, as Bank of Anthos' ledger-db) builds over a
Debian PostgreSQL base whose recipe carries the stand-ins, initialises its database from the scripts
at the first start, and serves it on the network with the password it was given."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from faultkit.apps.descriptor import load_app
from faultkit.errors import PlatformError
from faultkit.images.service import build_service
from faultkit.workspace import Workspace
from tests.helpers.shipped import REPO, minishop_copy

pytestmark = [pytest.mark.live, pytest.mark.exclusive, pytest.mark.alone]

UPSTREAM = "postgres:16.6-alpine"
RECIPE = {
    "suite": "bookworm", "packages": ["postgresql-15"],
    "env": {"PATH": "/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "PGDATA": "/var/lib/postgresql/data"},
    "files": {"/usr/local/bin/docker-entrypoint.sh": "images/postgres-entrypoint.sh",
              "/usr/local/bin/apk": "images/apk"},
    "entrypoint": ["docker-entrypoint.sh"], "cmd": ["postgres"],
}
DOCKERFILE = f"""\
FROM {UPSTREAM}
RUN apk add --no-cache coreutils && rm -rf /var/cache/apk/*
COPY initdb/0_tables.sql initdb/1_rows.sh /docker-entrypoint-initdb.d/
RUN chmod 755 /docker-entrypoint-initdb.d/0_tables.sql /docker-entrypoint-initdb.d/1_rows.sh
"""
TABLES = "CREATE TABLE ledger (id SERIAL PRIMARY KEY, amount INTEGER NOT NULL);\n"
ROWS = """#!/bin/bash
set -eu
for i in $(seq 1 "$ROWS"); do
  psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d "$POSTGRES_DB" -c "INSERT INTO ledger (amount) VALUES ($i)"
done
"""


def _workspace(tmp_path: Path, dockerfile: str) -> Workspace:
    root = tmp_path / "repo"

    def edit(data: dict[str, Any]) -> None:
        data["images"]["from"] = {UPSTREAM: RECIPE}
        email = next(s for s in data["services"] if s["name"] == "email")
        email["build"] = {"lint": [], "test": []}

    minishop_copy(root, edit)
    app = root / "apps" / "minishop"
    (app / "images").mkdir()
    for name in ("postgres-entrypoint.sh", "apk"):
        shutil.copy2(REPO / "apps" / "bankofanthos" / "images" / name, app / "images" / name)
    folder = app / "src" / "email"
    (folder / "initdb").mkdir()
    (folder / "initdb" / "0_tables.sql").write_text(TABLES)
    (folder / "initdb" / "1_rows.sh").write_text(ROWS)
    (folder / "Dockerfile").write_text(dockerfile)
    return Workspace(root=root, state_dir=tmp_path / "state")


def _query(container: Any, sql: str) -> str:
    code, out = container.exec_run(["psql", "-h", "127.0.0.1", "-U", "ledger-admin", "-d", "ledger", "-tAc", sql],
                                   environment={"PGPASSWORD": "s3cret"})
    assert code == 0, out.decode()
    return out.decode().strip()


def test_a_postgres_dockerfile_initialises_and_serves_its_database(tmp_path: Path, docker_client: Any) -> None:
    c = docker_client
    ws = _workspace(tmp_path, DOCKERFILE)
    built = build_service(ws, load_app(ws, "minishop"), "email", client=c)
    container = c.containers.run(built.id, detach=True, environment={
        "POSTGRES_USER": "ledger-admin", "POSTGRES_PASSWORD": "s3cret", "POSTGRES_DB": "ledger", "ROWS": "3"})
    try:
        deadline = time.monotonic() + 60
        while container.exec_run(["pg_isready", "-h", "127.0.0.1", "-q"]).exit_code != 0:
            container.reload()
            assert container.status == "running", container.logs().decode()[-2000:]
            assert time.monotonic() < deadline, "postgres did not answer on the network in 60 s"
            time.sleep(0.5)
        assert _query(container, "SELECT sum(amount) FROM ledger") == "6"  # rows 1, 2, 3 from the script
        code, out = container.exec_run(["psql", "-h", "127.0.0.1", "-U", "ledger-admin", "-d", "ledger", "-c",
                                        "SELECT 1"], environment={"PGPASSWORD": "wrong"})
        assert code != 0 and b"password authentication failed" in out
        assert _query(container, "SELECT current_user") == "ledger-admin"
        uids = container.exec_run(["sh", "-c", "grep ^Uid: /proc/1/status; id -u postgres"]).output.decode().split()
        assert uids[1] == uids[-1] != "0"  # the server runs as postgres, not root, as upstream's does
        container.stop(timeout=30)  # SIGTERM reaches the server itself: a clean shutdown, exit 0
        assert container.wait(timeout=30)["StatusCode"] == 0
        assert b"database system is shut down" in container.logs()
    finally:
        container.remove(force=True)
        c.images.remove(built.id, force=True)


def test_apk_add_of_a_package_the_base_lacks_fails_the_build_with_its_name(tmp_path: Path,
                                                                          docker_client: Any) -> None:
    ws = _workspace(tmp_path, DOCKERFILE.replace("apk add --no-cache coreutils", "apk add --no-cache redis"))
    with pytest.raises(PlatformError, match=r"apk add redis: not in this Debian base; add it to the recipe's packages"):
        build_service(ws, load_app(ws, "minishop"), "email", client=docker_client)
