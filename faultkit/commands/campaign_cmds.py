"""`faultkit campaign run`, `plan` and `render`: many validations over parallel instances."""

from __future__ import annotations

import hashlib
import json
import re
import signal
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from rich.live import Live
from rich.table import Table

from faultkit.campaigns import summary as summaries
from faultkit.campaigns.board import Board
from faultkit.campaigns.collect import collect
from faultkit.campaigns.plan import PLAN, Plan, catalog_faults, new_plan
from faultkit.campaigns.projection import project
from faultkit.campaigns.runner import Campaign
from faultkit.campaigns.timing import Overheads, measure
from faultkit.campaigns.view import duration, render
from faultkit.commands.common import console, json_option, print_json, workspace
from faultkit.commands.platform_options import PlatformChoice, platform_options
from faultkit.commands.validate_cmds import seconds
from faultkit.errors import UsageError
from faultkit.extras import require
from faultkit.jsonio import load_image_map
from faultkit.names import make_folder
from faultkit.platforms import DEFAULT, KubernetesOptions, options_class
from faultkit.validators.screening import SUPPORTED_VERSIONS
from faultkit.workspace import Workspace
from faultkit.yamlio import atomic_write, dump_yaml

# a cloud host's CPU steal rises with its neighbours: a campaign on a known-noisy host may allow more
max_steal_option = click.option(
    "--max-steal", type=click.FloatRange(min=0, max=1),
    help="Share of CPU time stolen in a window above which a cycle is overloaded (passed to validate; default: "
         "its own).")


@click.group("campaign")
def campaign() -> None:
    """Validate many faults in parallel over isolated app instances, resumable after any crash."""


def _stability(stability: str | None) -> str | None:
    """--stability as validate takes it, checked now rather than in every worker's first run."""
    if stability in (None, "same"):
        return stability
    seconds(stability)  # a usage error naming the bad length
    return stability


def _overheads(ws: Workspace) -> Overheads:
    return measure([ws.evidence_dir])


@campaign.command("run")
@click.option("--app", help="Application whose faults to validate (not with --resume).")
@click.option("--fault", "faults", multiple=True, help="A fault to validate (repeatable).")
@click.option("--all", "all_faults", is_flag=True, help="Every fault of the app's catalog.")
@click.option("--changed-since", "since", metavar="REF", help="Faults whose entry or patch changed since a git ref.")
@click.option("--workers", default=1, show_default=True, type=int, help="App instances validating side by side.")
@click.option("--window", default="5m", show_default=True, help="Length of each observation window.")
@click.option("--interval", default="2s", show_default=True, help="Sampling interval within a window.")
@click.option("--repeat", default=2, show_default=True, type=int, help="Injections that must all pass.")
@click.option("--attempts", default=3, show_default=True, type=int,
              help="Runs a fault may take when one ends in an error to retry (overload, a crash).")
@click.option("--max-load", type=click.FloatRange(min=0, max=1e9),
              help="Load average per core above which a cycle is overloaded (passed to validate; default: its own).")
@max_steal_option
@click.option("--dir", "folder", type=click.Path(path_type=Path, file_okay=False),
              help="Campaign folder (default evidence/campaigns/<app>-<time>/).")
@click.option("--resume", type=click.Path(path_type=Path, file_okay=False, exists=True),
              help="Continue the campaign in this folder after a crash or a stop.")
@click.option("--keep-up", is_flag=True, help="Leave the instances running at the end.")
@click.option("--namespace-prefix", "prefix", default=None,
              help="kubernetes: instance k runs in namespace PREFIX-k (default fk-<app>-<digest of the folder>).")
@click.option("--rules", type=click.Choice([str(v) for v in SUPPORTED_VERSIONS]), default=None,
              help="Screening rules each validation judges by (passed to validate; default: its own).")
@click.option("--stability", metavar="WINDOW|same",
              help="Validate each admitted fault again at this window length, or `same` (passed to validate).")
@platform_options(options=False)  # each instance's `faultkit up` reads the platform's options itself
@json_option
def run_cmd(app: str | None, faults: tuple[str, ...], all_faults: bool, since: str | None, workers: int, window: str,
            interval: str, repeat: int, attempts: int, max_load: float | None, max_steal: float | None,
            folder: Path | None,
            resume: Path | None, keep_up: bool, prefix: str | None, rules: str | None, stability: str | None,
            platform: PlatformChoice, as_json: bool) -> int:
    """Validate faults over N isolated instances, longest expected first; resumable.

    Exits 0 when every fault is admitted, 1 when any is rejected, flaky or ended in an error.

    Example: faultkit campaign run --app minishop --all --workers 2 --window 20s
    """
    ws = workspace()
    if resume is not None:
        if app or faults or all_faults or since or folder or rules or stability:
            raise UsageError("--resume DIR continues that folder's plan; drop --app, --fault, --all, "
                             "--changed-since, --dir, --rules and --stability")
        folder, plan = resume, Plan.read(resume)
    else:
        if not app:
            raise UsageError("name the app with --app APP (or continue a campaign with --resume DIR)")
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        folder = folder or ws.evidence_dir / "campaigns" / f"{app}-{stamp}"
        if (folder / PLAN).exists():
            raise UsageError(f"{folder}: holds a campaign already; continue it with --resume {folder}")
        name = platform.name or DEFAULT
        namespaced = options_class(name).namespaced  # an instance is a namespace of its own
        if namespaced:
            prefix = prefix or f"fk-{app}-{hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:6]}"
            _check_name("--namespace-prefix", prefix)
        plan = new_plan(ws, app, faults, all_faults, since, workers=workers, platform=name,
                        window_s=seconds(window), interval_s=seconds(interval), repeat=repeat, attempts=attempts,
                        max_load=max_load, max_steal=max_steal, overheads=_overheads(ws),
                        namespace_prefix=prefix if namespaced else None,
                        rules=int(rules) if rules else None, stability=_stability(stability))
        make_folder(folder, "--dir")
        plan.write(folder)
    board = Board(plan)
    stop = threading.Event()
    job = Campaign(ws, folder, plan, board, stop, keep_up=keep_up)
    failure: list[BaseException] = []

    def body() -> None:
        try:
            job.run()
        except BaseException as e:  # noqa: BLE001 - handed to the main thread, which reports it
            failure.append(e)

    def stop_on(signum: int, _frame: Any) -> None:
        stop.set()

    old = {s: signal.signal(s, stop_on) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        thread = threading.Thread(target=body, name="campaign")
        thread.start()
        with Live(render(board), console=console(stderr=True), refresh_per_second=2, transient=as_json) as live:
            while thread.is_alive():
                thread.join(0.5)
                live.update(render(board))
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    result = summaries.summarize(folder, plan)
    summaries.write(folder, result)
    if failure:
        raise failure[0]
    if as_json:
        print_json({**result, "folder": str(folder)})
    else:
        _render_summary(result, folder)
    if stop.is_set():
        click.echo(f"Stopped; continue with: faultkit campaign run --resume {folder}", err=True)
        return 130
    return 0 if result["admitted"] == result["faults"] else 1


def _render_summary(result: dict[str, Any], folder: Path) -> None:
    out = console()
    table = Table("", "admitted", "rejected", "flaky", "errors", title=f"campaign {folder.name}")
    for group in ("per_mechanism", "per_category"):
        for name, row in result[group].items():
            table.add_row(name, *(str(row[k]) for k in ("admitted", "rejected", "flaky", "errors")))
    table.add_row("all", *(str(result[k]) for k in ("admitted", "rejected", "flaky", "errors")), style="bold")
    out.print(table)
    if result["failed_rules"]:
        out.print("failed rules: " + ", ".join(f"{r} {n}" for r, n in result["failed_rules"].items()))
    for f in result["per_fault"]:
        wall = duration(f["wall_s"]) if f["wall_s"] is not None else "-"
        out.print(f"  {f['fault']}: {f['outcome'] or f['state']} in {wall} ({len(f['attempts'])} runs)")
    out.print(f"{result['done']}/{result['faults']} done in {duration(result['total_wall_s'])} "
              f"over {result['workers']} workers; summary in {folder / summaries.SUMMARY}")


@campaign.command("render")
@click.option("--app", required=True, help="Application whose faults to validate.")
@click.option("--fault", "faults", multiple=True, help="A fault to validate (repeatable).")
@click.option("--all", "all_faults", is_flag=True, help="Every fault of the app's catalog.")
@click.option("--changed-since", "since", metavar="REF", help="Faults whose entry or patch changed since a git ref.")
@click.option("--workers", required=True, type=click.IntRange(min=1), help="Indices of the Job (namespaces).")
@click.option("--image", required=True, help="The faultkit image the Job's pods run (with the catalog in it).")
@click.option("--name", default="faultkit-campaign", show_default=True, help="Job, namespace prefix, object names.")
@click.option("--window", default="5m", show_default=True, help="Length of each observation window.")
@click.option("--interval", default="2s", show_default=True, help="Sampling interval within a window.")
@click.option("--repeat", default=2, show_default=True, type=int, help="Injections that must all pass.")
@click.option("--attempts", default=3, show_default=True, type=int, help="Runs a fault may take (errors to retry).")
@click.option("--max-load", type=click.FloatRange(min=0, max=1e9),
              help="Load average per core above which a pod's cycle is overloaded (default: validate's own).")
@max_steal_option
@click.option("--storage", default="20Gi", show_default=True, help="Size of the evidence volume (a claim).")
@click.option("--host-path", "host_path", default=None, metavar="DIR",
              help="Evidence in this folder of the node instead of a claim (one-node clusters: read it in place).")
@click.option("--app-images", "app_images", type=click.Path(path_type=Path, dir_okay=False, exists=True),
              help="JSON file mapping each service to its image on the nodes (`faultkit campaign image` writes one); "
                   "the pods build nothing, so only config faults can run.")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), help="Write the YAML here, not to stdout.")
def render_cmd(app: str, faults: tuple[str, ...], all_faults: bool, since: str | None, workers: int, image: str,
               name: str, window: str, interval: str, repeat: int, attempts: int, max_load: float | None,
               max_steal: float | None, storage: str,
               host_path: str | None,
               app_images: Path | None, out: Path | None) -> int:
    """Write the campaign as a Kubernetes Indexed Job: one namespace and one share of the queue per index.

    Each index runs `faultkit campaign run --resume` on its share with the kubernetes platform, in-cluster,
    in namespace NAME-k, writing bundles to the evidence volume; `faultkit campaign collect` records them.

    Example: faultkit campaign render --app minishop --all --workers 8 --image faultkit:0.1 --out job.yaml
    """
    require("kubernetes", "faultkit campaign render")
    from faultkit.campaigns import job  # the Job's objects are the kubernetes client's models

    ws = workspace()
    _check_name("--name", name)
    if host_path is not None and not host_path.startswith("/"):
        raise UsageError(f"--host-path {host_path!r}: give an absolute folder of the node")
    images = load_image_map(app_images) if app_images else None
    plan = new_plan(ws, app, faults, all_faults, since, workers=workers, platform=KubernetesOptions.name,
                    window_s=seconds(window), interval_s=seconds(interval), repeat=repeat, attempts=attempts,
                    max_load=max_load, max_steal=max_steal, overheads=_overheads(ws))
    text = dump_yaml(job.render(plan, name, image, workers, job.Volume(storage, host_path), images))
    if out is None:
        click.echo(text, nl=False)
    else:
        atomic_write(out, text)
        console(stderr=True).print(f"wrote {out}: {len(plan.faults)} faults in {workers} shares")
    return 0


def _check_name(option: str, name: str) -> None:
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?", name):
        raise UsageError(f"{option} {name!r}: use lowercase letters, digits and '-' (a Kubernetes name, "
                         "at most 42 characters)")


@campaign.command("image")
@click.option("--app", required=True, help="Application whose service images the pods deploy.")
@click.option("--tag", required=True, help="Tag of the faultkit image (the Job's --image).")
@click.option("--load", "loader", default=None, envvar="FAULTKIT_KUBERNETES_LOAD", metavar="COMMAND",
              help="Command that puts images on the nodes, run as `COMMAND IMAGE...` (e.g. `kind load docker-image`).")
@click.option("--kubeconfig", default=None, help="Cluster to load into (default: $KUBECONFIG, ~/.kube/config).")
@click.option("--images-out", "images_out", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="Write the service -> image map here (the Job's --app-images).")
@json_option
def image_cmd(app: str, tag: str, loader: str | None, kubeconfig: str | None, images_out: Path,
              as_json: bool) -> int:
    """Build the faultkit image (Debian base made with debootstrap, nothing pulled) and the app's images for a Job.

    Example: faultkit campaign image --app minishop --tag fk:0.1 --load 'kind load docker-image' --images-out a.json
    """
    if loader:  # loading onto the nodes asks the cluster which images they have
        require("kubernetes", "faultkit campaign image --load")
    from faultkit.campaigns.images import prepare

    made = prepare(workspace(), app, tag, loader, kubeconfig)
    atomic_write(images_out, json.dumps(made.app_images, indent=1, sort_keys=True) + "\n")
    if as_json:
        print_json({"image": made.toolkit.__dict__, "app_images": made.app_images})
    else:
        console().print(f"{made.toolkit.tag} ({made.toolkit.id[:19]}) in {made.toolkit.seconds:g}s; "
                        f"{len(made.app_images)} service images in {images_out}"
                        + (" ; all on the nodes" if loader else ""))
    return 0


@campaign.command("collect")
@click.argument("source", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--into", type=click.Path(path_type=Path, file_okay=False),
              help="Where the bundles go (default evidence/campaigns/<source folder name>/bundles/).")
@click.option("--trust", "trust", multiple=True, type=click.Path(path_type=Path, dir_okay=False, exists=True),
              help="Public key (PEM) of the validator that signed the bundles (the Job's); repeatable.")
@json_option
def collect_cmd(source: Path, into: Path | None, trust: tuple[Path, ...], as_json: bool) -> int:
    """Record the verdicts of a campaign run elsewhere (a Job's evidence volume, copied out).

    A bundle is recorded only when it verifies, judges again to its verdict, is signed by a trusted
    key and was made on the entry as it is now. Exits 1 when any bundle is refused or stale.

    Example: faultkit campaign collect ./volume-copy
    """
    ws = workspace()
    rows = collect(ws, source, into or ws.evidence_dir / "campaigns" / source.resolve().name / "bundles", trust)
    if as_json:
        print_json([r.__dict__ for r in rows])
    else:
        for r in rows:
            console().print(f"{r.fault}: {r.outcome} ({r.bundle or r.detail})")
    return 1 if any(r.outcome in ("refused", "stale") for r in rows) else 0


@campaign.command("plan")
@click.option("--app", required=True, help="Application whose catalog sets the mix of mechanisms.")
@click.option("--window", default="5m", show_default=True, help="Length of each observation window.")
@click.option("--repeat", default=2, show_default=True, type=int, help="Injections that must all pass.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1), help="Instances in parallel.")
@click.option("--faults", "total", type=click.IntRange(min=1), help="Project this many faults in the catalog's mix.")
@json_option
def plan_cmd(app: str, window: str, repeat: int, workers: int, total: int | None, as_json: bool) -> int:
    """Expected wall time of a campaign: the protocol's windows plus measured setup times.

    Example: faultkit campaign plan --app minishop --window 5m --workers 4 --faults 700
    """
    ws = workspace()
    mix: dict[str, int] = {}
    for f in catalog_faults(ws, app).values():
        mix[f.mechanism] = mix.get(f.mechanism, 0) + 1
    p = project(mix, _overheads(ws), seconds(window), repeat, workers, total)
    if as_json:
        print_json(p.as_dict())
        return 0
    out = console()
    table = Table("mechanism", "faults", "windows", "setup", "changes/cycle", "per fault",
                  title=f"{app}: {p.faults} faults, {seconds(window):g}s windows, repeat {repeat}, {workers} workers")
    over = p.overheads
    for m, n in p.counts.items():
        table.add_row(m, str(n), str(p.windows[m]), f"{over.setup_s[m]:g}s", f"{over.change_s[m]:g}s",
                      duration(p.per_fault_s[m]))
    out.print(table)
    out.print(f"one after another: {duration(p.serial_s)}; on {workers} workers: {duration(p.wall_s)} "
              f"({p.faults_per_hour:g} faults/hour, with {over.instance_up_s:g}s to bring each instance up)")
    return 0
