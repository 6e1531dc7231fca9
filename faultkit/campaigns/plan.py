"""A campaign's plan: which faults, with which protocol parameters, in which order, on how many
instances. Written once to DIR/plan.json when the campaign starts; a resumed campaign reads it back
and never recomputes it, so the queue a crash interrupted is the queue it continues.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import git
import yaml

from faultkit.campaigns.timing import Overheads
from faultkit.errors import InputError, UsageError
from faultkit.workspace import Workspace
from faultkit.yamlio import atomic_write

PLAN = "plan.json"
PLAN_FORMAT = "faultkit-campaign/v1"


@dataclass(frozen=True)
class PlannedFault:
    id: str
    mechanism: str
    category: str
    expected_s: float


@dataclass(frozen=True)
class Plan:
    app: str
    platform: str
    workers: int
    window_s: float
    interval_s: float
    repeat: int
    attempts: int  # runs a fault may take when a run ends in an error to retry (overload, a crash)
    max_load: float | None  # load average per core above which a cycle measures the machine
    faults: tuple[PlannedFault, ...]  # longest expected first
    overheads: dict[str, Any]
    # kubernetes: instance k's namespace (one each); empty on the local platform
    namespaces: tuple[str, ...] = ()
    rules: int | None = None  # the screening rules each validation judges by (None: validate's default)
    stability: str | None = None  # each admitted fault validated again at this window, or "same" (validate's)
    max_steal: float | None = None  # share of CPU time stolen above which a cycle measures the machine

    def to_json(self) -> str:
        data = asdict(self)
        data["format"] = PLAN_FORMAT
        return json.dumps(data, indent=1, sort_keys=True) + "\n"

    @classmethod
    def read(cls, folder: Path) -> Plan:
        path = folder / PLAN
        try:
            data = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            raise InputError(f"{path}: no campaign plan here; start one with `faultkit campaign run --app APP`"
                             ) from None
        except ValueError:
            raise InputError(f"{path}: the plan is not JSON; restore it or start a new campaign") from None
        if data.pop("format", None) != PLAN_FORMAT:
            raise InputError(f"{path}: not a {PLAN_FORMAT} plan; start a new campaign")
        data["faults"] = tuple(PlannedFault(**f) for f in data["faults"])
        data["namespaces"] = tuple(data.get("namespaces") or ())
        return cls(**data)

    def write(self, folder: Path) -> None:
        atomic_write(folder / PLAN, self.to_json())


@dataclass(frozen=True)
class CatalogFault:
    id: str
    mechanism: str
    category: str
    patch: str | None


def catalog_faults(ws: Workspace, app: str) -> dict[str, CatalogFault]:
    """The app's entries, read only for what planning needs (validate lints each one itself)."""
    folder = ws.catalog_dir / app
    if not folder.is_dir():
        raise InputError(f"{folder}: no catalog for {app!r}; author faults first (`faultkit author`)")
    out = {}
    for path in sorted(folder.glob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text("utf-8"))
        except yaml.YAMLError as e:
            raise InputError(f"{path}: not YAML ({e.__class__.__name__}); `faultkit catalog lint {path}` says more"
                             ) from None
        if not isinstance(data, dict) or "id" not in data:
            raise InputError(f"{path}: not a catalog entry; `faultkit catalog lint {path}` says more")
        code = data.get("code") if isinstance(data.get("code"), dict) else {}
        out[str(data["id"])] = CatalogFault(str(data["id"]), str(data.get("mechanism")), str(data.get("category")),
                                            code.get("patch") if code else None)
    return out


def changed_since(ws: Workspace, app: str, ref: str, known: dict[str, CatalogFault]) -> list[str]:
    """Entries whose file or patch differs from REF (committed since, or changed in the work tree)."""
    try:
        repo = git.Repo(ws.root, search_parent_directories=True)
        names = repo.git.diff("--name-only", ref, "--", ".").splitlines()
        names += repo.git.ls_files("--others", "--exclude-standard").splitlines()
    except git.GitCommandError as e:
        raise UsageError(f"--changed-since {ref}: git cannot diff against it ({e.stderr.strip()[:120]}); "
                         "name a commit, branch or tag") from None
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise UsageError(f"--changed-since: {ws.root} is not in a git repository; list faults with --fault") from None
    top = Path(repo.working_tree_dir or ws.root).resolve()
    changed = {(top / n).resolve() for n in names}
    out = []
    for fault in known.values():
        entry = (ws.catalog_dir / app / f"{fault.id}.yaml").resolve()
        patch = (ws.root / fault.patch).resolve() if fault.patch else None
        if entry in changed or (patch is not None and patch in changed):
            out.append(fault.id)
    return sorted(out)


def select(ws: Workspace, app: str, ids: tuple[str, ...], all_faults: bool, since: str | None) -> list[CatalogFault]:
    if sum((bool(ids), all_faults, since is not None)) != 1:
        raise UsageError("name the faults with one of --fault ID (repeatable), --all or --changed-since REF")
    known = catalog_faults(ws, app)
    if all_faults:
        chosen = sorted(known)
    elif since is not None:
        chosen = changed_since(ws, app, since, known)
    else:
        missing = [i for i in ids if i not in known]
        if missing:
            raise InputError(f"{', '.join(missing)}: not in the {app} catalog; `faultkit catalog lint` lists it")
        chosen = list(dict.fromkeys(ids))
    if not chosen:
        raise InputError(f"no fault of {app} to validate; nothing changed since {since}" if since
                         else f"no fault of {app} to validate")
    return [known[i] for i in chosen]


def order(faults: list[CatalogFault], overheads: Overheads, window_s: float, repeat: int) -> tuple[PlannedFault, ...]:
    """Longest expected first: with a shared queue, the last fault to start is a short one, so the
    workers finish close together (the longest-processing-time rule)."""
    planned = [PlannedFault(f.id, f.mechanism, f.category,
                            round(overheads.expected_s(f.mechanism, window_s, repeat), 1)) for f in faults]
    return tuple(sorted(planned, key=lambda p: (-p.expected_s, p.id)))


def new_plan(ws: Workspace, app: str, ids: tuple[str, ...], all_faults: bool, since: str | None, *, workers: int,
             platform: str, window_s: float, interval_s: float, repeat: int, attempts: int,
             max_load: float | None, overheads: Overheads, namespace_prefix: str | None = None,
             rules: int | None = None, stability: str | None = None, max_steal: float | None = None) -> Plan:
    if workers < 1:
        raise UsageError(f"--workers {workers}: at least one instance is needed")
    if attempts < 1:
        raise UsageError(f"--attempts {attempts}: a fault needs at least one run")
    faults = order(select(ws, app, ids, all_faults, since), overheads, window_s, repeat)
    return Plan(app=app, platform=platform, workers=workers, window_s=window_s, interval_s=interval_s, repeat=repeat,
                attempts=attempts, max_load=max_load, faults=faults, overheads=overheads.as_dict(),
                namespaces=tuple(f"{namespace_prefix}-{k}" for k in range(workers)) if namespace_prefix else (),
                rules=rules, stability=stability, max_steal=max_steal)
