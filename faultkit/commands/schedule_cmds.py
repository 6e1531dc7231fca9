"""`faultkit schedule ...`: export a seeded fault schedule, show what one holds, replay it, judge a run."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from faultkit.commands.common import console, json_option, print_json, workspace
from faultkit.commands.platform_options import PlatformChoice, platform_options
from faultkit.commands.validate_cmds import seconds
from faultkit.errors import UsageError
from faultkit.names import check_option, confine
from faultkit.replay import DEFAULT_LATENCY_MS
from faultkit.schedules import document
from faultkit.schedules.params import PRESETS, check_seed, preset
from faultkit.schedules.plot import COLOURS
from faultkit.schedules.sources import load_release, newest_release, working_tree
from faultkit.schedules.summary import summarize, timeline


@click.group()
def schedule() -> None:
    """Seeded fault schedules that a benchmark runtime replays."""


@schedule.command("export")
@click.option("--app", required=True, help="Application whose faults are scheduled.")
@click.option("--seed", required=True, help="Integer seed (0 to 2**64-1); same seed, same schedule.")
@click.option("--preset", "preset_name", type=click.Choice(list(PRESETS)), default="main",
              show_default=True, help="main: ~60 faults over 60+30 min; light-10; light-5.")
@click.option("--faults", type=int, help="Target number of faults (overrides the preset).")
@click.option("--injection-minutes", type=float, help="Minutes during which faults arrive.")
@click.option("--observation-minutes", type=float, help="Minutes after that with no injection.")
@click.option("--ramp", type=float, help="End intensity over start intensity (reference 4).")
@click.option("--release", "release_file", type=click.Path(path_type=Path),
              help="Catalog release to draw from (default: the newest dist/catalog-*.json).")
@click.option("--catalog", "from_catalog", is_flag=True,
              help="Draw from the schema-valid entries under catalog/<app>/ instead of a release.")
@click.option("--out", type=click.Path(path_type=Path),
              help="Output file (default: schedules/<app>-<preset>-seed<seed>.json).")
@json_option
def export_cmd(app: str, seed: str, preset_name: str, faults: int | None,
               injection_minutes: float | None, observation_minutes: float | None,
               ramp: float | None, release_file: Path | None, from_catalog: bool,
               out: Path | None, as_json: bool) -> int:
    """Draw a seeded schedule for one app and write it as JSON (faultkit/schedule/v1).

    Categories follow the production shares renormalised over the app's categories; arrivals
    rise linearly to --ramp times their initial rate; each fault stays 4 to 12 minutes; the
    clock moves in 120-s agent invocations. Same release, app, options and seed: same bytes.
    A file named by the preset gets a "-custom" suffix when options override the preset.

    Example: faultkit schedule export --app minishop --seed 7 --preset light-10 --catalog
    """
    if release_file and from_catalog:
        raise UsageError("--release and --catalog both given; draw from one of them")
    check_option(app, "--app")
    number = check_seed(seed)
    overrides = {"faults": faults, "injection_minutes": injection_minutes,
                 "observation_minutes": observation_minutes, "ramp": ramp}
    params = preset(preset_name, **overrides)
    # a release file written to a given path needs no catalog repository: `ws or workspace()` below
    # finds one only where it is needed (the other branches never run without one)
    ws = None if release_file and out else workspace()
    if from_catalog:
        source = working_tree(ws or workspace(), app)
    else:
        source = load_release(release_file or newest_release(ws or workspace()))
    doc = document.build(source, app, params, number)
    custom = "-custom" if any(v is not None for v in overrides.values()) else ""
    if out is None:
        name = f"{app}-{preset_name}{custom}-seed{number}.json"
        here = ws or workspace()
        path = confine(here.root, here.schedules_dir / name, "schedule file")
    else:
        path = out
    document.write(doc, path)
    stats = doc["stats"]
    if as_json:
        print_json({"file": str(path), "release": doc["release"], "app": app, "seed": number,
                    "params": doc["params"], "stats": stats})
        return 0
    console().print(
        f"{path}: {stats['injected']} faults for {app} from release {source.version}, "
        f"{stats['invocations']} invocations, mean {stats['mean_active']:.2f} active, "
        f"peak {stats['peak_active']}, {stats['skipped_draws']} skipped draws", markup=False)
    return 0


@schedule.command("show")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--png", type=click.Path(path_type=Path),
              help="Also plot active faults over time, by category (needs faultkit[plot]).")
@json_option
def show_cmd(file: Path, png: Path | None, as_json: bool) -> int:
    """Summarise a schedule: counts, category mix against its targets, concurrency, timeline.

    The mean is over every invocation of the run (injection and observation), counting the
    faults active during each; the peak is the largest such count.

    Example: faultkit schedule show schedules/minishop-main-seed7.json --png seed7.png
    """
    doc = document.load(file)
    summary = summarize(doc)
    if png:
        from faultkit.schedules.plot import write_png

        write_png(doc, png)
    if as_json:
        print_json({**summary, "png": str(png) if png else None})
        return 0
    _print_summary(doc, summary, png)
    return 0


def _print_summary(doc: dict, s: dict, png: Path | None) -> None:
    out = console()
    out.print(f"{s['app']} schedule, preset {s['preset']}, seed {s['seed']}, release "
              f"{s['release']['version']} ({s['release']['digest'][:19]}...)")
    out.print(f"{s['injected']} injected, {s['reverted']} reverted, {s['skipped_draws']} skipped "
              f"draws; {s['invocations']} invocations every {s['interval_s']} s; active faults: "
              f"mean {s['mean_active']:.2f}, peak {s['peak_active']} at invocation "
              f"{s['peak_invocation']}")
    table = Table("category", "faults", "share", "target", "diff (pp)")
    for category, m in s["mix"].items():
        table.add_row(category, str(m["count"]), f"{100 * m['share']:.1f}%",
                      f"{100 * m['target']:.1f}%", f"{m['error_pp']:+.1f}")
    out.print(table)
    out.print(f"mean absolute error of the mix: {s['mix_mae_pp']:.1f} pp")
    out.print(Text("timeline (one row per invocation; a block per active fault):", style="bold"))
    for row in timeline(doc):
        line = Text(f"{row.invocation:>3} {row.t // 60:>3}m {row.phase[:3]} ")
        for category in row.active:
            line.append("█", style=COLOURS.get(category, "white"))
        line.append(f" {len(row.active)}")
        if row.injected or row.reverted:
            line.append(f"  +{len(row.injected)} -{row.reverted}", style="dim")
        out.print(line)
    legend = Text("legend: ")
    for category, colour in COLOURS.items():
        legend.append("█ ", style=colour).append(f"{category}  ")
    out.print(legend)
    if png:
        out.print(f"plot written to {png}")


@schedule.command("run")
@click.argument("file", type=click.Path(path_type=Path))
@platform_options()
@click.option("--interval", help="Length of an invocation (e.g. 120s, 5s; default: the schedule's).")
@click.option("--invoke", "invoke", help="Command run once per invocation (an agent under test); "
              "without it the run is the no-action baseline.")
@click.option("--budget", default="110s", show_default=True, help="Time the --invoke command may take; killed past it.")
@click.option("--latency-ms", type=float, default=DEFAULT_LATENCY_MS, show_default=True,
              help="Requests (and probes) slower than this count as degraded.")
@click.option("--timeout", "timeout_s", type=float, help="Give up (and revert every fault) after this many seconds.")
@click.option("--runs", "runs_dir", type=click.Path(path_type=Path), help="Folder for run records (default runs/).")
@json_option
def run_cmd(file: Path, platform: PlatformChoice, interval: str | None, invoke: str | None, budget: str,
            latency_ms: float, timeout_s: float | None, runs_dir: Path | None, as_json: bool) -> int:
    """Replay a schedule on the running app: inject and revert its faults on the invocation clock,
    through the validator's change values and journal, and seal a run record.

    Example: faultkit schedule run schedules/minishop-light-5-seed1.json --interval 5s
    """
    # imported here: export and show must not pay for the platform and the validator
    from faultkit.replay.invoke import argv
    from faultkit.replay.plan import load_plan
    from faultkit.replay.runner import RunOptions, run_schedule
    from faultkit.replay.view import LiveView, quiet
    from faultkit.validators.signals import Interrupted

    ws = workspace()
    plan = load_plan(ws, file)
    options = RunOptions(seconds(interval) if interval else plan.interval_s, tuple(argv(invoke)) if invoke else None,
                         seconds(budget), latency_ms, timeout_s, runs_dir)
    if options.interval_s <= 0 or options.budget_s <= 0:
        raise UsageError("--interval and --budget must be above 0s")
    err = console(stderr=True)
    opened = platform.open(ws)
    try:
        if as_json:
            folder, figures = run_schedule(ws, opened, plan, options, quiet, lambda _m: None)
            print_json({"record": str(folder), **figures})
            return 0
        with LiveView(plan.name) as view:
            folder, figures = run_schedule(ws, opened, plan, options, view.show, lambda m: err.print(m))
    except Interrupted as stop:  # SIGTERM or --timeout: the run reverted everything and sealed its record
        click.echo(f"Stopped ({stop}): every active fault was reverted; the record is sealed.", err=True)
        return 130
    _print_figures(figures, folder)
    return 0


@schedule.command("judge")
@click.argument("run", type=click.Path(path_type=Path, exists=True, file_okay=False))
@json_option
def judge_cmd(run: Path, as_json: bool) -> int:
    """Recompute a run's figures from its sealed record alone and compare them with the recorded ones.

    Refuses a tampered record. Exits 0 when the figures agree byte for byte.

    Example: faultkit schedule judge runs/minishop-light-5-seed1/20261201T090000Z
    """
    from faultkit.replay.figures import judge_run

    figures, same = judge_run(run)
    if as_json:
        print_json({**figures, "matches_recorded": same})
    else:
        _print_figures(figures, run)
        click.echo("recomputed figures match the recorded ones" if same else "MISMATCH with the recorded figures")
    return 0 if same else 1


def _print_figures(f: dict, folder: Path) -> None:
    out = console()
    d = f["degradation"]
    out.print(f"{f['schedule']} run {f['run']}: degradation {d['integral']:.3f} (latency threshold "
              f"{f['latency_ms']:g} ms), {d['requests']:.0f} requests at {f['entry']}, {d['errors']:.0f} errors")
    table = Table("fault", "probes", "failed", "masked", "active with")
    for fault, m in f["faults"].items():
        table.add_row(fault, str(m["probes"]), str(m["failed"]), "yes" if m["masked"] else "",
                      ", ".join(m["active_with"]))
    out.print(table)
    o = f["overhead"]
    out.print(f"clock overhead: {o['mean_with_changes_s']:.2f} s per boundary with changes; " + "; ".join(
        f"{k} {v['mean_s']:.2f} s (n={v['n']})" for k, v in o["by_mechanism"].items()))
    if f["aborted"]:
        out.print(f"[red]aborted[/red]: {f['aborted']}")
    out.print(f"record: {folder}")
