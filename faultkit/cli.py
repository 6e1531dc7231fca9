"""The `faultkit` command: a click group whose commands live in faultkit/commands/.

One top-level handler turns errors into one line and an exit code:
0 ok, 1 rejected or invalid, 2 usage error, 130 interrupted.
"""

from __future__ import annotations

import sys
import tempfile
import traceback

import click

from faultkit import __version__
from faultkit.commands import (
    apps_cmds,
    author_cmds,  # also adds `apps import`
    catalog_cmds,
    gate_cmds,
    platform_cmds,
    release_cmds,  # noqa: F401 - adds `catalog build` and `catalog export`
    report_cmds,
    schedule_cmds,
    validate_cmds,
)
from faultkit.errors import FaultkitError, UsageError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="faultkit")
def main_group() -> None:
    """faultkit: author, validate and publish fault catalogs for SRE-agent benchmarks."""


main_group.add_command(catalog_cmds.catalog)
main_group.add_command(apps_cmds.apps)
main_group.add_command(author_cmds.author)
main_group.add_command(schedule_cmds.schedule)
main_group.add_command(gate_cmds.gate_cmd)
main_group.add_command(report_cmds.report_cmd)
platform_cmds.register(main_group)  # up, status, down
for command in (validate_cmds.validate_cmd, validate_cmds.judge_cmd, validate_cmds.recover_cmd):
    main_group.add_command(command)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the group, turning every failure into one clear line."""
    try:
        main_group.main(args=argv, prog_name="faultkit", standalone_mode=False)
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.ClickException as e:
        e.show()
        return 2
    except click.Abort:
        click.echo("Interrupted.", err=True)
        return 130
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        return 130
    except UsageError as e:
        click.echo(f"Error: {e}", err=True)
        return 2
    except FaultkitError as e:
        click.echo(f"Error: {e}", err=True)
        return 1
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 0
    except Exception as e:  # noqa: BLE001 - the last line of defence: a short message, the trace in a file
        with tempfile.NamedTemporaryFile("w", prefix="faultkit-crash-", suffix=".log", delete=False) as f:
            traceback.print_exc(file=f)
        click.echo(f"Error: unexpected {type(e).__name__}: {e} (traceback in {f.name})", err=True)
        return 3
    return 0


def run() -> None:
    """The console script."""
    sys.exit(main())


if __name__ == "__main__":
    run()
