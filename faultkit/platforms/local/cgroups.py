"""CPU limits as the kubelet sets them: a CFS quota per container, in a cgroup of its own.

The cgroup v2 `cpu` controller is used where the unified hierarchy offers it, else the cgroup v1
`cpu` hierarchy. Both are plain files under /sys/fs/cgroup, so no library is needed. Where neither
is writable (no root, a container without cgroup access), CPU limits are not enforced and
`CpuGroups.open` returns the reason instead; the supervisor reports it in its status.

A container's process is moved into its group right after it is spawned (the spawner cannot run
code in the child), so its first milliseconds run unthrottled; the processes it starts, and the
helpers a cpu-stress action attaches to it, run inside the limit like a container's would.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

PERIOD_US = 100_000  # the kubelet's CFS period


def _mounts(mounts_file: Path) -> tuple[Path | None, Path | None]:
    """(cgroup v2 mount point, cgroup v1 cpu mount point), either None when absent."""
    v2 = v1 = None
    for line in mounts_file.read_text().splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        if fields[2] == "cgroup2" and v2 is None:
            v2 = Path(fields[1])
        elif fields[2] == "cgroup" and "cpu" in fields[3].split(",") and v1 is None:
            v1 = Path(fields[1])
    return v2, v1


@dataclass
class CpuGroups:
    """The supervisor's parent group; one child group per limited container."""

    parent: Path
    version: int

    @classmethod
    def open(cls, name: str, mounts_file: Path = Path("/proc/mounts")) -> CpuGroups | str:
        try:
            v2, v1 = _mounts(mounts_file)
        except OSError as exc:
            return f"cannot read {mounts_file}: {exc.strerror}"
        tried = []
        if v2 is not None and "cpu" in _read(v2 / "cgroup.controllers").split():
            with contextlib.suppress(OSError):
                (v2 / "cgroup.subtree_control").write_text("+cpu")
            groups = cls._make(v2 / name, 2, "cpu.max")
            if isinstance(groups, CpuGroups):
                return groups
            tried.append(groups)
        if v1 is not None:
            groups = cls._make(v1 / name, 1, "cpu.cfs_quota_us")
            if isinstance(groups, CpuGroups):
                return groups
            tried.append(groups)
        return "; ".join(tried) or "no cgroup cpu controller is mounted"

    @classmethod
    def _make(cls, parent: Path, version: int, probe: str) -> CpuGroups | str:
        cls.sweep(parent.parent)
        try:
            parent.mkdir(exist_ok=True)
        except OSError as exc:
            return f"cannot create a cgroup under {parent.parent}: {exc.strerror}"
        if not (parent / probe).exists():
            with contextlib.suppress(OSError):
                parent.rmdir()
            return f"{parent.parent} has no {probe} (cpu controller not enabled there)"
        return cls(parent, version)

    @staticmethod
    def sweep(root: Path) -> None:
        """Remove the groups of supervisors that are gone (killed before they could clean up)."""
        for stale in root.glob("faultkit-*"):
            pid = stale.name.removeprefix("faultkit-")
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                _remove(stale)

    def limit(self, key: str, millicores: int) -> Path:
        """A child group with a quota of `millicores` (made once; the quota is rewritten each time)."""
        group = self.parent / key
        group.mkdir(exist_ok=True)
        quota = max(1000, millicores * PERIOD_US // 1000)  # the kernel's minimum quota is 1 ms
        if self.version == 2:
            (group / "cpu.max").write_text(f"{quota} {PERIOD_US}")
        else:
            (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (group / "cpu.cfs_quota_us").write_text(str(quota))
        return group

    @staticmethod
    def add(group: Path, pid: int) -> None:
        """Move a process into a group; one that has already exited is ignored."""
        with contextlib.suppress(ProcessLookupError, FileNotFoundError):
            (group / "cgroup.procs").write_text(str(pid))

    def close(self) -> None:
        _remove(self.parent)


def _remove(group: Path) -> None:
    """rmdir a group and its children (a group with processes left in it stays)."""
    for child in group.iterdir():
        if child.is_dir():
            with contextlib.suppress(OSError):
                child.rmdir()
    with contextlib.suppress(OSError):
        group.rmdir()


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def group_name() -> str:
    """This supervisor's parent group; the pid lets a later one tell a stale group from a live one."""
    return f"faultkit-{os.getpid()}"
