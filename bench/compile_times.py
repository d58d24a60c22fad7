#!/usr/bin/env python3
"""Summarizes `kiln build --times FILE` (per kernel x arch compile times) into a results file.
Usage: compile_times.py TIMES.csv OUT.md WALL_S CACHED_WALL_S NOTE"""
import collections
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
out, wall, cached, note = sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
ms = [float(r["compile_ms"]) for r in rows]
by_arch = collections.defaultdict(list)
by_kernel = collections.defaultdict(list)
for r in rows:
    by_arch[r["arch"]].append(float(r["compile_ms"]))
    by_kernel[f"{r['kernel']}/{r['variant']}"].append(float(r["compile_ms"]))
lines = [
    "# Compile times: the whole library, every arch",
    "",
    note,
    "",
    "Command: `KILN_CACHE_DIR=$(mktemp -d) kiln build --all-archs -o /tmp/pkg --times times.csv` "
    "(release build, empty cache), then the same again with the cache warm.",
    "",
    f"- {len(rows)} kernel x arch jobs; whole build {wall:.2f} s wall, "
    f"{wall * 1e3 / len(rows):.1f} ms wall per kernel x arch (jobs run on both cores).",
    f"- per job, as each thread saw it (LLVM + ld.lld or ptxas, under contention): mean {sum(ms) / len(ms):.1f} ms, "
    f"median {sorted(ms)[len(ms) // 2]:.1f} ms.",
    f"- rebuild with nothing changed (cache): {cached:.2f} s wall.",
    "",
    "| arch | jobs | mean ms per job |",
    "|---|---|---|",
]
lines += [f"| {a} | {len(v)} | {sum(v) / len(v):.1f} |" for a, v in sorted(by_arch.items())]
lines += ["", "| kernel/variant | mean ms per job over archs |", "|---|---|"]
lines += [f"| {k} | {sum(v) / len(v):.1f} |" for k, v in sorted(by_kernel.items(), key=lambda t: -sum(t[1]))]
open(out, "w").write("\n".join(lines) + "\n")
