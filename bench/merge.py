#!/usr/bin/env python3
"""Merges `kiln bench --json`, `peers.py` and (optionally) `ab.py` output of one device run into
its results file: RESULTS.json (all of it, side by side) and RESULTS.md (the table a reader checks,
with the command).
Usage: merge.py KILN.json PEERS.json OUT_STEM DATE COMMAND [AB.json]"""
import json
import sys

kiln = json.load(open(sys.argv[1]))
peers = json.load(open(sys.argv[2]))
stem, date, command = sys.argv[3], sys.argv[4], sys.argv[5]
ab = json.load(open(sys.argv[6])) if len(sys.argv) > 6 else None
copy_gbps = peers.get("copy", {}).get("gbps")
cases = {}
torch_launch = peers.get("launch_trivial", {}).get("torch_graph_us_per_node")
for name, k in kiln["cases"].items():
    p = peers.get(name, {})
    cases[name] = {
        "kiln_us": k["kiln_us"],
        "variant": k["variant"],
        "kiln_eager_us": k["eager_us"],
        "torch_us": p.get("torch_us"),
        "triton_us": p.get("triton_us"),
        "floor_us": k["floor_us"],
        "bytes": k["bytes"],
        "gbps": k["gbps"],
        "variants": k["variants"],
        "input_sets": k["sets"],
    }
out = {"date": date, "device": kiln["device"], "arch": kiln["arch"], "command": command,
       "bandwidth_gbps": kiln["bandwidth_gbps"], "copy_gbps_measured": copy_gbps, "cases": cases,
       "launch_cost": dict(kiln["launch_cost"], torch_graph_us_per_node=torch_launch),
       "ab": ab}
json.dump(out, open(stem + ".json", "w"), indent=1)


def num(x):
    return "-" if x is None else f"{x:.2f}"


def ratio(peer, mine):
    if not peer:
        return "-"
    r = peer / mine
    return f"{r:.1f}x faster" if r >= 1 else f"{1 / r:.1f}x slower"


copy_text = f"{copy_gbps:.0f} GB/s" if copy_gbps else "not measured"
lines = [
    f"# Benchmarks: {kiln['device']}, {date}",
    "",
    "Each figure is the median time per call of a CUDA graph holding one call per input set, input sets",
    "rotated over more than the L2 (120 MB), CUDA events, after warm-up; torch and Triton (torch.compile,",
    "Inductor) were timed the same way in the same run. The floor is bytes moved / "
    f"{kiln['bandwidth_gbps']:.0f} GB/s; the copy bandwidth measured in the same run (2 GiB "
    f"device-to-device, read + write) was {copy_text}.",
    "",
    f"Command: `{command}`",
    "",
    "| case | kiln us (variant) | torch us | Triton us | kiln vs torch | kiln vs Triton | floor us | kiln GB/s | % of copy | kiln eager us |",
    "|---|---|---|---|---|---|---|---|---|---|",
]
for name, c in cases.items():
    pct = f"{100 * c['gbps'] / copy_gbps:.0f}%" if copy_gbps else "-"
    lines.append(
        f"| {name} | {c['kiln_us']:.2f} ({c['variant']}) | {num(c['torch_us'])} | {num(c['triton_us'])} "
        f"| {ratio(c['torch_us'], c['kiln_us'])} | {ratio(c['triton_us'], c['kiln_us'])} | {c['floor_us']:.3g} "
        f"| {c['gbps']:.0f} | {pct} | {c['kiln_eager_us']:.2f} |"
    )
lc = kiln["launch_cost"]
lines += [
    "",
    "Every variant (graph replay, us): "
    + "; ".join(f"{n}: " + ", ".join(f"{v} {x['graph_us']:.2f}" for v, x in c["variants"].items()) for n, c in cases.items()),
    "",
    f"Launch cost per node (trivial kernel, {lc['nodes']} nodes): eager {lc['eager_us_per_node']:.2f} us, "
    f"graph replay {lc['graph_us_per_node']:.2f} us, replay with a scalar argument rewritten each time "
    f"{lc['graph_update_us_per_node']:.2f} us; torch's CUDA-graph replay of a trivial op in the same run: "
    f"{num(torch_launch)} us.",
]
if ab:
    lines += [
        "",
        f"## The same process: `bench/ab.py` ({ab['rounds']} interleaved rounds)",
        "",
        "kiln's PTX from the package, launched through the driver API inside torch's CUDA-graph capture,",
        "against torch and Triton on the very same input tensors, the configurations interleaved round by",
        "round (median of the rounds; torch's replay timing, so kiln's figures differ a little from `kiln bench`'s):",
        "",
        "| case | configuration | median us | rounds |",
        "|---|---|---|---|",
    ]
    for case, rows in ab["cases"].items():
        for conf, r in rows.items():
            lines.append(f"| {case} | {conf} | {r['median_us']:.2f} | {' '.join(f'{x:.2f}' for x in r['rounds_us'])} |")
    lines += ["", "Checked in the same run: " + ", ".join(f"quantize_q8_0_f32/{v} {'equals' if ok else 'DIFFERS FROM'} ggml's bytes" for v, ok in ab.get("parity", {}).items())
              + f"; rmsnorm_f32 relative error against float64 {ab.get('rmsnorm_rel_err', float('nan')):.1e}."]
lines += ["", f"![chart]({'../../docs/bench-h200.png'})"]
open(stem + ".md", "w").write("\n".join(lines) + "\n")
