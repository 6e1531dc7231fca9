"""Replaying a schedule on a running application (`faultkit schedule run`), and judging the run.

One job per module, imports running downward (schedules, validators and observe below, commands
above):

- plan.py      the schedule checked against the release in dist/: its faults as entries, the steps
               of every invocation boundary in the schedule's order
- prepare.py   before the clock starts: the app is up and healthy, every code fault is built
- traffic.py   the entry service's request counters and latency buckets, scraped
- invoke.py    one run of the --invoke command in its own process group, within its budget
- record.py    the run record (runs/<schedule>/<run>/) written as the run goes, then sealed
- clock.py     the invocation clock: revert, inject, wait in place, run the invocation
- figures.py   the figures (degradation integral, masking, clock overhead), a pure function of
               the record's files, which `schedule judge` recomputes byte for byte
- view.py      the live view
"""

# Requests and probes slower than this count as degraded (`--latency-ms`); see figures.py.
DEFAULT_LATENCY_MS = 1000.0
