#!/usr/bin/env python3
"""Draws Benchmarks/Cost/history.csv (Benchmarks/cost-history.sh) as an SVG line chart.

    chart.py HISTORY.csv OUT.svg

One line per scenario: its instructions at each commit relative to its first measured commit
(so scenarios of 13 M and 1.5 G instructions share one axis), commits oldest to newest along
the bottom (git's first-parent order of main; the CSV is rewritten in that order). A commit that moved any scenario by more than 2 % is marked with a dashed line and
its short hash, and listed under the chart with the scenarios it moved. Plain SVG written by
hand: no packages to install.
"""
import csv
import os
import subprocess
import sys
from collections import OrderedDict
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 960, 480
LEFT, RIGHT, TOP, BOTTOM = 70, 220, 30, 60
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
          "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd"]
MOVE = 0.02


def first_parent_rank(branch):
    """Short hash -> position on the branch's first-parent line, oldest first ({} without git)."""
    try:
        hashes = subprocess.run(["git", "rev-list", "--first-parent", "--reverse", branch], check=True,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {h[:7]: i for i, h in enumerate(hashes)}


def main(history, out):
    commits = OrderedDict()  # commit -> (date, subject)
    series = OrderedDict()   # scenario -> {commit: instructions}
    with open(history, newline="") as f:
        for row in csv.DictReader(f):
            commits.setdefault(row["commit"], (row["date"], row["subject"]))
            series.setdefault(row["scenario"], {})[row["commit"]] = int(row["instructions"])
    # Commit order: runs may add older commits after newer ones, and rebased commits share a
    # date, so the order is git's (first parent of BRANCH, default main) where git knows it.
    rank = first_parent_rank(os.environ.get("COST_BRANCH", "main"))
    order = sorted(commits, key=lambda c: (rank.get(c, -1), commits[c][0]))
    with open(history, newline="") as f:  # keep the file itself in that order too
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, list(reader)
    rows.sort(key=lambda r: order.index(r["commit"]))
    with open(history, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    ratios = {}
    for name, values in series.items():
        first = next((values[c] for c in order if c in values and values[c]), None)
        if first:
            ratios[name] = {c: values[c] / first for c in order if c in values}
    low = min([min(r.values()) for r in ratios.values()] + [0.9])
    high = max([max(r.values()) for r in ratios.values()] + [1.1])
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(i):
        return LEFT + (plot_w * i / max(1, len(order) - 1))

    def y(v):
        return TOP + plot_h * (high - v) / (high - low)

    moved = OrderedDict()
    for i, c in enumerate(order[1:], 1):
        for name, values in series.items():
            before, now = values.get(order[i - 1]), values.get(c)
            if before and now and abs(now / before - 1) > MOVE:
                moved.setdefault(c, []).append(f"{name} {(now / before - 1) * 100:+.1f} %")

    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT + 16 * len(moved)}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{LEFT}" y="18" font-size="13">Instructions per scenario relative to its first commit '
           f'(callgrind; Benchmarks/cost-history.sh)</text>']
    steps = 8
    for k in range(steps + 1):
        v = low + (high - low) * k / steps
        svg.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#ddd"/>')
        svg.append(f'<text x="{LEFT - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.2f}x</text>')
    for i, c in enumerate(order):
        svg.append(f'<text x="{x(i):.1f}" y="{TOP + plot_h + 14}" text-anchor="end" '
                   f'transform="rotate(-45 {x(i):.1f} {TOP + plot_h + 14})">{escape(c)}</text>')
        if c in moved:
            svg.append(f'<line x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{TOP}" y2="{TOP + plot_h}" '
                       f'stroke="#999" stroke-dasharray="4 3"/>')
    for n, (name, r) in enumerate(ratios.items()):
        color = COLORS[n % len(COLORS)]
        points = " ".join(f"{x(i):.1f},{y(r[c]):.1f}" for i, c in enumerate(order) if c in r)
        svg.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{points}"/>')
        ly = TOP + 12 * n
        svg.append(f'<line x1="{WIDTH - RIGHT + 10}" x2="{WIDTH - RIGHT + 30}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="2"/>')
        svg.append(f'<text x="{WIDTH - RIGHT + 34}" y="{ly + 4}">{escape(name)}</text>')
    for k, (c, what) in enumerate(moved.items()):
        text = f"{c} {commits[c][1][:60]}: {', '.join(what[:4])}{' …' if len(what) > 4 else ''}"
        svg.append(f'<text x="{LEFT}" y="{HEIGHT + 16 * k}">{escape(text)}</text>')
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
