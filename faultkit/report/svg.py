"""Small inline SVG charts, drawn here so the report needs no library and no network."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

PALETTE = {
    "before": "#2b6cb0",
    "after": "#c53030",
    "recovery": "#718096",
    "catalog": "#2b6cb0",
    "production": "#a0aec0",
}


@dataclass(frozen=True)
class Series:
    name: str
    points: list[tuple[float, float]]
    color: str
    dashed: bool = False


def _nice_max(value: float) -> float:
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000, 2000, 5000, 10000):
        if value <= step:
            return float(step)
    return value * 1.1


def line_chart(
    title: str, series: list[Series], threshold: float | None, unit: str, width: int = 560, height: int = 240
) -> str:
    """Lines over time (seconds since each window's start) with a dashed threshold."""
    left, right, top, bottom = 48, 130, 28, 34
    xs = [x for s in series for x, _ in s.points] or [0.0, 1.0]
    ys = [y for s in series for _, y in s.points] + ([threshold] if threshold is not None else [])
    xmax = max(xs) or 1.0
    ymax = _nice_max(max(ys + [1.0]) * 1.1)
    pw, ph = width - left - right, height - top - bottom
    px = lambda x: left + pw * x / xmax  # noqa: E731
    py = lambda y: top + ph * (1 - y / ymax)  # noqa: E731
    out = [
        f'<svg class="chart" role="img" aria-label="{escape(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="{left}" y="16" class="ct">{escape(title)}</text>',
    ]
    for i in range(5):
        y = ymax * i / 4
        out.append(
            f'<line x1="{left}" x2="{left + pw}" y1="{py(y):.1f}" y2="{py(y):.1f}" class="grid"/>'
            f'<text x="{left - 6}" y="{py(y) + 4:.1f}" class="ax" text-anchor="end">{y:g}</text>'
        )
    out.append(
        f'<text x="{left + pw / 2:.0f}" y="{height - 6}" class="ax" text-anchor="middle">'
        f"seconds since window start · {escape(unit)}</text>"
    )
    if threshold is not None:
        out.append(
            f'<line x1="{left}" x2="{left + pw}" y1="{py(threshold):.1f}" y2="{py(threshold):.1f}" '
            f'stroke="#d69e2e" stroke-width="2" stroke-dasharray="6 4"/>'
            f'<text x="{left + pw + 6}" y="{py(threshold) + 4:.1f}" class="ax">threshold {threshold:g}</text>'
        )
    for i, s in enumerate(series):
        if not s.points:
            continue
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s.points)
        dash = ' stroke-dasharray="3 3"' if s.dashed else ""
        out.append(f'<polyline fill="none" stroke="{s.color}" stroke-width="2.5"{dash} points="{path}"/>')
        # a marker at every point: a window of one sampled step is a polyline of one point, which draws nothing
        out += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3.5" fill="{s.color}" class="pt">'
                f'<title>{escape(s.name)}: {y:g}</title></circle>' for x, y in s.points]
        ly = top + 18 + 18 * i + (20 if threshold is not None else 0)
        out.append(
            f'<rect x="{left + pw + 6}" y="{ly - 9}" width="12" height="4" fill="{s.color}"/>'
            f'<text x="{left + pw + 22}" y="{ly - 4}" class="ax">{escape(s.name)}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def bar_pairs(title: str, rows: list[tuple[str, float, float]], labels: tuple[str, str], width: int = 560) -> str:
    """Two bars per row (shares 0..1): the catalog against production."""
    left, bar, gap = 150, 11, 10
    height = 40 + len(rows) * (2 * bar + gap) + 20
    pw = width - left - 60
    top = max([a for _, a, _ in rows] + [b for _, _, b in rows] + [0.01])
    out = [
        f'<svg class="chart" role="img" aria-label="{escape(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="0" y="16" class="ct">{escape(title)}</text>',
    ]
    for k, (label, color) in enumerate(zip(labels, (PALETTE["catalog"], PALETTE["production"]), strict=True)):
        out.append(
            f'<rect x="{left + 160 * k}" y="24" width="12" height="8" fill="{color}"/>'
            f'<text x="{left + 160 * k + 16}" y="32" class="ax">{escape(label)}</text>'
        )
    for i, (name, a, b) in enumerate(rows):
        y = 44 + i * (2 * bar + gap)
        out.append(f'<text x="{left - 8}" y="{y + bar + 3}" class="ax" text-anchor="end">{escape(name)}</text>')
        for k, (share, color) in enumerate(((a, PALETTE["catalog"]), (b, PALETTE["production"]))):
            w = pw * share / top
            yy = y + k * bar
            out.append(
                f'<rect x="{left}" y="{yy}" width="{w:.1f}" height="{bar - 1}" fill="{color}"/>'
                f'<text x="{left + w + 4:.1f}" y="{yy + bar - 2}" class="ax">{100 * share:.1f}%</text>'
            )
    out.append("</svg>")
    return "".join(out)


@dataclass(frozen=True)
class Bar:
    label: str  # the legend's name (a window's phase)
    value: float
    color: str
    name: str = ""  # this bar's own name (the window's file in the bundle)


def bar_groups(title: str, groups: list[tuple[str, list[Bar]]], threshold: float | None, unit: str,
               width: int = 560, height: int = 240) -> str:
    """Bars grouped by cycle (one per window), each labelled with its value, against a threshold.

    Bars, not lines: a short window has one sampled step, and one value must still be seen.
    """
    left, right, top, bottom = 48, 110, 28, 40
    values = [b.value for _, bars in groups for b in bars] + ([threshold] if threshold is not None else [])
    ymax = _nice_max(max(values + [1.0]) * 1.15)
    pw, ph = width - left - right, height - top - bottom
    py = lambda y: top + ph * (1 - y / ymax)  # noqa: E731
    out = [
        f'<svg class="chart bars" role="img" aria-label="{escape(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="{left}" y="16" class="ct">{escape(title)}</text>',
    ]
    for i in range(5):
        y = ymax * i / 4
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{py(y):.1f}" y2="{py(y):.1f}" class="grid"/>'
                   f'<text x="{left - 6}" y="{py(y) + 4:.1f}" class="ax" text-anchor="end">{y:g}</text>')
    slot = pw / max(1, len(groups))
    for g, (name, bars) in enumerate(groups):
        bw = min(36.0, (slot - 16) / max(1, len(bars)))
        x0 = left + g * slot + (slot - bw * len(bars)) / 2
        for k, b in enumerate(bars):
            x, y = x0 + k * bw, py(b.value)
            h = max(1.5, top + ph - y)  # a zero still shows as a sliver on the axis
            out.append(f'<rect x="{x + 2:.1f}" y="{top + ph - h:.1f}" width="{bw - 4:.1f}" height="{h:.1f}" '
                       f'fill="{b.color}" class="bar" data-window="{escape(b.name or b.label)}" '
                       f'data-value="{b.value:g}">'
                       f'<title>{escape(name)} {escape(b.name or b.label)}: {b.value:g} {escape(unit)}</title></rect>'
                       f'<text x="{x + bw / 2:.1f}" y="{top + ph - h - 4:.1f}" class="ax" text-anchor="middle">'
                       f'{b.value:g}</text>')
        out.append(f'<text x="{left + g * slot + slot / 2:.1f}" y="{top + ph + 16}" class="ax" '
                   f'text-anchor="middle">{escape(name)}</text>')
    if threshold is not None:
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{py(threshold):.1f}" y2="{py(threshold):.1f}" '
                   f'stroke="#d69e2e" stroke-width="2" stroke-dasharray="6 4"/>'
                   f'<text x="{left + pw + 6}" y="{py(threshold) + 4:.1f}" class="ax">threshold {threshold:g}</text>')
    legend = list(dict.fromkeys((b.label, b.color) for _, bars in groups for b in bars))
    for i, (label, color) in enumerate(legend):
        ly = top + 34 + 18 * i
        out.append(f'<rect x="{left + pw + 6}" y="{ly - 9}" width="12" height="8" fill="{color}"/>'
                   f'<text x="{left + pw + 22}" y="{ly - 2}" class="ax">{escape(label)}</text>')
    out.append(f'<text x="{left + pw / 2:.0f}" y="{height - 6}" class="ax" text-anchor="middle">'
               f"{escape(unit)}</text>")
    out.append("</svg>")
    return "".join(out)
