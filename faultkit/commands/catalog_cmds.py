"""`faultkit catalog ...`: lint the entries, print the schema."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

import click

from faultkit.catalog.lint import lint as run_lint
from faultkit.catalog.lint_cache import Store
from faultkit.commands.common import json_option, print_json, workspace
from faultkit.schema import SCHEMAS, schema_text

# The declared-evidence rule of faultkit/labels (labels/lint_rule.py), by name: it is imported only
# when a file is linted afresh, so a lint answered from its cache does not load labels. The gate
# lints with it too: one rule set, so lint and gate share one cache.
EVIDENCE_RULES = ("faultkit.labels.lint_rule:check_declared_evidence",)


class CatalogGroup(click.Group):
    """`build` and `export` live in release_cmds, imported only when one of them runs (or for --help):
    `catalog lint` does not pay for the release code, the validator's bundles or the app model. The
    group names where they live (as cli.py does), so release_cmds does not import this module back."""

    LAZY = {"build": "faultkit.commands.release_cmds:build_cmd", "export": "faultkit.commands.release_cmds:export_cmd"}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.LAZY})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in self.LAZY:
            module, attribute = self.LAZY[name].split(":")
            command: click.Command = getattr(importlib.import_module(module), attribute)
            return command
        return super().get_command(ctx, name)


@click.group(cls=CatalogGroup)
def catalog() -> None:
    """Check, build and export the fault catalog."""


@catalog.command("lint")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--strict", is_flag=True, help="Treat warnings (such as unknown keys) as errors.")
@click.option("--drafts", is_flag=True, help="Lint drafts (default: drafts/): placeholders a validation fills in "
              "are reported as draft findings, not errors.")
@click.option("--no-cache", is_flag=True, help="Check every file afresh, neither reading nor writing .faultkit_cache/.")
@json_option
def lint_cmd(paths: tuple[Path, ...], strict: bool, drafts: bool, no_cache: bool, as_json: bool) -> int:
    """Check catalog entries: schema, then semantics against the app descriptors.

    Reports every problem at once with file, line and field path. Exits 1 on any error. Each
    file's result is cached in .faultkit_cache/ (git-ignored) by the digest of everything it
    depends on, so an unchanged catalog answers at once; --no-cache bypasses the cache.

    Example: faultkit catalog lint catalog/minishop
    """
    ws = workspace()
    if drafts:
        from faultkit.authoring.drafts import lint_drafts  # only drafts need the authoring rules

        report = lint_drafts(ws, paths)
    else:
        report = run_lint(ws, paths, strict=strict, store=None if no_cache else Store.default(ws),
                          evidence_rules=EVIDENCE_RULES)
    if as_json:
        print_json({"files": report.files, "errors": report.errors, "warnings": report.warnings,
                    "findings": [dataclasses.asdict(f) for f in report.findings]})
    else:
        for f in report.findings:  # click.echo, not rich: lint answers before rich would have loaded
            style = {"error": "red", "draft": "cyan"}.get(f.severity, "yellow")
            click.echo(f"{click.style(f.severity, fg=style)} {f.render()}")
        pending = sum(f.severity == "draft" for f in report.findings)
        click.echo(f"{report.files} files, {report.errors} errors, {report.warnings} warnings"
                   + (f", {pending} placeholders for validation to fill" if drafts else ""))
    return 1 if report.errors else 0


@catalog.command("schema")
@click.argument("name", default="entry", type=click.Choice(SCHEMAS))
def schema_cmd(name: str) -> int:
    """Print a published JSON Schema (draft 2020-12): entry (default), app, schedule or release.

    Example: faultkit catalog schema entry > entry.schema.json
    """
    click.echo(schema_text(name), nl=False)
    return 0
