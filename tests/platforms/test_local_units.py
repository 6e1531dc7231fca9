"""Pieces of the local platform that need no running app: builds, address translation, logs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from faultkit.errors import InputError, PlatformError
from faultkit.platforms.local import addresses
from faultkit.platforms.local.addresses import translate_value
from faultkit.platforms.local.builds import BuildStore
from faultkit.platforms.local.cgroups import CpuGroups
from faultkit.platforms.local.deployed import cpu_millis, memory_bytes
from faultkit.platforms.local.logfiles import LogWriter, parse_line, read_records


def _tree(root: Path) -> Path:
    (root / "svc").mkdir(parents=True)
    (root / "lib").mkdir()
    (root / "svc/main.py").write_text("print('hi')\n")
    (root / "lib/util.py").write_text("X = 1\n")
    return root


def test_build_is_content_addressed_immutable_and_ordered(tmp_path: Path) -> None:
    src = _tree(tmp_path / "src")
    store = BuildStore(tmp_path / "builds")
    first = store.build("svc", src, "svc", ("lib",))
    (src / "svc/__pycache__").mkdir()
    (src / "svc/__pycache__/main.cpython-311.pyc").write_bytes(b"junk")
    assert store.build("svc", src, "svc", ("lib",)).id == first.id  # caches do not count
    assert first.id.startswith("sha256:") and len(first.id) == 71
    loc = Path(first.location)
    assert (loc / "main.py").is_file() and (loc / "lib/util.py").is_file()
    assert not os.access(loc / "main.py", os.W_OK) or os.geteuid() == 0
    patched = tmp_path / "patched"
    shutil.copytree(src, patched)
    (patched / "svc/main.py").write_text("print('bye')\n")
    second = store.build("svc", patched, "svc", ("lib",))
    assert second.id != first.id
    assert [b.id for b in store.builds("svc")] == [first.id, second.id]
    assert store.contains(second.id, "bye") and not store.contains(first.id, "bye")
    assert store.builds("other") == []
    with pytest.raises(PlatformError):
        store.contains("sha256:" + "0" * 64, "x")
    with pytest.raises(InputError):
        store.build("svc", src, "nope", ())


def test_build_refuses_symlinks(tmp_path: Path) -> None:
    src = _tree(tmp_path / "src")
    (src / "svc/link").symlink_to("/etc/hostname")
    with pytest.raises(InputError, match="symbolic links"):
        BuildStore(tmp_path / "builds").build("svc", src, "svc", ())


def _translate(name: str, value: str) -> str:
    relays = {("back", 9000): 40000}
    pod = {8080: 41000}

    def resolve(service: str, port: int) -> int | None:
        if service != "back":
            return None
        return relays.get((service, port), 1)  # 1: the refusing port

    def pod_port(n: int) -> int:
        return pod.setdefault(n, 42000 + len(pod))

    return translate_value(name, value, frozenset({8080}), pod_port, resolve)


@pytest.mark.parametrize(
    ("name", "value", "seen"),
    [
        ("BACK_ADDR", "back:9000", "127.0.0.1:40000"),
        ("BACK_ADDR", "http://back:9000/api?x=1", "http://127.0.0.1:40000/api?x=1"),
        ("BACK_ADDR", "back.default.svc.cluster.local:9000", "127.0.0.1:40000"),
        ("BACK_ADDR", "back:9001", "127.0.0.1:1"),
        ("BACK_ADDR", "bak:9000", "bak.invalid:9000"),
        ("BACK_ADDR", "redis://bak:9000/0", "redis://bak.invalid:9000/0"),
        ("PORT", "8080", "41000"),
        ("PORT", "8081", "42001"),  # not a containerPort: a fresh port, nothing routes there
        ("LISTEN_HOST", "0.0.0.0", "127.0.0.1"),
        ("LOAD_RPS", "20", "20"),
        ("GREETING", "hello world", "hello world"),
        ("UPSTREAM", "10.1.2.3:80", "10.1.2.3:80"),
        ("SELF", "localhost:8080", "127.0.0.1:41000"),
    ],
)
def test_address_translation(name: str, value: str, seen: str) -> None:
    assert _translate(name, value) == seen


def test_a_port_another_process_holds_is_never_handed_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two supervisors starting side by side: a port one handed out but nothing binds yet stays its own."""
    other = subprocess.Popen(
        [sys.executable, "-c", "from faultkit.platforms.local.addresses import free_port; import sys; "
         "print(free_port(), flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        theirs = int(other.stdout.readline())
        first, randint = [theirs], addresses.random.randint
        monkeypatch.setattr(addresses.random, "randint", lambda a, b: first.pop() if first else randint(a, b))
        ours = addresses.free_port()
        assert ours != theirs  # free on the interface, but handed out already
        addresses.release_port(ours)
    finally:
        other.stdin.close()
        other.wait(10)
    monkeypatch.setattr(addresses.random, "randint", lambda _a, _b: theirs)
    assert addresses.free_port() == theirs  # the holder is gone, and its hold with it
    addresses.release_port(theirs)


def test_memory_quantities() -> None:
    assert memory_bytes("256Mi") == 256 * 2**20
    assert memory_bytes("1Gi") == 2**30
    assert memory_bytes("500M") == 500 * 10**6
    assert memory_bytes("64Ki") == 65536
    assert memory_bytes("1048576") == 2**20
    assert memory_bytes(None) is None
    with pytest.raises(InputError):
        memory_bytes("lots")


def test_cpu_quantities() -> None:
    assert [cpu_millis(q) for q in ("500m", "1", "0.25", "2.5", None)] == [500, 1000, 250, 2500, None]
    with pytest.raises(InputError):
        cpu_millis("fast")


def test_cpu_groups_explain_why_they_are_not_available(tmp_path: Path) -> None:
    mounts = tmp_path / "mounts"
    mounts.write_text("proc /proc proc rw 0 0\n")
    assert CpuGroups.open("faultkit-1", mounts) == "no cgroup cpu controller is mounted"
    plain = tmp_path / "cpu"  # a folder where a cpu hierarchy would be, but it is no cgroup
    plain.mkdir()
    mounts.write_text(f"cgroup {plain} cgroup rw,cpu,cpuacct 0 0\n")
    reason = CpuGroups.open("faultkit-1", mounts)
    assert isinstance(reason, str) and "cpu.cfs_quota_us" in reason
    assert list(plain.iterdir()) == []  # nothing left behind


def test_log_lines_parse_and_filter_by_time(tmp_path: Path) -> None:
    w = LogWriter(tmp_path / "x-0.log")
    w.line('{"ts": 1, "level": "warning", "service": "x", "message": "slow", "ms": 5}')
    w.line("Traceback (most recent call last):")
    w.line("ValueError: bad")
    w.line("plain text")
    w.event("ERROR", "OOMKilled", event="oom_kill")
    w.close()
    recs = read_records(tmp_path / "x-0.log", "x", "x-0", 0, None)
    assert [(r.level, r.message) for r in recs] == [
        ("WARNING", "slow"),
        ("ERROR", "Traceback (most recent call last):"),
        ("ERROR", "ValueError: bad"),
        ("INFO", "plain text"),
        ("ERROR", "OOMKilled"),
    ]
    assert recs[0].fields["ms"] == 5 and recs[-1].fields["event"] == "oom_kill"
    assert read_records(tmp_path / "x-0.log", "x", "x-0", recs[-1].ts + 1, None) == []
    assert parse_line("garbage", "x", "x-0") is None


def test_recorded_processes_are_recognised_after_the_wall_clock_steps(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A clock step (NTP) moves the boot time psutil adds to a process's start: the record must not
    follow it, or recovery would take a running helper for gone and leave it running."""
    import psutil._pslinux

    from faultkit.platforms.local.processes import Spawner, recorded_alive
    record = tmp_path / "pids"
    child = Spawner(record).spawn(["sleep", "30"])
    try:
        assert [p.pid for p in recorded_alive(record)] == [child.pid]
        before = psutil.Process(child.pid).create_time()
        stepped = psutil._pslinux.boot_time() + 1.0
        monkeypatch.setattr(psutil._pslinux, "boot_time", lambda: stepped)
        assert psutil.Process(child.pid).create_time() == pytest.approx(before + 1.0, abs=0.02)  # what moved
        assert [p.pid for p in recorded_alive(record)] == [child.pid]
    finally:
        child.kill()
        child.wait()
    assert recorded_alive(record) == []
