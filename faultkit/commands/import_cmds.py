"""`faultkit apps import` and `faultkit apps verify`: descriptors from upstream manifests, and a
check that a user's copy of them is the recorded version."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import click
import yaml

from faultkit.apps.descriptor import check_descriptor_text, load_app
from faultkit.apps.importer import Imported, import_manifests
from faultkit.apps.manifests import manifest_files
from faultkit.apps.provenance import record, verify
from faultkit.commands import apps_cmds
from faultkit.commands.common import json_option, print_json, workspace
from faultkit.errors import InputError, UsageError
from faultkit.names import check_option, confine
from faultkit.yamlio import atomic_write


@click.command("import")
@click.argument("manifests", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--name", required=True, help="The application's name.")
@click.option("--out", type=click.Path(path_type=Path), help="Descriptor path (default: apps/<name>/app.yaml).")
@click.option("--source", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A checkout of the application's source and configuration to read dependencies from.")
@click.option("--upstream", metavar="REPOSITORY@VERSION",
              help="Record where the manifests come from (with their sha256) instead of copying them.")
@click.option("--upstream-path", default="", help="The manifests' folder in the upstream repository.")
@click.option("--upstream-commit", help="The commit the upstream version resolves to.")
@click.option("--site", "sites", multiple=True, metavar="NAME:ZONE:ROLE",
              help="A site the app is deployed as (role active or standby); repeat for each, e.g. a:zone-a:active.")
@click.option("--dry-run", is_flag=True, help="Print the descriptor instead of writing it.")
@click.option("--force", is_flag=True, help="Replace an existing descriptor.")
@json_option
def import_cmd(manifests: tuple[Path, ...], name: str, out: Path | None, source: Path | None, upstream: str | None,
               upstream_path: str, upstream_commit: str | None, sites: tuple[str, ...], dry_run: bool, force: bool,
               as_json: bool) -> int:
    """Derive an application descriptor from Kubernetes manifests (plain or Helm-rendered): files,
    or folders whose *.yaml, *.yml and *.json files (sorted, in subfolders too) are read.

    The manifests are copied beside the descriptor (manifests/) unless they are there already, or
    unless --upstream records where they come from (then only their digests are kept).
    Services whose dependencies are not visible are listed as unresolved, not guessed.

    Example: faultkit apps import --name boutique kubernetes-manifests.yaml
    """
    check_option(name, "--name")
    files = manifest_files(list(manifests))
    result = import_manifests(name, files, source)
    if upstream:
        repository, sep, version = upstream.rpartition("@")
        if not sep or not repository or not version:
            raise UsageError(f"--upstream {upstream!r}: expected REPOSITORY@VERSION, e.g. owner/repo@v1.2.3")
        result.descriptor["upstream"] = record(files, repository, version, upstream_path, upstream_commit)
    if sites:
        result.descriptor["sites"] = [_site(s) for s in sites]
    text = _descriptor_text(result)
    written = None
    if not dry_run and out is None:
        ws = workspace()
        out = confine(ws.root, ws.apps_dir / name / "app.yaml", f"apps/{name}/app.yaml")
    # what `apps show` would refuse is never written (issue 32)
    check_descriptor_text(text, out or Path(f"apps/{name}/app.yaml"))
    if not dry_run and out is not None:
        written = _write_app(out, files, text, force, copy=not upstream)
    if as_json:
        print_json({"descriptor": result.descriptor, "written": str(written) if written else None,
                    "unresolved": [{"service": s, "reason": r} for s, r in result.unresolved],
                    "telemetry_edges": [list(e) for e in result.telemetry],
                    "fault_control_edges": [list(e) for e in result.controls],
                    "roles": dict(result.roles),
                    "external": [{"service": s, "address": a} for s, a in result.external],
                    "skipped": list(result.skipped),
                    "source": [{"service": s, "read": n, "matched": m} for s, n, m in result.source_files],
                    "unread": [{"service": s, "configmap": c} for s, c in result.unread]})
        return 0
    if dry_run:
        click.echo(text, nl=False)
    for line in summary(result, written):
        click.echo(line, err=dry_run)
    return 0


def _site(text: str) -> dict[str, str]:
    parts = text.split(":")
    if len(parts) != 3 or not all(parts) or parts[2] not in ("active", "standby"):
        raise UsageError(f"--site {text!r}: expected NAME:ZONE:ROLE with ROLE active or standby, e.g. a:zone-a:active")
    return {"name": parts[0], "zone": parts[1], "role": parts[2]}


def summary(result: Imported, written: Path | None) -> list[str]:
    d = result.descriptor
    indirect = sum(1 for e in d["edges"] if len(e) > 2)
    lines = [f"{len(d['services'])} services, {len(d['edges'])} edges ({indirect} found outside the manifest env), "
             f"entry {d['entry']}" + (f"; wrote {written}" if written else "")]
    for role, label in (("fault-control", "fault control (left alone)"), ("telemetry", "telemetry (observer)"),
                        ("load", "load generator (client)")):
        found = [s for s, r in result.roles if r == role]
        if found:
            lines.append(f"{label}: {', '.join(found)}")
    if result.controls or result.telemetry:
        lines.append(f"left out of the graph: {len(result.controls)} edges to fault controls, "
                     f"{len(result.telemetry)} telemetry edges")
    lines += [f"unresolved: {s}: {r}" for s, r in result.unresolved]
    lines += [f"external: {s} -> {a}" for s, a in result.external]
    lines += [f"skipped: {reason}" for reason in result.skipped]
    lines += [f"source: {s}: read {n} {'file' if n == 1 else 'files'}, {m} naming another service" if n else
              f"source: {s}: no file read (no folder named after it, its workload or an alias)"
              for s, n, m in result.source_files]
    lines += [f"not read: {s}: {c} (its source never names it; no edge)" for s, c in result.unread]
    return lines


def _descriptor_text(result: Any) -> str:
    head = ["# Derived by `faultkit apps import`; review entry, aliases, and add source/common/build if",
            "# faultkit has the services' source."]
    head += [f"# unresolved: {s}: {r}" for s, r in result.unresolved]
    head += [f"# external: {s} -> {a}" for s, a in result.external]
    head += [f"# skipped: {reason}" for reason in result.skipped]
    # libyaml's emitter when present: the same text, ten times faster at thousands of services (issue 32)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    body = yaml.dump(result.descriptor, Dumper=dumper, sort_keys=False, default_flow_style=None, width=120)
    return "\n".join(head) + "\n" + body


def _write_app(out: Path, manifests: list[Path], text: str, force: bool, copy: bool = True) -> Path:
    if out.exists() and not force:
        raise InputError(f"{out}: already exists; pass --force to replace it, or --out elsewhere")
    folder = out.parent / "manifests"
    if copy:
        copies = _copy_names([m for m in manifests if m.resolve().parent != folder.resolve()])
        for m, name in copies:
            target = folder / name
            if target.exists() and target.read_bytes() != m.read_bytes():
                raise InputError(f"{target}: a different file of that name is already there; rename one of them")
        for m, name in copies:
            folder.mkdir(parents=True, exist_ok=True)
            # a symlink planted at the copy's name must not carry the write out of the app's folder
            shutil.copyfile(m, confine(out.parent, folder / name, "manifest copy"))
    atomic_write(out, text)
    return out


def _copy_names(files: list[Path]) -> list[tuple[Path, str]]:
    """Each file and its name in manifests/, the one folder an app's manifests are read from (its
    *.yaml and *.yml): a .json keeps its name with .yaml after it (JSON is YAML); two of one name
    from different folders are refused."""
    out: list[tuple[Path, str]] = []
    seen: dict[str, Path] = {}
    for m in files:
        name = m.name + ".yaml" if m.suffix.lower() == ".json" else m.name
        if name in seen:
            raise InputError(f"{m}: {seen[name]} has the same file name and both would be manifests/{name}; "
                             "rename one of them")
        seen[name] = m
        out.append((m, name))
    return out


@click.command("verify")
@click.argument("app")
@click.option("--manifests", "folder", required=True, type=click.Path(path_type=Path),
              help="The folder holding your copy of the upstream files.")
@json_option
def verify_cmd(app: str, folder: Path, as_json: bool) -> int:
    """Check that a copy of an application's upstream files is the version its descriptor records.

    Example: faultkit apps verify boutique --manifests ~/src/microservices-demo/release
    """
    result = verify(load_app(workspace(), app), folder)
    if as_json:
        print_json({"app": result.app, "repository": result.repository, "version": result.version, "ok": result.ok,
                    "files": [f.__dict__ for f in result.files]})
    else:
        for f in result.files:
            detail = f" (sha256 {f.got}, want {f.want})" if f.status == "different" else ""
            click.echo(f"{f.status:9} {f.path}{detail}")
        verdict = "is" if result.ok else "is NOT"
        click.echo(f"{folder} {verdict} {result.repository} at {result.version}")
    if not result.ok:
        raise InputError(f"{folder}: not {result.repository} at {result.version} "
                         f"({sum(f.status != 'ok' for f in result.files)} of {len(result.files)} files differ or are "
                         "missing); check out that version")
    return 0


apps_cmds.apps.add_command(import_cmd)
apps_cmds.apps.add_command(verify_cmd)
