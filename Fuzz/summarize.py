#!/usr/bin/env python3
"""Summarises the libFuzzer logs in Fuzz/.corpus-work/logs/ (written by Fuzz/run.sh): per target,
every run's length, executions, exec/s and the last cov/ft, and the totals. Used to fill the
table in Fuzz/README.md."""
import glob, os, re, sys
from datetime import datetime

logs = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".corpus-work", "logs")
totals = {}
for path in sorted(glob.glob(os.path.join(logs, "Fuzz*.2*.log"))):
    name = os.path.basename(path)
    target, stamp = name.split(".")[0], name.split(".")[1]
    text = open(path, errors="replace").read()
    lines = [l for l in text.splitlines() if re.match(r"#\d+\s", l)]
    runs = re.search(r"stat::number_of_executed_units:\s*(\d+)", text)
    runs = int(runs.group(1)) if runs else (int(lines[-1].split()[0][1:]) if lines else 0)
    cov = re.findall(r"cov: (\d+) ft: (\d+)", text)
    rate = re.search(r"stat::average_exec_per_sec:\s*(\d+)", text)
    done = re.search(r"Done \d+ runs in (\d+) second", text)
    start = datetime.strptime(stamp, "%Y%m%d-%H%M%S")
    seconds = int(done.group(1)) if done else int(os.path.getmtime(path) - start.timestamp())
    outcome = "ok" if done else ("FINDING" if re.search(r"deadly signal|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)", text) else "stopped")
    counters = re.search(r"Loaded 1 modules +\((\d+) inline", text)
    instrumented = counters is not None and int(counters.group(1)) > 20000  # all of Coffer, not one module
    print("%-24s %s %6ds %11d runs %7s exec/s cov %5s ft %5s %-8s %s" % (
        target, stamp, seconds, runs, rate.group(1) if rate else "?", cov[-1][0] if cov else "-",
        cov[-1][1] if cov else "-", outcome, "full" if instrumented else "partial"))
    t = totals.setdefault(target, [0, 0])
    t[0] += runs
    t[1] += seconds
print()
for target, (runs, seconds) in sorted(totals.items()):
    print("%-24s total %11d executions in %5.1f min" % (target, runs, seconds / 60))
