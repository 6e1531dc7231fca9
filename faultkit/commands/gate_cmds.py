"""`faultkit gate`: the CI check for catalog pull requests."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from faultkit.catalog.lint_cache import Store
from faultkit.commands.catalog_cmds import EVIDENCE_RULES
from faultkit.commands.common import console, json_option, print_json, workspace
from faultkit.commands.platform_options import PlatformChoice, platform_options
from faultkit.gate.core import GateResult, find_validator, run_gate
from faultkit.gate.github import step_summary, workflow_commands
from faultkit.gate.junit import failure_text, write_junit
from faultkit.platforms import DEFAULT


@click.command("gate")
@click.option("--base", "base", required=True, metavar="REF", help="What the pull request is compared against.")
@click.option("--junit", "junit", type=click.Path(path_type=Path), help="Write JUnit XML here.")
@click.option("--github", is_flag=True, help="Print GitHub Actions annotations (and a step summary).")
@click.option(
    "--validate/--no-validate",
    default=False,
    show_default=True,
    help="Also run the admission protocol on each changed entry (needs a platform).",
)
@click.option("--window", default="20s", show_default=True, help="Observation window when validating.")
@click.option("--stability", "stability", metavar="WINDOW|same|none", default="same", show_default=True,
              help="When validating: check an admitted entry again at this window (`same`: an independent "
                   "run at --window); admitted once is flaky and fails the gate. `none`: one run.")
@click.option("--repeat", type=click.IntRange(min=1), default=2, show_default=True,
              help="Counted injections per entry when validating.")
@click.option("--max-load", type=click.FloatRange(min=0, max=1e9), default=None,
              help="When validating: a cycle with a higher load average per core is an error to retry "
                   "(default: validate's).")
@click.option("--rollout-timeout", type=click.FloatRange(min=1), default=60.0, show_default=True,
              help="When validating: seconds a change's rollout may take before it counts as not ready.")
@click.option("--alerts", default="", envvar="FAULTKIT_ALERTS", metavar="URL",
              help="When validating: a Prometheus that evaluates the app's alert pack, as for validate. Needed "
                   "when REF's faultkit.toml asks alert-raised to decide ([validate] alert_raised = true).")
@click.option("--no-cache", is_flag=True, help="Lint afresh, neither reading nor writing .faultkit_cache/.")
@platform_options(help="Where the app runs when validating.")
@click.option("--accept-privileged", is_flag=True,
              help="A maintainer accepts the privileged changes (trust, keys, rule settings, descriptors, pinned "
                   "sources, workflows, caches, the toolkit): listed, but no longer failing the gate.")
@click.option("--trust-config", "trust_config", type=click.Path(path_type=Path, dir_okay=False),
              help="A TOML file outside the repository whose [trust] keys are the trusted validators (default: "
                   "$FAULTKIT_TRUST_CONFIG, else faultkit.toml and keys/ as committed at REF).")
@json_option
def gate_cmd(base: str, junit: Path | None, github: bool, validate: bool, window: str, stability: str,
             repeat: int, max_load: float | None, rollout_timeout: float, alerts: str, no_cache: bool,
             platform: PlatformChoice, accept_privileged: bool, trust_config: Path | None, as_json: bool) -> int:
    """Lint (and with --validate, validate) the entries and patches changed since REF.

    Compares merge-base(REF, HEAD)..HEAD and refuses a dirty working tree. Changed patches bring
    in the entries that use them, changed evidence the entries it backs. Each changed entry is checked
    together with the whole catalog's invariants (unique ids, no duplicate changes), and a recorded
    admission against its evidence with the trust anchors of REF (never the pull request's own).
    Privileged changes are listed and fail the gate unless --accept-privileged. Exits 1 when any
    changed entry is rejected or a privileged change is not accepted.

    Example: faultkit gate --base origin/main --junit gate.xml --github
    """
    ws = workspace()
    validator = None
    if validate:  # validate_cmds pulls in the validator and the samplers: only when they will run
        from faultkit.commands.validate_cmds import seconds
        from faultkit.validators.alert_rule import required

        second = None if stability == "none" else seconds(window if stability == "same" else stability)
        # whether alert-raised decides is REF's to say, as the trust anchors are, never the pull request's
        validator = find_validator(seconds(window), platform=platform.name or DEFAULT, repeat=repeat, max_load=max_load,
                                   rollout_timeout_s=rollout_timeout, stability_s=second, options=platform.options,
                                   alerts=alerts, alert_raised=required(ws.root, base))
    result = run_gate(ws, base, validator, None if no_cache else Store.default(ws), EVIDENCE_RULES,
                      accept_privileged, trust_config)
    if junit:
        write_junit(result, junit)
    if github:
        for line in workflow_commands(result):
            click.echo(line)
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            with open(summary, "a", encoding="utf-8") as f:
                f.write(step_summary(result))
    if as_json:
        print_json(_as_data(result))
    else:
        _render(result)
    return 0 if result.passed else 1


def _as_data(result: GateResult) -> dict:
    return {
        "base": result.changes.base,
        "head": result.changes.head,
        "passed": result.passed,
        "notes": list(result.notes),
        "privileged": [dataclasses.asdict(p) for p in result.privileged],
        "accepted": result.accepted,
        "cases": [
            {
                "id": c.id,
                "file": c.file,
                "why": c.why,
                "passed": c.passed,
                "validation": c.validation,
                "recorded": c.recorded,
                "failed_rules": list(c.failed_rules),
                "findings": [dataclasses.asdict(f) for f in c.findings],
            }
            for c in result.cases
        ],
    }


def _render(result: GateResult) -> None:
    out = console()
    table = Table(title=f"faultkit gate: {result.changes.base[:10]}..{result.changes.head[:10]}")
    for col in ("entry", "why", "lint", "validation", "recorded verdict", "result"):
        table.add_column(col)
    for c in result.cases:
        lint_cell = Text(f"{len(c.errors)} errors", style="red") if c.errors else "ok"
        verdict = Text("pass", style="green") if c.passed else Text("rejected", style="red")
        table.add_row(c.id, c.why, lint_cell, c.validation, c.recorded or "-", verdict)
    if result.cases:
        out.print(table)
    for c in result.cases:
        if not c.passed:
            out.print(f"[red]{escape(c.id)}[/red]\n{escape(failure_text(c))}", markup=True, highlight=False)
    for note in result.notes:
        out.print(f"note: {note}", markup=False)
    if result.privileged:
        state = "accepted by a maintainer" if result.accepted else "need a maintainer (--accept-privileged)"
        out.print(f"privileged changes, {state}:", markup=False)
        for p in result.privileged:
            out.print(f"  {p.render()}", markup=False)
    rejected = sum(not c.passed for c in result.cases)
    out.print(f"{len(result.cases)} changed entries, {rejected} rejected", markup=False)
    if result.privileged and not result.privileged_passed:
        out.print(f"{len(result.privileged)} privileged changes not accepted", markup=False)
