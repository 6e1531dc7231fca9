"""What a verdict rests on: each rule's measured value against its threshold per cycle, the
windows' figures side by side, and the fault's causal chain with its checkpoints."""

from __future__ import annotations

from html import escape
from typing import Any

from faultkit.report.figures import WindowFigure
from faultkit.report.svg import PALETTE, Bar, bar_groups
from faultkit.validators.judge import outcome
from faultkit.validators.screening import ERRORS_PER_MIN, NEW_ERROR_LOGS_PER_MIN


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return escape("" if value is None else str(value))


def rules_table(verdict: dict[str, Any] | None) -> str:
    if not verdict:
        return ""
    rows = []
    for r in verdict.get("rules", []):
        if r.get("counted") is False:
            continue
        result = outcome(r, verdict)
        rows.append(f"<tr class='rule' data-rule='{escape(r['rule'])}' data-cycle='{r.get('cycle', '')}'>"
                    f"<td class='l'>{escape(r['rule'])}</td><td>{r.get('cycle', '')}</td>"
                    f"<td class='measured'>{_cell(r.get('measured'))}</td><td>{_cell(r.get('threshold'))}</td>"
                    f"<td class='{'ok' if r['passed'] else 'bad'}'>{result}</td>"
                    f"<td class='l muted'>{escape(str(r.get('detail', ''))[:140])}</td></tr>")
    return (f"<h3>Rules: measured against threshold</h3><p>{escape(verdict.get('summary', ''))}</p>"
            "<table id='fk-rules'><tr><th class='l'>rule</th><th>cycle</th><th>measured</th><th>threshold</th>"
            f"<th>result</th><th class='l'>what</th></tr>{''.join(rows)}</table>")


def window_view(figures: list[WindowFigure]) -> str:
    if not figures:
        return ""
    cycles = sorted({f.cycle for f in figures})

    def groups(key: str) -> list[tuple[str, list[Bar]]]:
        return [(f"cycle {c}", [Bar(f.phase, float(getattr(f, key)), PALETTE[f.phase], f.window)
                                for f in figures if f.cycle == c]) for c in cycles]

    charts = bar_groups("Server errors per minute, per window", groups("errors_per_min"), ERRORS_PER_MIN,
                        "5xx per minute (largest in scope, probe's own failures excluded)")
    charts += bar_groups("New error log templates per minute, per window", groups("new_error_logs_per_min"),
                         NEW_ERROR_LOGS_PER_MIN, "ERROR records of templates the before window did not log")
    rows = "".join(
        f"<tr class='win' data-window='{escape(f.window)}'><td>{f.cycle}</td><td>{escape(f.phase)}</td>"
        f"<td class='l'>{escape(f.window)}</td><td>{f.samples}</td><td class='errors'>{f.errors_per_min:g}</td>"
        f"<td class='l'>{escape(f.errors_at if f.errors_per_min else '-')}</td>"
        f"<td class='logs'>{f.new_error_logs_per_min:g}</td>"
        f"<td>{f.entry_ok_per_min:g}</td><td>{f.restarts}</td>"
        f"<td class='l muted sources'>{escape(f.sources or '-')}</td></tr>"
        for f in figures
    )
    return ("<h3>Windows: the screening figures of every window</h3>" + charts +
            "<table id='fk-windows'><tr><th>cycle</th><th>phase</th><th class='l'>window</th><th>samples</th>"
            f"<th>5xx/min (threshold {ERRORS_PER_MIN:g})</th><th class='l'>largest at</th>"
            f"<th>new error logs/min (threshold {NEW_ERROR_LOGS_PER_MIN:g})</th><th>entry non-5xx/min</th>"
            f"<th>restarts</th><th class='l'>measured by</th></tr>{rows}</table>")


def chain_view(labels: dict[str, Any] | None) -> str:
    if not labels:
        return "<h3>Causal chain</h3><p class='muted'>No labels: the bundle is not an admission in the " \
               "validator's format.</p>"
    steps = []
    for step in labels["chain"]:
        head = f"{escape(step['role'])}: {escape(step['service'])}"
        if "artifact" in step:
            head += f" · {escape(step['artifact']['kind'])} {escape(step['artifact']['ref'])}"
        if "target" in step:
            head += f" · the fault's target: {escape(step['target'])}"
        if "probe" in step:
            head += f" · probe {escape(step['probe'])}"
        path = "" if "path" not in step else "<div class='muted fk-path'>failing requests' path: " \
            + " &rarr; ".join(f"<code>{escape(s)}</code>" for s in step["path"]) + "</div>"
        rows = "".join(
            f"<tr class='checkpoint' data-role='{escape(step['role'])}'><td class='l'><code>{escape(c['signal'])}"
            f"</code></td><td>{escape(c['comparator'])} {c['value']:g} {escape(c['unit'])}</td>"
            f"<td>{escape(c['window'])}</td><td class='l'>"
            + ", ".join(f"cycle {o['cycle']}: {o['before']:g} &rarr; {o['after']:g}" for o in c["observed"])
            + "</td></tr>"
            for c in step["checkpoints"]
        ) or "<tr><td class='l muted' colspan='4'>nothing measured moved here in every cycle</td></tr>"
        steps.append(f"<li><b>{head}</b>{path}<table><tr><th class='l'>signal</th><th>checkpoint</th><th>window</th>"
                     f"<th class='l'>observed</th></tr>{rows}</table></li>")
    n = labels["counts"]["checkpoints"]
    source = {"traces": ", read from observed call paths", "graph": ", from the declared graph (the spans showed "
              "no path)"}.get(labels.get("chain_from", ""), "")
    return (f"<h3>Causal chain ({n} checkpoints, each held in every counted cycle{source})</h3>"
            f"<ol id='fk-chain'>{''.join(steps)}</ol>")
