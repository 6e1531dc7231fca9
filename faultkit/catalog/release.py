"""`catalog build`: the published release of the admitted catalog.

A release holds every entry whose admitting verdict is still current, the alias table the
benchmark's localization scorer matches against, counts, bundle digests and signers, and the
entries left out with the reason. The same inputs give the same bytes: no clock is read here.

Chain of custody: an entry is admitted only on evidence. Its bundle must exist, verify against its
manifest, carry the digest the entry records, be signed by a trusted validator key, hold in its
sealed inputs exactly this entry and this patch (compared as content: a digest the author can
recompute proves nothing), back every field of the entry's validation block, have been measured on
what this release is built from (the bindings it seals: descriptor, pinned source, build commands,
rule settings; catalog/bindings.py), and judge again, from its own files, to the admission it records. The
judge is passed in (Custody.judge) by the command layer: it lives with the validator, and the
catalog package must not import validators (validators import the catalog).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faultkit.apps.descriptor import AppDescriptor, alert_pack_digest, load_app
from faultkit.bundles import LABELS, check_trusted, dumps, read_bytes, read_json, read_object, verify_bundle
from faultkit.catalog.bindings import KINDS, bindings, block_mismatches, bound, mismatches
from faultkit.catalog.lint import discover, lint, load_entry_file
from faultkit.catalog.model import Entry, thaw
from faultkit.catalog.patches import read_patch, safe_path
from faultkit.catalog.vocab import CATEGORIES
from faultkit.errors import FaultkitError, InputError, UsageError
from faultkit.workspace import Workspace
from faultkit.yamlio import atomic_write, canonical_json

FORMAT = "faultkit/release/v1"
VERSION_RE = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}")  # fullmatch: `$` would admit a newline

# Why an entry is left out of a release; the schema lists the same words.
REASONS = ("invalid", "no-verdict", "rejected", "flaky", "stale-entry", "stale-patch", "no-evidence", "untrusted",
           "single-verdict", "validation-mismatch", *(f"stale-{kind}" for kind in KINDS))
# Bundles sealed under these rules versions or later are admitted only when a second verdict (another
# window length or an independent run, `validate --stability`) holds too; earlier ones (the shipped
# v2 bundles) were admitted on one, and are judged as they were.
STABILITY_FROM_RULES = 3

Judge = Callable[[Path], Mapping[str, Any]]


@dataclass(frozen=True)
class Custody:
    """What admitting on evidence needs: the judge that recomputes a bundle's verdict from its files,
    and the fingerprints of the validator keys whose signatures are trusted."""

    judge: Judge
    trusted: frozenset[str]
    # the labels.json text a bundle's files give (labels are derived, outside the seal): a stored one
    # that differs was altered; None skips the check (the labeller lives in faultkit.labels)
    relabel: Callable[[Path], str] | None = None


@dataclass(frozen=True)
class ReleaseCandidate:
    """One catalog file as the release sees it."""

    file: str
    entry: Entry | None
    errors: tuple[str, ...]  # lint errors, rendered


@dataclass(frozen=True)
class State:
    """Whether an entry's verdict admits it now, and if not, why."""

    status: str  # "admitted" or one of REASONS
    detail: str = ""


def verdict_state(workspace: Workspace, entry: Entry) -> State:
    """Is the entry's admitting verdict current? Static: does not look at the bundle."""
    v = entry.validation
    if v is None:
        return State("no-verdict", "never validated")
    if v.verdict != "admitted":
        failed = ", ".join(v.failed_rules) or "no rule recorded"
        if v.stability is not None:  # admitted once, not the second time: say both
            second = v.stability
            failed = (f"admitted at {v.window_s:g}s, {second.get('verdict')} at {float(second.get('window_s', 0)):g}s "
                      f"({second.get('bundle')}): {', '.join(second.get('failed_rules', ())) or 'no rule recorded'}")
        return State(v.verdict if v.verdict in REASONS else "rejected", f"{v.verdict}: {failed}")
    if v.entry_digest != entry_digest(entry):
        return State("stale-entry", "the entry changed after its verdict; validate it again")
    if entry.code:
        current = read_patch(safe_path(workspace.root, entry.code.patch, "code.patch")).digest
        if v.patch_digest != current:
            return State("stale-patch", f"{entry.code.patch} changed after the verdict; validate it again")
    return State("admitted")


def entry_digest(entry: Entry) -> str:
    """The digest a verdict records for its entry (kept as a name tests and the gate share)."""
    return entry.digest()


def check_bundle(workspace: Workspace, entry: Entry, file: str, custody: Custody,
                 second: bool = False) -> tuple[State, str, str]:
    """(state, bundle digest, signer) of the entry's evidence (`second`: of its second verdict).

    Evidence that is missing, untrusted, or holds another entry or patch leaves the entry out with
    the reason. A bundle that no longer matches its manifest, its recorded digest or its own verdict
    is an error, not an exclusion: a release must never be published beside altered evidence.
    """
    v = entry.validation
    assert v is not None
    bundle: str | None = v.bundle
    bundle_digest: str = v.bundle_digest
    if second:
        assert v.stability is not None
        bundle, bundle_digest = v.stability.get("bundle"), str(v.stability.get("bundle_digest"))
    if not bundle:
        return State("no-evidence", "the verdict names no evidence bundle; validate it again"), "", ""
    try:
        folder = safe_path(workspace.root, bundle, "validation.bundle")
    except InputError as e:
        return State("no-evidence", str(e)), "", ""
    if not folder.is_dir():
        return State("no-evidence", f"{bundle} does not exist; restore the bundle or validate again"), "", ""
    try:
        digest = verify_bundle(folder)
    except InputError as e:
        raise InputError(f"{file}: validation.bundle: {e}; restore the bundle or validate again") from None
    if digest != bundle_digest:
        raise InputError(
            f"{file}: validation.bundle: {bundle} has digest {digest}, the verdict recorded "
            f"{bundle_digest}; restore the bundle or validate again"
        )
    try:
        signer = check_trusted(folder, custody.trusted)
    except InputError as e:
        return State("untrusted", str(e)), digest, ""
    mismatch = _inputs_mismatch(workspace, entry, folder)
    if mismatch:
        return mismatch, digest, signer
    try:
        verdict = custody.judge(folder)
        recorded = read_bytes(folder, "verdict.json")
    except InputError as e:
        raise InputError(f"{file}: validation.bundle: {e}") from None
    if dumps(verdict).encode() != recorded:
        raise InputError(f"{file}: validation.bundle: {bundle}: judged again, its files give a verdict other than "
                         "the one it records; validate it again")
    if verdict.get("fault") != entry.id or verdict.get("status") != "admitted":
        raise InputError(
            f"{file}: validation.bundle: {bundle} holds verdict {verdict.get('status')!r} for "
            f"{verdict.get('fault')!r}, not an admission of {entry.id!r}"
        )
    labels = folder / LABELS
    if custody.relabel and labels.exists() and read_bytes(folder, LABELS) != custody.relabel(folder).encode():
        raise InputError(f"{file}: validation.bundle: {bundle}/{LABELS} differs from the labels its files give; "
                         f"run `faultkit label {entry.id} --write`")
    return _bound_mismatch(workspace, entry, folder, second) or State("admitted"), digest, signer


def _inputs_mismatch(workspace: Workspace, entry: Entry, folder: Path) -> State | None:
    """Why the bundle's sealed inputs are not this entry and this patch; None when they are."""
    inputs = read_object(folder, "inputs.json")
    sealed = inputs.get("entry")
    body = {k: thaw(v) for k, v in entry.raw.items() if k != "validation"}
    if sealed != body:
        keys = sorted(set(body) | set(sealed if isinstance(sealed, dict) else {}))
        where = next((k for k in keys if not isinstance(sealed, dict) or sealed.get(k) != body.get(k)), "(entry)")
        return State("stale-entry", f"{where} differs from the entry its bundle validated; validate it again")
    if entry.code:
        current = safe_path(workspace.root, entry.code.patch, "code.patch").read_bytes()
        try:
            validated = read_bytes(folder, "patch.diff")
        except InputError:
            validated = None
        if validated != current:
            return State("stale-patch", f"{entry.code.patch} is not the patch its bundle validated; validate it again")
    return None


def _bound_mismatch(workspace: Workspace, entry: Entry, folder: Path, second: bool) -> State | None:
    """Why the bundle does not back the validation block, or was measured on another descriptor, source,
    build or rule settings than this checkout's (issue 32); None when it backs and matches."""
    inputs = read_object(folder, "inputs.json")
    raw = thaw(entry.raw.get("validation"))
    raw = raw if isinstance(raw, dict) else {}
    # the second verdict ran on the same platform, entry and patch as the first: its block says so by omission
    inherited = {k: raw.get(k) for k in ("platform", "entry_digest", "patch_digest") if k in raw}
    block = {**inherited, **raw.get("stability", {})} if second else raw
    wrong = block_mismatches(block, inputs, read_object(folder, "verdict.json"))
    if wrong:
        which = "stability" if second else "validation"
        return State("validation-mismatch", f"{which}: " + "; ".join(wrong) + "; validate it again")
    sealed = inputs.get("bindings")
    stale = mismatches(sealed, bindings(workspace, entry)) if sealed is not None else []
    if stale:
        return State(f"stale-{stale[0]}", f"the {', '.join(stale)} changed after its bundle was sealed "
                                         f"({folder.name}); validate it again")
    return None


def candidates(workspace: Workspace) -> list[ReleaseCandidate]:
    """Every catalog file with its entry (when it loads) and its lint errors."""
    report = lint(workspace)
    errors: dict[str, list[str]] = defaultdict(list)
    for f in report.findings:
        if f.severity == "error":
            errors[f.file].append(f"{f.path}: {f.message}")
    out = []
    for path in discover(workspace):
        item, _ = load_entry_file(path, workspace)
        out.append(ReleaseCandidate(item.file, item.entry, tuple(errors.get(item.file, ()))))
    return out


def admitted(workspace: Workspace, custody: Custody) -> tuple[list[tuple[Entry, str, str]], list[dict[str, str]]]:
    """(entries admitted now with their bundle digest and signer, excluded [{id, reason, detail}]), by id."""
    included: list[tuple[Entry, str, str]] = []
    excluded: list[dict[str, str]] = []
    for c in candidates(workspace):
        if c.entry is None or c.errors:
            ident = c.entry.id if c.entry else Path(c.file).stem
            excluded.append({"id": ident, "reason": "invalid", "detail": f"{c.file}: {c.errors[0]}"})
            continue
        state = verdict_state(workspace, c.entry)
        if state.status != "admitted":
            excluded.append({"id": c.entry.id, "reason": state.status, "detail": state.detail})
            continue
        state, digest, signer = check_bundle(workspace, c.entry, c.file, custody)
        if state.status == "admitted":
            state = second_verdict(workspace, c.entry, c.file, custody, digest)
        if state.status != "admitted":
            excluded.append({"id": c.entry.id, "reason": state.status, "detail": state.detail})
            continue
        included.append((c.entry, digest, signer))
    included.sort(key=lambda pair: pair[0].id)
    excluded.sort(key=lambda x: (x["id"], x["reason"]))
    return included, excluded


def second_verdict(workspace: Workspace, entry: Entry, file: str, custody: Custody, first: str) -> State:
    """Whether the second verdict holds too, for entries whose first bundle's rules ask for one: a
    fault admitted on one lucky window is not a case. Its bundle passes every check the first does."""
    v = entry.validation
    assert v is not None and v.bundle
    inputs = read_object(safe_path(workspace.root, v.bundle, "validation.bundle"), "inputs.json")
    version = inputs.get("rules_version")
    if not isinstance(version, int) or version < STABILITY_FROM_RULES:
        return State("admitted")
    if v.stability is None:
        return State("single-verdict", f"admitted once, at {v.window_s:g}s under rules v{version}; a second verdict "
                                       "must hold too: validate it with --stability")
    second = v.stability
    if second.get("verdict") != "admitted":
        return State("flaky", f"flaky: admitted at {v.window_s:g}s, {second.get('verdict')} at "
                              f"{float(second.get('window_s', 0)):g}s: {', '.join(second.get('failed_rules', ()))}")
    if second.get("bundle_digest") == first:  # the first bundle passed every check already
        return State("single-verdict", "the second verdict names the first one's bundle; validate it with --stability")
    return check_bundle(workspace, entry, file, custody, second=True)[0]


def alias_row(entry: Entry, app: AppDescriptor) -> dict[str, Any]:
    """The names a localization scorer accepts for this fault's artifact and target service."""
    spec = app.service(entry.target.service)
    return {
        "app": entry.app,
        "artifact": {
            "kind": entry.artifact.kind,
            "ref": entry.artifact.ref,
            "names": _unique([entry.artifact.ref, *entry.artifact.aliases]),
        },
        "service": {
            "name": spec.name,
            "workload": entry.target.workload or spec.workload,
            "names": _unique([spec.name, *spec.aliases, spec.workload]),
        },
    }


def _unique(names: list[str]) -> list[str]:
    return list(dict.fromkeys(n for n in names if n))


def counts(entries: list[Entry], apps: dict[str, AppDescriptor]) -> dict[str, Any]:
    totals = dict.fromkeys(sorted(apps), 0)
    by_category = {name: dict.fromkeys(CATEGORIES, 0) for name in sorted(apps)}
    for e in entries:
        totals[e.app] += 1
        by_category[e.app][e.category] += 1
    table = {name: {"total": totals[name], "categories": by_category[name]} for name in sorted(apps)}
    return {"total": len(entries), "apps": table}


def default_version(entries: list[Entry], body_digest: str) -> str:
    """`<date of the newest verdict>.<8 hex of the content>`: same content, same version."""
    dates = sorted(re.sub(r"\D", "", (e.validation.at if e.validation else ""))[:8] for e in entries)
    day = dates[-1] if dates and len(dates[-1]) == 8 else "00000000"
    return f"{day[:4]}.{day[4:6]}.{day[6:]}-{body_digest.removeprefix('sha256:')[:8]}"


def build_release(workspace: Workspace, custody: Custody, version: str | None = None) -> dict[str, Any]:
    """The release as data, its digest computed; nothing is written."""
    if version is not None and (not VERSION_RE.fullmatch(version) or ".." in version):
        raise UsageError(f"--version {version!r}: use letters, digits and . + _ - (it names the file)")
    included, excluded = admitted(workspace, custody)
    entries = [e for e, _, _ in included]
    apps = {name: load_app(workspace, name) for name in sorted({e.app for e in entries})}
    release: dict[str, Any] = {
        "schema": FORMAT,
        "apps": {name: app_record(workspace, app) for name, app in apps.items()},
        "entries": [thaw(e.raw) for e in entries],
        "aliases": {e.id: alias_row(e, apps[e.app]) for e in entries},
        "counts": counts(entries, apps),
        "bundles": {e.id: digest for e, digest, _ in included},
        "signers": {e.id: signer for e, _, signer in included},
        "labels": {e.id: lab for e, digest, _ in included if (lab := stored_labels(workspace, e, digest))},
        "excluded": excluded,
    }
    # which bindings each entry's bundle seals, beyond its entry, patch and validation block; absent
    # for bundles sealed before bindings existed, so a release of those keeps its bytes
    found = {e.id: kinds for e, _, _ in included if (kinds := bound(workspace, e))}
    if found:
        release["bound"] = found
    # the alerts each fault raised, from its labels, for faults validated with the pack (`validate --alerts`)
    raised = {i: [a["alert"] for a in lab["evidence"]["alerts"]] for i, lab in release["labels"].items()
              if "alerts" in lab["evidence"]}
    if raised:
        release["alerts"] = raised
    release["version"] = version or default_version(entries, _digest(release))
    release["digest"] = _digest(release)
    return release


def app_record(workspace: Workspace, app: AppDescriptor) -> dict[str, str]:
    """The app's version and the digest of its alert pack, when it has one: the pack is versioned with
    the release."""
    pack = alert_pack_digest(workspace, app.name)
    return {"version": app.version, **({"alert_pack": pack} if pack else {})}


def stored_labels(workspace: Workspace, entry: Entry, digest: str) -> dict[str, Any] | None:
    """The labels.json beside the admitting verdict (`faultkit label --write`; judge recomputes it),
    when it is here and names this bundle; a release carries what was labelled, never derives it."""
    v = entry.validation
    if v is None or not v.bundle:
        return None
    folder = safe_path(workspace.root, v.bundle, "validation.bundle")
    if not (folder / LABELS).is_file():
        return None
    labels: dict[str, Any] = read_json(folder, LABELS)
    if labels.get("bundle") != digest or labels.get("fault") != entry.id:
        raise InputError(f"{v.bundle}/{LABELS}: labels of another bundle; run `faultkit label {entry.id} --write`")
    return labels


def _digest(release: dict[str, Any]) -> str:
    body = {k: v for k, v in release.items() if k != "digest"}
    return "sha256:" + hashlib.sha256(canonical_json(body).encode()).hexdigest()


def verify_release(release: dict[str, Any]) -> None:
    """Raise when the release's digest does not match its content (a consumer's first check)."""
    if release.get("digest") != _digest(release):
        raise InputError("release digest does not match its content; the file was altered")


def release_text(release: dict[str, Any]) -> str:
    return json.dumps(release, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_release(release: dict[str, Any], out_dir: Path) -> Path:
    """Write dist/catalog-<version>.json atomically; a folder that cannot be written is one line."""
    path = out_dir / f"catalog-{release['version']}.json"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(
            f"{out_dir}: cannot create the release folder ({e.strerror}); pass --out DIR"
        ) from None
    if not out_dir.is_dir():
        raise InputError(f"{out_dir}: is not a folder; pass --out DIR")
    try:
        atomic_write(path, release_text(release))
    except PermissionError as e:
        raise InputError(
            f"{out_dir}: cannot write the release ({e.strerror}); pass --out DIR"
        ) from None
    except FaultkitError:
        raise
    return path
