"""Two small chart kinds written as SVG with the standard library alone (no plotting package
to install): a line chart of several series over steps, and a grouped horizontal bar chart."""
import math
from html import escape

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e"]
FONT = 'font-family="sans-serif" font-size="12"'


def _nice_ticks(lo, hi, count=5):
    """About `count` round tick values covering [lo, hi]."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = (lo // step) * step
    ticks, t = [], first
    while t <= hi + step * 1e-9:
        if t >= lo - step * 1e-9:
            ticks.append(round(t, 10))
        t += step
    return ticks


def _fmt(v):
    return f"{v:g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.1e}"


def line_chart(path, title, x_label, y_label, series, y_min=None, y_max=None, width=640, height=360):
    """series: list of (name, [(x, y), ...], dashed). Writes an SVG file."""
    left, right, top, bottom = 64, 16, 36, 48
    xs = [x for _, pts, _ in series for x, _ in pts]
    ys = [y for _, pts, _ in series for _, y in pts]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    y0 = min(ys) if y_min is None else y_min
    y1 = max(ys) if y_max is None else y_max
    if y1 <= y0:
        y1 = y0 + 1
    pw, ph = width - left - right, height - top - bottom

    def sx(x):
        return left + (x - x0) / (x1 - x0) * pw

    def sy(y):
        return top + (1 - (y - y0) / (y1 - y0)) * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle" {FONT} font-weight="bold">{escape(title)}</text>']
    for t in _nice_ticks(y0, y1):
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{sy(t):.1f}" y2="{sy(t):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{sy(t) + 4:.1f}" text-anchor="end" {FONT}>{_fmt(t)}</text>')
    for t in _nice_ticks(x0, x1):
        out.append(f'<line x1="{sx(t):.1f}" x2="{sx(t):.1f}" y1="{top + ph}" y2="{top + ph + 4}" stroke="#333"/>')
        out.append(f'<text x="{sx(t):.1f}" y="{top + ph + 18}" text-anchor="middle" {FONT}>{_fmt(t)}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 8}" text-anchor="middle" {FONT}>{escape(x_label)}</text>')
    out.append(f'<text transform="translate(16 {top + ph / 2}) rotate(-90)" text-anchor="middle" {FONT}>'
               f'{escape(y_label)}</text>')
    for i, (name, pts, dashed) in enumerate(series):
        color = COLORS[i % len(COLORS)]
        d = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        out.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
        if len(pts) <= 30:
            out += [f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{color}"/>' for x, y in pts]
        ly = top + 14 + 16 * i
        out.append(f'<line x1="{left + pw - 150}" x2="{left + pw - 126}" y1="{ly - 4}" y2="{ly - 4}" '
                   f'stroke="{color}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{left + pw - 120}" y="{ly}" {FONT}>{escape(name)}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def bar_chart(path, title, unit, categories, groups, width=640, row=22):
    """groups: list of (name, [value per category]). One cluster of bars per category."""
    left, right, top = 170, 90, 44
    height = top + len(categories) * (row * len(groups) + 10) + 40
    top_value = max(v for _, values in groups for v in values) or 1
    pw = width - left - right
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle" {FONT} font-weight="bold">{escape(title)}</text>']
    y = top
    for c, category in enumerate(categories):
        out.append(f'<text x="{left - 8}" y="{y + row * len(groups) / 2 + 4}" text-anchor="end" {FONT}>'
                   f'{escape(category)}</text>')
        for g, (name, values) in enumerate(groups):
            w = values[c] / top_value * pw
            out.append(f'<rect x="{left}" y="{y}" width="{max(w, 1):.1f}" height="{row - 4}" '
                       f'fill="{COLORS[g % len(COLORS)]}"/>')
            out.append(f'<text x="{left + w + 4:.1f}" y="{y + row - 8}" {FONT}>{values[c]:.2f} {escape(unit)}</text>')
            y += row
        y += 10
    for g, (name, _) in enumerate(groups):
        x = left + g * 150
        out.append(f'<rect x="{x}" y="{height - 26}" width="12" height="12" fill="{COLORS[g % len(COLORS)]}"/>')
        out.append(f'<text x="{x + 18}" y="{height - 16}" {FONT}>{escape(name)}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
