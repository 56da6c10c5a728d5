#!/usr/bin/env python3
"""Tables and SVG plots of docs/scheduling-results.md from scheduling_results.sh's runs.

Reads OUT/SETUP/{predicted,none,oracle}/report.json and jobs-POLICY.csv for every setup
the shell script ran, prints the Markdown tables (one table of every setup's ratios to
tiresias, then a full one per main setup: the first three) and writes
OUT/jct_cdf-SETUP.svg (the JCT CDF of every policy, log time axis, main setups) and
OUT/ratios.svg (avg and p99 JCT over tiresias per policy and setup). Plain SVG, no
plotting library, so the script runs wherever Python 3 does.
"""
import csv
import json
import math
import os
import sys

# (label in the tables and plots, run folder, policy name in that run)
ROWS = [
    ("fifo", "predicted", "fifo"),
    ("tiresias", "predicted", "tiresias"),
    ("sjf (predicted)", "predicted", "sjf"),
    ("srtf (predicted)", "predicted", "srtf"),
    ("blend (predicted)", "predicted", "blend"),
    ("las (blend, no estimates)", "none", "blend"),
    ("sjf (oracle)", "oracle", "sjf"),
    ("srtf (oracle)", "oracle", "srtf"),
    ("srsf (oracle)", "oracle", "srsf"),
]
COLORS = [
    "#7f7f7f", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#17becf", "#9467bd", "#8c564b",
    "#e377c2",
]
# How many of the setups named on the command line get a full table and a CDF plot.
MAIN = 3


def human(s):
    if s >= 86400:
        return f"{s / 86400:.2f}d"
    if s >= 3600:
        return f"{s / 3600:.2f}h"
    if s >= 60:
        return f"{s / 60:.1f}m"
    return f"{s:.1f}s"


def load(out, setup):
    reports = {}
    for run in ("predicted", "none", "oracle"):
        path = os.path.join(out, setup, run, "report.json")
        with open(path) as f:
            doc = json.load(f)
        for p in doc["policies"]:
            reports[(run, p["policy"])] = p
    return reports


def jcts(out, setup, run, policy):
    path = os.path.join(out, setup, run, f"jobs-{policy}.csv")
    with open(path) as f:
        return sorted(float(r["jct"]) for r in csv.DictReader(f))


def table(setup, reports):
    base = reports[("predicted", "tiresias")]
    lines = [
        f"#### {setup}",
        "",
        "| policy | avg JCT | p50 | p99 | avg wait | util | avg / tiresias | p99 / tiresias |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ratios = []
    for label, run, pol in ROWS:
        r = reports[(run, pol)]
        avg = r["avg_jct"] / base["avg_jct"]
        p99 = r["p99_jct"] / base["p99_jct"]
        ratios.append((label, avg, p99))
        lines.append(
            f"| {label} | {human(r['avg_jct'])} | {human(r['p50_jct'])} | "
            f"{human(r['p99_jct'])} | {human(r['avg_queue_delay'])} | "
            f"{r['utilization'] * 100:.1f}% | {avg:.2f} | {p99:.2f} |"
        )
    # Each run's predictor learns from the jobs that ended before each admission in that
    # run, so its accuracy differs between policies: one line per policy that orders by
    # predictions, named (fifo and tiresias read none, and the predictor of their runs is
    # nobody's).
    for label, run, pol in ROWS:
        pred = reports[(run, pol)].get("prediction") if label.endswith("(predicted)") else None
        if pred:
            lines.append("")
            lines.append(
                f"Predictor in the {label} run: {pred['predicted']} jobs predicted "
                f"({pred['unpredicted']} before any had ended), median relative error "
                f"{pred['median_rel_error'] * 100:.0f}%, p90 {pred['p90_rel_error'] * 100:.0f}%, "
                f"{pred['underestimated'] * 100:.0f}% underestimated."
            )
    return "\n".join(lines) + "\n", ratios


def compact(by_setup):
    """One line per setup: each policy's avg / tiresias and p99 / tiresias."""
    labels = [lab for lab, _, _ in ROWS if lab not in ("fifo", "tiresias")]
    lines = [
        "| setup | " + " | ".join(labels) + " |",
        "|---|" + "---|" * len(labels),
    ]
    for setup, ratios in by_setup.items():
        r = {lab: (a, p) for lab, a, p in ratios}
        cells = [f"{r[lab][0]:.2f} / {r[lab][1]:.2f}" for lab in labels]
        lines.append(f"| {setup} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def svg_cdf(path, title, series):
    w, h, l, r, t, b = 640, 400, 60, 170, 30, 45
    lo = min(s[0] for _, s in series if s)
    lo = max(lo, 1.0)
    hi = max(s[-1] for _, s in series if s)
    x0, x1 = math.log10(lo), math.log10(hi)

    def px(v):
        return l + (math.log10(max(v, lo)) - x0) / (x1 - x0 or 1) * (w - l - r)

    def py(q):
        return h - b - q * (h - t - b)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'font-family="sans-serif" font-size="11">',
        f'<rect width="{w}" height="{h}" fill="white"/>',
        f'<text x="{l}" y="18" font-size="13">{title}</text>',
        f'<line x1="{l}" y1="{h - b}" x2="{w - r}" y2="{h - b}" stroke="black"/>',
        f'<line x1="{l}" y1="{t}" x2="{l}" y2="{h - b}" stroke="black"/>',
    ]
    for e in range(math.floor(x0), math.ceil(x1) + 1):
        v = 10**e
        if lo <= v <= hi:
            x = px(v)
            parts.append(f'<line x1="{x:.1f}" y1="{t}" x2="{x:.1f}" y2="{h - b}" stroke="#ddd"/>')
            parts.append(f'<text x="{x:.1f}" y="{h - b + 14}" text-anchor="middle">{human(v)}</text>')
    for q in (0, 0.25, 0.5, 0.75, 1.0):
        y = py(q)
        parts.append(f'<line x1="{l}" y1="{y:.1f}" x2="{w - r}" y2="{y:.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{l - 6}" y="{y + 4:.1f}" text-anchor="end">{q:.2f}</text>')
    parts.append(f'<text x="{(l + w - r) / 2}" y="{h - 8}" text-anchor="middle">JCT (log)</text>')
    for i, (label, s) in enumerate(series):
        n = len(s)
        step = max(1, n // 800)
        pts = [(px(s[k]), py((k + 1) / n)) for k in range(0, n, step)] + [(px(s[-1]), py(1.0))]
        d = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        c = COLORS[i % len(COLORS)]
        parts.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.5" points="{d}"/>')
        ly = t + 14 * i + 10
        parts.append(f'<line x1="{w - r + 10}" y1="{ly}" x2="{w - r + 28}" y2="{ly}" stroke="{c}" stroke-width="2"/>')
        parts.append(f'<text x="{w - r + 32}" y="{ly + 4}">{label}</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def svg_ratios(path, by_setup):
    setups = list(by_setup)
    labels = [lab for lab, _, _ in ROWS if lab != "fifo"]
    w, h, l, r, t, b = max(760, 220 + 110 * len(setups)), 420, 50, 190, 30, 60
    top = 2.0
    group = (w - l - r) / len(setups)
    bar = group / (len(labels) + 1) / 2
    def py(v):
        return h - b - min(v, top) / top * (h - t - b)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'font-family="sans-serif" font-size="11">',
        f'<rect width="{w}" height="{h}" fill="white"/>',
        f'<text x="{l}" y="18" font-size="13">JCT / tiresias: avg (solid), p99 (light); '
        f'aim: avg at most 0.7 (dashed), p99 at most 1.0</text>',
    ]
    for v in (0, 0.5, 1.0, 1.5, 2.0):
        y = py(v)
        parts.append(f'<line x1="{l}" y1="{y:.1f}" x2="{w - r}" y2="{y:.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{l - 6}" y="{y + 4:.1f}" text-anchor="end">{v:.1f}</text>')
    y = py(0.7)
    parts.append(f'<line x1="{l}" y1="{y:.1f}" x2="{w - r}" y2="{y:.1f}" stroke="black" stroke-dasharray="4,3"/>')
    for gi, setup in enumerate(setups):
        ratios = {lab: (a, p) for lab, a, p in by_setup[setup]}
        gx = l + gi * group + bar / 2
        for k, lab in enumerate(labels):
            a, p = ratios[lab]
            c = COLORS[(k + 1) % len(COLORS)]
            x = gx + k * 2 * bar
            parts.append(f'<rect x="{x:.1f}" y="{py(a):.1f}" width="{bar:.1f}" height="{py(0) - py(a):.1f}" fill="{c}"/>')
            parts.append(f'<rect x="{x + bar:.1f}" y="{py(p):.1f}" width="{bar:.1f}" height="{py(0) - py(p):.1f}" fill="{c}" fill-opacity="0.35"/>')
        parts.append(f'<text x="{l + gi * group + group / 2:.1f}" y="{h - b + 16 + 12 * (gi % 2)}" text-anchor="middle">{setup}</text>')
    for k, lab in enumerate(labels):
        ly = t + 14 * k + 10
        c = COLORS[(k + 1) % len(COLORS)]
        parts.append(f'<rect x="{w - r + 10}" y="{ly - 6}" width="14" height="8" fill="{c}"/>')
        parts.append(f'<text x="{w - r + 30}" y="{ly + 2}">{lab}</text>')
    parts.append(f'<text x="{l}" y="{h - 12}">bars above 2.0 are cut at 2.0</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def main():
    out = sys.argv[1]
    setups = sys.argv[2:]
    by_setup = {}
    tables = []
    for k, setup in enumerate(setups):
        reports = load(out, setup)
        text, ratios = table(setup, reports)
        by_setup[setup] = ratios
        if k < MAIN:
            tables.append(text)
            series = [(label, jcts(out, setup, run, pol)) for label, run, pol in ROWS]
            svg_cdf(os.path.join(out, f"jct_cdf-{setup}.svg"), f"JCT CDF, {setup}", series)
    print("avg / tiresias and p99 / tiresias:\n")
    print(compact(by_setup))
    for text in tables:
        print(text)
    svg_ratios(os.path.join(out, "ratios.svg"), by_setup)


if __name__ == "__main__":
    main()
