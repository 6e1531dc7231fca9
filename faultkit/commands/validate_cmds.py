"""`faultkit validate`, `faultkit judge`, `faultkit recover`: admission with sealed evidence."""

from __future__ import annotations

import os
from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from faultkit.bundles import check_trusted
from faultkit.commands.common import console, json_option, print_json, seconds, workspace
from faultkit.commands.platform_options import PlatformChoice, platform_options
from faultkit.errors import InputError, UsageError
from faultkit.keys import trusted_or_own
from faultkit.labels.core import LABELS, recompute, write_beside
from faultkit.observe.load import MAX_LOAD_PER_CORE, MAX_STEAL, Limits
from faultkit.validators import alert_rule
from faultkit.validators.journal import Journal, recover
from faultkit.validators.judge import Verdict, describe_sources, outcome, recorded_sources, verify_and_judge
from faultkit.validators.params import ValidationParams
from faultkit.validators.pipeline import validate
from faultkit.validators.screening import RULES_VERSION, SUPPORTED_VERSIONS
from faultkit.validators.stability import Stable, validate_stable
from faultkit.workspace import Workspace


@click.command("validate")
@click.option("--fault", "fault_id", required=True, help="The id of the catalog entry to validate.")
@click.option("--window", default="5m", show_default=True, help="Length of each observation window (e.g. 20s, 5m).")
@click.option("--interval", default="2s", show_default=True, help="Sampling interval within a window.")
@click.option("--repeat", default=2, show_default=True, type=int, help="Injections that must all pass.")
@click.option("--evidence", type=click.Path(path_type=Path), help="Folder for the bundle (default evidence/<fault>/).")
@click.option("--timeout", "timeout_s", type=float, help="Give up (and revert) after this many seconds.")
@click.option("--no-record", is_flag=True, help="Do not write the verdict into the catalog entry.")
@click.option("--key", "key", type=click.Path(path_type=Path, dir_okay=False, exists=True),
              help="Private ed25519 key (PEM) that signs the bundle (default: FAULTKIT_KEY, [validator] key in "
                   "faultkit.toml, else ~/.config/faultkit/validator.key, made on first use).")
@click.option("--max-load", type=click.FloatRange(min=0, max=1e9), default=MAX_LOAD_PER_CORE, show_default=True,
              help="Load average per core above which a cycle measures the machine: the run ends as an error.")
@click.option("--max-steal", type=click.FloatRange(min=0, max=1), default=MAX_STEAL, show_default=True,
              help="Share of CPU time the hypervisor may steal in a window before the cycle measures the machine.")
@click.option("--rules", "rules", type=click.Choice([str(v) for v in SUPPORTED_VERSIONS]), default=str(RULES_VERSION),
              show_default=True,
              help="Screening rules to judge by: 3 runs the probe on its own clock and asks for a share of failures; "
                   "4 also takes each of the probe's own requests off the counted traffic (keeps-serving included).")
@click.option("--stability", "stability", metavar="WINDOW|same",
              help="When admitted, validate again at this window length (or `same`: an independent run) and "
                   "record that verdict beside the first; admitted once and not twice is flaky.")
@click.option("--jaeger", default="", envvar="FAULTKIT_JAEGER", metavar="URL",
              help="Jaeger's query URL (on kubernetes also k8s://NAMESPACE/SERVICE:PORT): each window records "
                   "its spans (operations, calls, failing paths) as evidence; no rule reads them. Default: "
                   "$FAULTKIT_JAEGER, else the descriptor's signals.traces.jaeger, else none.")
@click.option("--alerts", default="", envvar="FAULTKIT_ALERTS", metavar="URL",
              help="A Prometheus that evaluates the app's alert pack (apps/<app>/alerts.yaml), a URL or on "
                   "kubernetes k8s://NAMESPACE/SERVICE:PORT: each window records the alerts pending or firing in "
                   "it, and the verdict reports alert-raised. Default: $FAULTKIT_ALERTS, else none.")
@platform_options()
@json_option
def validate_cmd(fault_id: str, window: str, interval: str, repeat: int, evidence: Path | None,
                 timeout_s: float | None, no_record: bool, key: Path | None, max_load: float, max_steal: float,
                 rules: str, stability: str | None, jaeger: str, alerts: str, platform: PlatformChoice,
                 as_json: bool) -> int:
    """Prove a fault on the running application: inject, observe, revert, judge.

    Exits 0 when admitted, 1 when rejected or flaky.

    Example: faultkit validate --fault minishop-checkout-env-payment-addr-port --window 20s --stability 30s
    """
    ws = workspace()
    if key is not None:
        # the bundle is sealed and signed deep in the pipeline, which reads the key the way every run does
        os.environ["FAULTKIT_KEY"] = str(key.resolve())
    params = ValidationParams(window_s=seconds(window), interval_s=seconds(interval), repeat=repeat,
                              limits=Limits(max_load_per_core=max_load, max_steal=max_steal), rules=int(rules),
                              jaeger=jaeger, alerts=alerts, alert_raised=alert_rule.required(ws.root))
    if stability is not None and no_record:
        raise UsageError("--stability records both verdicts in the entry; drop --no-record")
    second_window = None if stability is None else params.window_s if stability == "same" else seconds(stability)
    if second_window is not None:
        ValidationParams(window_s=second_window, interval_s=params.interval_s, repeat=repeat).check()
    out = console(stderr=True)
    with out.status("starting") as status:
        def progress(stage: str, detail: str) -> None:
            status.update(Text.assemble((fault_id, "bold"), f" {stage}: {detail}"))

        opened = platform.open(ws)
        if second_window is None:
            verdict, folder = validate(ws, opened, fault_id, params, evidence, progress, timeout_s,
                                       record=not no_record)
        else:
            return _stable(ws, validate_stable(ws, opened, fault_id, params, second_window, evidence, progress,
                                               timeout_s), as_json)
    if verdict["status"] == "admitted":
        write_beside(ws, folder)  # derived from the sealed bundle, so written after the seal, outside it
    if as_json:
        print_json({**verdict, "bundle": str(folder)})
    else:
        render_verdict(verdict, folder)
    return 0 if verdict["status"] == "admitted" else 1


def _stable(ws: Workspace, result: Stable, as_json: bool) -> int:
    for verdict, folder in ((result.first, result.first_bundle), (result.second, result.second_bundle)):
        if verdict is not None and folder is not None and verdict["status"] == "admitted":
            write_beside(ws, folder)
    if as_json:
        print_json({"status": result.status, "first": {**result.first, "bundle": str(result.first_bundle)},
                    "second": {**result.second, "bundle": str(result.second_bundle)} if result.second else None})
    else:
        render_verdict(result.first, result.first_bundle)
        if result.second is not None and result.second_bundle is not None:
            render_verdict(result.second, result.second_bundle)
        click.echo(f"stability: {result.status}" + ("" if result.second else " (the first verdict did not admit)"))
    return 0 if result.status == "admitted" else 1


def render_verdict(verdict: Verdict, folder: Path) -> None:
    out = console()
    table = Table("rule", "cycle", "measured", "threshold", "result", title=f"{verdict['fault']}: {verdict['status']}")
    for r in verdict["rules"]:
        if r.get("counted") is False:
            continue
        word = outcome(r, verdict)
        result = Text(word, style={"pass": "green", "FAIL": "red"}.get(word, ""))
        table.add_row(r["rule"], str(r.get("cycle", "")), str(r["measured"]), str(r["threshold"]), result)
    out.print(table)
    out.print(verdict["summary"])
    out.print(f"evidence: {folder}")


@click.command("judge")
@click.argument("bundle", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option("--trust", "trust", multiple=True, type=click.Path(path_type=Path, dir_okay=False),
              help="Public key (PEM) of a trusted validator; repeatable. Adds to [trust] keys in faultkit.toml.")
@json_option
def judge_cmd(bundle: Path, trust: tuple[Path, ...], as_json: bool) -> int:
    """Recompute a verdict from its sealed evidence bundle alone and compare it with the recorded one.

    Refuses a tampered bundle, and one not signed by a trusted validator key (--trust, [trust] in
    faultkit.toml, else your own key). Exits 0 when the verdicts agree byte for byte.

    Example: faultkit judge evidence/minishop-checkout-env-payment-addr-port/20261129T120000Z
    """
    try:
        root: Path | None = Workspace.find(bundle).root
    except UsageError:
        root = None  # a bundle judged outside any catalog repository
    verdict, same = verify_and_judge(bundle)
    check_trusted(bundle, trusted_or_own(root, trust))
    labels = _labels_match(bundle) if same else None
    sources = recorded_sources(bundle)
    if as_json:
        print_json({"verdict": verdict, "matches_recorded": same, "labels_match": labels, "sources": sources})
    else:
        render_verdict(verdict, bundle)
        for line in sorted({describe_sources(s) for s in sources.values()}):
            click.echo(f"measured by: {line}")
        click.echo("recomputed verdict matches the recorded one" if same else "MISMATCH with the recorded verdict")
        if labels is not None:
            click.echo(f"recomputed {LABELS} matches the stored one")
    return 0 if same else 1


def _labels_match(bundle: Path) -> bool | None:
    """A stored labels.json must be what the bundle gives now, byte for byte; None when none is stored."""
    if not (bundle / LABELS).is_file():
        return None
    _, same = recompute(workspace(), bundle)
    if not same:
        raise InputError(f"{bundle / LABELS}: differs from the labels recomputed from the bundle; "
                         f"rewrite it with `faultkit label FAULT --write`, or restore it")
    return True


@click.command("recover")
@platform_options(default=None, help="Where the application runs (default: the platform the journal recorded, "
                                     "else local).")
def recover_cmd(platform: PlatformChoice) -> int:
    """Undo what an interrupted validation left on the application, from the write-ahead journal.
    The journal names the platform (and cluster, context, namespace) it was written on; recovering
    on another one is refused.

    Example: faultkit recover
    """
    ws = workspace()
    journal = Journal(ws.state_dir / "journal.json")
    if not journal.open_changes():
        journal.finish()  # an interrupted run may leave a journal that never recorded a change
        click.echo("nothing to recover: the journal holds no open change")
        return 0
    recorded = journal.target() or {}
    for line in recover(platform.open(ws, recorded.get("platform")), journal):
        click.echo(line)
    return 0
