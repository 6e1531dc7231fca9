"""The `faultkit` command: a click group whose commands live in faultkit/commands/.

One top-level handler turns errors into one line and an exit code:
0 ok, 1 rejected or invalid, 2 usage error, 130 interrupted.
"""

from __future__ import annotations

import importlib
import sys
import tempfile
import traceback

import click

from faultkit import __version__
from faultkit.errors import FaultkitError, UsageError

# name -> "module:attribute" of the command, then modules that add subcommands to it. Commands are
# imported when used, so `faultkit catalog lint` does not pay for the platform, git or the validator.
COMMANDS: dict[str, tuple[str, ...]] = {
    "apps": ("faultkit.commands.apps_cmds:apps", "faultkit.commands.import_cmds"),
    "author": ("faultkit.commands.author_cmds:author",),
    "build": ("faultkit.commands.build_cmds:build_cmd",),
    "campaign": ("faultkit.commands.campaign_cmds:campaign",),
    "catalog": ("faultkit.commands.catalog_cmds:catalog",),  # build/export load lazily (catalog_cmds.py)
    "down": ("faultkit.commands.platform_cmds:down",),
    "gate": ("faultkit.commands.gate_cmds:gate_cmd",),
    "init": ("faultkit.commands.init_cmd:init_cmd",),
    "judge": ("faultkit.commands.validate_cmds:judge_cmd",),
    "label": ("faultkit.commands.label_cmds:label_cmd",),
    "recover": ("faultkit.commands.validate_cmds:recover_cmd",),
    "report": ("faultkit.commands.report_cmds:report_cmd",),
    "schedule": ("faultkit.commands.schedule_cmds:schedule",),
    "status": ("faultkit.commands.platform_cmds:status",),
    "up": ("faultkit.commands.platform_cmds:up",),
    "validate": ("faultkit.commands.validate_cmds:validate_cmd",),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        target, *extras = COMMANDS[name]
        module, attribute = target.split(":")
        command = getattr(importlib.import_module(module), attribute)
        for extra in extras:
            importlib.import_module(extra)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="faultkit")
def main_group() -> None:
    """faultkit: author, validate and publish fault catalogs for SRE-agent benchmarks."""


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the group and return the command's exit code, turning every failure into one line.

    Commands return their code (0 ok, 1 rejected or invalid); errors raised anywhere below become 1
    (a FaultkitError, or an unexpected exception with its traceback written to a file), 2 (a usage
    error, click's or faultkit's) or 130 (interrupted). Nothing below raises SystemExit.
    """
    try:
        code = main_group.main(args=argv, prog_name="faultkit", standalone_mode=False)
    except click.exceptions.Exit as e:  # --help and --version on a subcommand
        return e.exit_code
    except click.ClickException as e:
        e.show()
        return 2 if isinstance(e, click.UsageError) else 1
    except (click.Abort, KeyboardInterrupt):  # click turns Ctrl-C inside a command into Abort
        click.echo("Interrupted.", err=True)
        return 130
    except UsageError as e:
        click.echo(f"Error: {e}", err=True)
        return 2
    except FaultkitError as e:
        click.echo(f"Error: {e}", err=True)
        return 1
    except Exception as e:  # noqa: BLE001 - the last line of defence: a short message, the trace in a file
        with tempfile.NamedTemporaryFile("w", prefix="faultkit-crash-", suffix=".log", delete=False) as f:
            traceback.print_exc(file=f)
        click.echo(f"Error: unexpected {type(e).__name__}: {e} (traceback in {f.name})", err=True)
        return 1
    # a group's --help returns 0 from click; a command returns its own code
    return code if isinstance(code, int) else 0


def run() -> None:
    """The console script."""
    sys.exit(main())


if __name__ == "__main__":
    run()
