"""Validation: the staged admission protocol, screening rules, judge, journal.

One job per module, imports running downward (catalog and observe below, commands above):

- pipeline.py   validate(): the stages in order, and the end every run reaches (revert, judge, seal)
- params.py     the run's knobs (window, interval, repeat, rollout timeout)
- faults.py     finding and linting the entry asked for
- inputs.py     inputs.json: the entry, an app snapshot, versions and thresholds
- stagelog.py   stages.json as the run goes, and the `on_stage` hook
- stages.py     lint, patch, build, marker, baseline
- cycles.py     before window, inject, after window, revert, recovery window
- app_changes.py  a change to the running app as one typed value: rollout, setting, action
- journal.py    the write-ahead journal of those values, and recovery from it
- signals.py    SIGTERM and the timeout unwind like Ctrl-C
- records.py    the typed stage and cycle records; observe/window.py types the windows
- screening.py, judge.py   the pure rules and the verdict, from a bundle alone
Sealed evidence bundles are faultkit/bundles.py, below both this package and the catalog that
admits on them; writing the verdict back into the entry is the catalog's (catalog/writeback.py).
"""
