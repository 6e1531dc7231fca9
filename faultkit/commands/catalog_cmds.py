"""`faultkit catalog ...`: lint the entries, print the schema."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click
from rich.markup import escape

from faultkit.catalog.lint import lint as run_lint
from faultkit.commands.common import console, json_option, print_json, workspace
from faultkit.labels.lint_rule import register as register_evidence_rule
from faultkit.schema import SCHEMAS, schema_text


@click.group()
def catalog() -> None:
    """Check, build and export the fault catalog."""


@catalog.command("lint")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--strict", is_flag=True, help="Treat warnings (such as unknown keys) as errors.")
@json_option
def lint_cmd(paths: tuple[Path, ...], strict: bool, as_json: bool) -> None:
    """Check catalog entries: schema, then semantics against the app descriptors.

    Reports every problem at once with file, line and field path. Exits 1 on any error.

    Example: faultkit catalog lint catalog/minishop
    """
    register_evidence_rule()
    report = run_lint(workspace(), paths, strict=strict)
    if as_json:
        print_json({"files": report.files, "errors": report.errors, "warnings": report.warnings,
                    "findings": [dataclasses.asdict(f) for f in report.findings]})
    else:
        out = console()
        for f in report.findings:
            style = "red" if f.severity == "error" else "yellow"
            out.print(f"[{style}]{f.severity}[/{style}] {escape(f.render())}", markup=True)
        out.print(f"{report.files} files, {report.errors} errors, {report.warnings} warnings")
    raise SystemExit(1 if report.errors else 0)


@catalog.command("schema")
@click.argument("name", default="entry", type=click.Choice(SCHEMAS))
def schema_cmd(name: str) -> None:
    """Print a published JSON Schema (draft 2020-12): entry (default), app, schedule or release.

    Example: faultkit catalog schema entry > entry.schema.json
    """
    click.echo(schema_text(name), nl=False)
