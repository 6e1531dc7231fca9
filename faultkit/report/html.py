"""The report page: inline CSS, inline SVG, and one small inline script that records any page
error into the DOM (tests read it back from a headless browser)."""

from __future__ import annotations

from collections import Counter
from html import escape

from faultkit.report.data import THRESHOLDS, ReportData
from faultkit.report.svg import PALETTE, Series, bar_pairs, line_chart
from faultkit.report.verdict_view import chain_view, rules_table, window_view

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1a202c;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #e2e8f0}
table{border-collapse:collapse;margin:6px 0 12px}td,th{border:1px solid #e2e8f0;padding:4px 8px;text-align:center}
th{background:#f7fafc;font-weight:600}td.l,th.l{text-align:left}.muted{color:#718096}
.c0{background:#fff}.c1{background:#e6fffa}.c2{background:#b2f5ea}.c3{background:#81e6d9}.c4{background:#4fd1c5}
.badge{display:inline-block;padding:1px 8px;border-radius:9px;margin-right:6px;font-size:12px}
.admitted{background:#c6f6d5}.rejected{background:#fed7d7}.flaky{background:#feebc8}.other{background:#e2e8f0}
svg.chart{display:block;margin:8px 0 16px}svg .ct{font-size:13px;font-weight:600;fill:#1a202c}
svg .ax{font-size:11px;fill:#4a5568}svg .grid{stroke:#edf2f7}td.ok{color:#276749}td.bad{color:#c53030;font-weight:600}
code{font-size:12px}ol#fk-chain li{margin:6px 0}
"""

# Registered first, so an error anywhere later on the page is recorded. The marker is built from
# two halves so the page source itself never contains it; only a real error puts it in the DOM.
GUARD = """
window.addEventListener('error', function (e) {
  var p = document.createElement('p');
  p.className = 'fk-js-' + 'error';
  p.textContent = 'fk-js-' + 'error: ' + (e.message || 'resource failed to load');
  (document.getElementById('fk-status') || document.documentElement).appendChild(p);
}, true);
"""
READY = """
(function () {
  var s = document.getElementById('fk-status');
  s.setAttribute('data-charts', String(document.querySelectorAll('svg.chart').length));
  s.setAttribute('data-ready', 'yes');
})();
"""


def render(data: ReportData) -> str:
    body = [
        f"<h1>faultkit catalog report</h1><p class='muted'>{len(data.entries)} entries over "
        f"{len(data.apps)} applications{_unreadable(data)}</p>"
    ]
    body += [_coverage(data), _mix(data), _outcomes(data), _fault(data)]
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>faultkit catalog report</title><style>{CSS}</style><script>{GUARD}</script></head>"
        f"<body>{''.join(body)}<div id='fk-status'></div><script>{READY}</script></body></html>\n"
    )


def _unreadable(data: ReportData) -> str:
    return f"; {data.unreadable} files do not load (run faultkit catalog lint)" if data.unreadable else ""


def _coverage(data: ReportData) -> str:
    from faultkit.catalog.vocab import CATEGORIES

    parts = [
        "<h2>Coverage: services by category</h2><p class='muted'>Each cell: admitted / all entries "
        "targeting the service in that category.</p>"
    ]
    empty = []
    for app in data.apps:
        table, adm = data.coverage(app.name), data.admitted_coverage(app.name)
        if not table:  # a table of dots says less than one line naming the apps with no entries yet
            empty.append(f"{app.name} {app.version}")
            continue
        head = "".join(f"<th>{escape(c)}</th>" for c in CATEGORIES)
        rows = []
        for s in app.service_names:
            cells = []
            for c in CATEGORIES:
                n, a = table.get(s, Counter())[c], adm.get(s, Counter())[c]
                cells.append(f"<td class='c{min(a, 4)}'>{f'{a} / {n}' if n else '·'}</td>")
            rows.append(f"<tr><th class='l'>{escape(s)}</th>{''.join(cells)}</tr>")
        parts.append(
            f"<h3>{escape(app.name)} {escape(app.version)}</h3><table><tr><th class='l'>service</th>"
            f"{head}</tr>{''.join(rows)}</table>"
        )
    if empty:
        parts.append(f"<p class='muted'>No entries yet: {escape(', '.join(empty))}.</p>")
    return "".join(parts)


def _mix(data: ReportData) -> str:
    chart = bar_pairs("Category mix: catalog against production shares", data.category_mix(), ("catalog", "production"))
    return f"<h2>Category mix</h2>{chart}"


def _outcomes(data: ReportData) -> str:
    counts = data.outcomes()
    badges = "".join(
        f"<span class='badge {k if k in ('admitted', 'rejected', 'flaky') else 'other'}'>{escape(k)}: {v}</span>"
        for k, v in sorted(counts.items())
    )
    rows = "".join(
        f"<tr><td class='l'>{escape(r.id)}</td><td>{escape(r.status)}</td>"
        f"<td class='l'>{'<br>'.join(escape(x) for x in r.rules)}</td></tr>"
        for r in data.rejections
    )
    table = (
        f"<table><tr><th class='l'>fault</th><th>verdict</th><th class='l'>failing rule</th></tr>{rows}</table>"
        if rows
        else "<p class='muted'>No rejections.</p>"
    )
    return f"<h2>Validation outcomes</h2><p>{badges or 'no entries'}</p>{table}"


def _fault(data: ReportData) -> str:
    if not data.fault or not data.windows:
        return "<h2>Evidence</h2><p class='muted'>No entry has an evidence bundle here.</p>"
    w = data.windows
    charts = []
    for key, label in (
        ("errors_per_min", "server errors per minute"),
        ("error_logs_per_min", "error log events per minute"),
        ("requests_per_min", "requests per minute"),
    ):
        series = []
        for phase, windows in (("before", w.before), ("after", w.after), ("recovery", w.recovery)):
            for win in windows:
                pts = [(float(p.get("t", 0)), float(p.get(key, 0))) for p in win.get("points", [])]
                series.append(Series(str(win.get("name", phase)), pts, PALETTE[phase], phase == "recovery"))
        charts.append(line_chart(label.capitalize(), series, THRESHOLDS.get(key), label))
    e = data.fault
    return (
        f"<h2>Evidence: {escape(e.id)}</h2><p>{escape(e.title)} · {escape(e.mechanism)} · "
        f"{escape(e.category)} · verdict {escape(data.states.get(e.id, '?'))}</p>"
        f"{window_view(list(data.figures))}{rules_table(data.verdict)}{chain_view(data.labels)}"
        f"<h3>Sampled steps within each window</h3>{''.join(charts)}"
    )
