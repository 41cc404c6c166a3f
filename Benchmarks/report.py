#!/usr/bin/env python3
"""Turns benchmark results into the figures table of Benchmarks/README.md and the chart.

    python3 Benchmarks/report.py [Benchmarks/Results]

Reads, from the results directory:
  benchmarks.md      `swift package ... benchmark --format markdown --no-progress` output (full profile)
  peer-compare.json  written by Benchmarks/peer-compare.sh (optional)
Writes:
  figures.md         every measured figure against the issue's targets (markdown)
  chart.png          unlock overhead and add-one cost against vault size, Coffer beside keepassxc-cli
                     (needs matplotlib: `pip install matplotlib`; skipped with a message without it)
"""
import json
import pathlib
import re
import sys

results = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent / "Results")

TIME = {"ns": 1e-9, "μs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}
SCALE = {"#": 1, "K": 1e3, "M": 1e6, "G": 1e9}


def parse_benchmarks(path):
    """{benchmark name: {metric: {"p50": v, "p99": v, ...}}} with times in seconds and counts absolute."""
    data, name = {}, None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("### "):
            name = line[4:].strip()
            data.setdefault(name, {})
            continue
        if not name or not line.startswith("| ") or line.startswith("| Metric"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) < 9:
            continue
        label = cells[0].rstrip(" *")
        units = re.findall(r"\(([^()]*)\)", label)
        values = [float(c) for c in cells[1:8]]
        if label.startswith("Time"):
            metric, factor = "time", TIME[units[-1]]
        elif label.startswith("Throughput"):
            metric, factor = "throughput", SCALE.get(units[-1], 1)
        elif label.startswith("Malloc"):
            metric, factor = "malloc", SCALE.get(units[-1], 1) if len(units) > 1 else 1
        elif label.startswith("add / fsync reference"):
            metric, factor = "add_over_fsync", 0.01
        elif label.startswith("fsync reference"):
            metric, factor = "fsync_reference", 1e-9 * (SCALE.get(units[-1], 1) if len(units) > 1 else 1)
        elif label.startswith("Memory (resident peak)"):
            metric, factor = "rss", {"K": 1e3, "M": 1e6, "G": 1e9}.get(units[-1], 1)
        else:
            continue
        data[name][metric] = dict(zip(["p0", "p25", "p50", "p75", "p90", "p99", "p100"], [v * factor for v in values]))
    return data


def ms(seconds):
    return f"{seconds * 1e3:,.1f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:,.0f} µs"


def main():
    bench_path = results / "benchmarks.md"
    b = parse_benchmarks(bench_path) if bench_path.exists() else {}
    peer_path = results / "peer-compare.json"
    peer = json.loads(peer_path.read_text()) if peer_path.exists() else None

    def t(name, q="p50"):
        return b.get(name, {}).get("time", {}).get(q)

    rows = []

    def row(what, figure, target="", verdict=""):
        rows.append(f"| {what} | {figure} | {target} | {verdict} |")

    def ok(flag):
        return "met" if flag else "**missed**"

    # Unlock
    sizes = [("10", 10), ("1k", 1_000), ("10k", 10_000), ("100k", 100_000)]
    for label, n in sizes:
        v = t(f"Unlock-minimalKDF-{label}")
        if v is None:
            continue
        per_item = f"{v / n * 1e6:.2f} µs/item" if n >= 1000 else ""
        if label == "10k":
            row(f"Unlock without KDF, {label} items", f"{ms(v)} ({per_item})", "≤ 30 ms", ok(v <= 0.030))
        else:
            row(f"Unlock without KDF, {label} items", f"{ms(v)}" + (f" ({per_item})" if per_item else ""))
    if t("Unlock-minimalKDF-10k") and t("Unlock-minimalKDF-100k"):
        r = t("Unlock-minimalKDF-100k") / t("Unlock-minimalKDF-10k")
        row("Unlock without KDF, 100k / 10k", f"{r:.1f}×", "linear (≈ 10×)", ok(r <= 13))
    kdf = t("KDF-Argon2id-moderate")
    for label, n in sizes:
        v = t(f"Unlock-moderateKDF-{label}")
        if v and kdf:
            row(f"Unlock with default KDF (moderate), {label} items", f"{ms(v)}; KDF {ms(kdf)} = {kdf / v:.0%} of it")
    for name in ("KDF-Argon2id-minimal", "KDF-Argon2id-interactive", "KDF-Argon2id-moderate"):
        if t(name):
            row(f"Argon2id alone ({name.split('-')[-1]})", ms(t(name)))
    for label in ("10", "10k"):
        v, k = t(f"PINUnlock-interactiveKDF-{label}"), t("KDF-Argon2id-interactive")
        if v and k:
            row(f"PIN unlock (interactive KDF), {label} items", f"{ms(v)}; KDF {k / v:.0%} of it")
    for label, n in sizes:
        v = t(f"Unlock+list-minimalKDF-{label}")
        if v:
            row(f"Unlock + list() without KDF, {label} items", ms(v))

    # Store
    fsync = t("Fsync-512B-append")
    if fsync:
        row("512-byte append + fdatasync (reference benchmark)", f"{ms(fsync)} (p25 {ms(t('Fsync-512B-append', 'p25'))})")
    for op in ("Add", "Update", "Delete"):
        for label in ("10", "10k", "100k"):
            v = t(f"{op}-one-{label}")
            if v is None:
                continue
            target = verdict = ""
            paired = b.get(f"{op}-one-{label}", {}).get("add_over_fsync", {}).get("p50")
            reference = b.get(f"{op}-one-{label}", {}).get("fsync_reference", {}).get("p50")
            figure = ms(v)
            if paired is not None:
                figure += f"; paired with the fsync reference ({ms(reference)}): {paired:.2f}× fsync"
                target, verdict = "≤ 2× fsync", ok(paired <= 2)
            elif fsync:
                figure += f" ({v / fsync:.1f}× the fsync benchmark)"
            row(f"{op} one item durably, {label} items", figure, target, verdict)
        if op == "Add" and t("Add-one-10") and t("Add-one-100k"):
            r = t("Add-one-100k") / t("Add-one-10")
            row("Add one, 100k / 10 items", f"{r:.2f}×", "≤ 2×", ok(r <= 2))
    if t("Bulk-import-10k"):
        row("Bulk import 10k items (addAll)", f"{ms(t('Bulk-import-10k'))} = {10_000 / t('Bulk-import-10k'):,.0f} items/s")
    for name in ("Compact-10k", "Compact-100k", "Verify-10k", "Verify-100k"):
        if t(name):
            row(name.replace("-", " ") + " items", ms(t(name)))

    # AEAD (seal/open)
    for op in ("Seal", "Open"):
        for size, nbytes in (("200B", 200), ("1MiB", 1 << 20)):
            c, s = t(f"{op}-{size}-Coffer"), t(f"{op}-{size}-libsodium")
            if not (c and s):
                continue
            if size == "1MiB":
                row(f"{op} 1 MiB: Coffer / libsodium", f"{nbytes / c / 1e6:,.0f} / {nbytes / s / 1e6:,.0f} MB/s = {s / c:.2f}×",
                    "≥ 0.9×", ok(s / c >= 0.9))
            else:
                row(f"{op} 200 B: Coffer / libsodium", f"{1 / c / 1e3:,.0f}k / {1 / s / 1e3:,.0f}k msg/s = {s / c:.2f}×")

    # Policy
    for name in ("Check+strength-64chars-NIST", "Check+strength-64chars-4classes"):
        if t(name):
            row(f"Policy check with strength, 64 chars ({name.split('-')[-1]})", f"p50 {ms(t(name))}, p99 {ms(t(name, 'p99'))}")
    if t("Generate-20chars-4classes"):
        row("Generate 20 chars, 4 classes", f"{1 / t('Generate-20chars-4classes'):,.0f} passwords/s")

    # Peer
    if peer:
        for r in peer["results"]:
            n = r["items"]
            for op, what in (("ls", "unlock + list"), ("add", "unlock + add one")):
                x = r[op]
                target = verdict = ""
                if n == 10_000:
                    target, verdict = "≥ 10×", ok(x["ratio"] >= 10)
                row(f"keepassxc-cli / coffer, {what}, {n:,} items",
                    f"{ms(x['keepassxc_s'])} / {ms(x['coffer_s'])} = {x['ratio']:.1f}×", target, verdict)

    header = ["| Measure | Figure (median unless noted) | Target | |", "|---|---|---|---|"]
    out = results / "figures.md"
    note = ""
    if peer:
        k = peer["kdf_seconds"]
        note = (f"\nPeer run: {peer['keepassxc_cli']}, KDF per unlock coffer {ms(k['coffer'])}, keepassxc-cli "
                f"{ms(k['keepassxc'])} (`import -t {k['keepassxc_decryption_time_ms']}`), {peer['runs']} runs each, {peer['date']}.\n")
    out.write_text("\n".join(header + rows) + "\n" + note)
    print(out.read_text())
    chart(b, peer, results / "chart.png")


def chart(b, peer, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: matplotlib not installed (pip install matplotlib); chart skipped")
        return

    def series(prefix, labels):
        xs, ys = [], []
        for label, n in labels:
            v = b.get(f"{prefix}-{label}", {}).get("time", {}).get("p50")
            if v is not None:
                xs.append(n)
                ys.append(v * 1e3)
        return xs, ys

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    sizes = [("10", 10), ("1k", 1_000), ("10k", 10_000), ("100k", 100_000)]
    coffer, keepass, lib = "#1f77b4", "#d62728", "#2ca02c"

    xs, ys = series("Unlock-minimalKDF", sizes)
    left.plot(xs, ys, "o-", color=coffer, label="Coffer, in process (Vault.open, no KDF)")
    if peer:
        k = peer["kdf_seconds"]
        n = [r["items"] for r in peer["results"]]
        left.plot(n, [max(r["ls"]["coffer_s"] - k["coffer"], 1e-4) * 1e3 for r in peer["results"]], "s--", color=coffer,
                  label="coffer ls, whole process, minus KDF")
        left.plot(n, [max(r["ls"]["keepassxc_s"] - k["keepassxc"], 1e-4) * 1e3 for r in peer["results"]], "s--",
                  color=keepass, label="keepassxc-cli ls, whole process, minus KDF")
    left.axhline(30, color="gray", linestyle=":", linewidth=1)
    left.text(2500, 21, "target: 30 ms at 10k", color="gray", fontsize=8)
    left.set_title("Unlock overhead beyond key derivation")

    xs, ys = series("Add-one", [("10", 10), ("10k", 10_000), ("100k", 100_000)])
    right.plot(xs, ys, "o-", color=coffer, label="Coffer, in process (Vault.add + fdatasync)")
    fsync = b.get("Fsync-512B-append", {}).get("time", {}).get("p50")
    if fsync:
        right.axhline(fsync * 1e3, color=lib, linestyle=":", linewidth=1.2, label="512 B append + fdatasync")
    if peer:
        n = [r["items"] for r in peer["results"]]
        right.plot(n, [r["add"]["coffer_s"] * 1e3 for r in peer["results"]], "s--", color=coffer,
                   label="coffer add, whole process (incl. KDF)")
        right.plot(n, [r["add"]["keepassxc_s"] * 1e3 for r in peer["results"]], "s--", color=keepass,
                   label="keepassxc-cli add, whole process (incl. KDF)")
    right.set_title("Add one item durably")

    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("items in the vault")
        ax.set_ylabel("milliseconds (median)")
        ax.grid(True, which="both", alpha=0.25)
    left.legend(fontsize=8, loc="upper left")
    right.legend(fontsize=8, loc="lower right", bbox_to_anchor=(1.0, 0.12))
    fig.suptitle("Coffer beside keepassxc-cli 2.7.4 (KDF time matched), 2-core VM", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"written: {path}")


if __name__ == "__main__":
    main()
