"""The machine measures a cycle is checked against: /proc/stat, the load average, sampler lag."""

from __future__ import annotations

import os
import time
from pathlib import Path

import yaml

from faultkit.catalog.model import entry_from_data
from faultkit.observe.load import Limits, LoadMeter, cores, cpu_times, load_per_core, over_limits, steal_between
from faultkit.validators.cycles import allowing, own_runnable


def stat_line(user: int, idle: int, steal: int) -> str:
    return f"cpu  {user} 0 0 {idle} 0 0 0 {steal} 0 0\ncpu0 {user} 0 0 {idle} 0 0 0 {steal} 0 0\n"


def test_steal_is_the_stolen_share_between_two_readings(tmp_path: Path):
    stat = tmp_path / "stat"
    stat.write_text(stat_line(100, 100, 0))
    a = cpu_times(stat)
    stat.write_text(stat_line(150, 130, 20))  # 100 jiffies passed, 20 of them stolen
    assert steal_between(a, cpu_times(stat)) == 0.2
    assert steal_between(a, a) is None  # no time passed: no measure
    assert cpu_times(tmp_path / "absent") is None


def test_the_real_machine_is_measured(tmp_path: Path):
    real = cpu_times()
    assert real is not None and real.total > 0
    assert load_per_core() == round(os.getloadavg()[0] / cores(), 3)
    meter = LoadMeter()
    meter.start()
    time.sleep(0.3)
    meter.late(0.01)
    meter.spanned(8.0, 100.0, 106.5)
    window = meter.stop()
    assert window["max_lag_s"] == 0.01 and window["cores"] == cores() and window["load_per_core"] >= 0
    assert window["window_s"] == 8.0 and window["uncovered_s"] == 1.5


def test_limits_name_every_measure_that_exceeds_them():
    calm = {"max_lag_s": 0.05, "load_per_core": 0.5, "steal": 0.01, "cores": 2}
    busy = {"max_lag_s": 1.5, "load_per_core": 9.0, "steal": 0.35, "cores": 2}
    assert over_limits([calm], Limits(), 1.0) == []
    found = over_limits([calm, busy], Limits(), 1.0)
    assert found == ["sampler lag 1.5s > 0.5 x the 1s interval", "load average per core 9 > 8",
                     "CPU steal 35% > 20%"]
    # samples held up (a scrape past its timeout) spanned 0.8 s of an 8 s window: its rates measure
    # 0.8 s, so the cycle is an error; a frozen service's 2 s scrapes at the end leave 2 s, and pass
    held = {**calm, "window_s": 8.0, "uncovered_s": 7.2}
    assert over_limits([held], Limits(), 1.0) == ["samples left 7.2s of a 8s window unspanned (> 4s)"]
    assert over_limits([{**held, "uncovered_s": 2.05}], Limits(), 1.0) == []
    assert over_limits([{**held, "window_s": 4.0, "uncovered_s": 2.05}], Limits(), 1.0) == []
    # the real load of this machine exceeds a limit set low enough
    meter = LoadMeter()
    meter.start()
    assert over_limits([meter.stop()], Limits(max_load_per_core=0.0), 1.0)[0].startswith("load average per core")


def test_a_cpu_stress_is_allowed_the_busy_loops_it_starts_itself():
    """The load average counts a stress's workers even while their container's CPU limit throttles
    them: the shipped 50-worker stress on 2 cores read as 25 per core, always past the limit of 8."""
    shipped = Path(__file__).resolve().parents[2] / "catalog" / "minishop"
    stress = entry_from_data(yaml.safe_load((shipped / "minishop-cart-cpu-stress.yaml").read_text()))
    other = entry_from_data(yaml.safe_load((shipped / "minishop-cart-instance-failure.yaml").read_text()))
    workers = stress.direct.params["workers"]
    assert own_runnable(stress, lambda: 1) == workers and own_runnable(stress, lambda: 2) == 2 * workers
    assert own_runnable(other, lambda: 1) == 0
    stressed = {"max_lag_s": 0.05, "load_per_core": 2.0 + workers / cores(), "steal": 0.0, "cores": cores()}
    assert over_limits([stressed], Limits(), 1.0)[0].startswith("load average per core")
    assert over_limits([stressed], allowing(Limits(), own_runnable(stress, lambda: 1)), 1.0) == []
    # the allowance is the fault's own: more load than that on top is still the machine's
    busier = {**stressed, "load_per_core": stressed["load_per_core"] + 8}
    assert over_limits([busier], allowing(Limits(), own_runnable(stress, lambda: 1)), 1.0)
