#!/usr/bin/env python3
"""Merges `kiln bench --json` and `peers.py` output into the results file of a run:
RESULTS.json (both, side by side) and RESULTS.md (the table a reader checks, with the command).
Usage: merge.py KILN.json PEERS.json OUT_STEM DATE COMMAND"""
import json
import sys

kiln = json.load(open(sys.argv[1]))
peers = json.load(open(sys.argv[2]))
stem, date, command = sys.argv[3], sys.argv[4], sys.argv[5]
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
       "bandwidth_gbps": kiln["bandwidth_gbps"], "cases": cases,
       "launch_cost": dict(kiln["launch_cost"], torch_graph_us_per_node=torch_launch)}
json.dump(out, open(stem + ".json", "w"), indent=1)

lines = [
    f"# Benchmarks: {kiln['device']}, {date}",
    "",
    "Each figure is the median time per call of a CUDA graph holding one call per input set, input sets",
    "rotated over more than the L2 (120 MB), CUDA events, after warm-up; torch and Triton (torch.compile,",
    "Inductor) were timed the same way in the same run. The floor is bytes moved / "
    f"{kiln['bandwidth_gbps']:.0f} GB/s (the H200's measured copy bandwidth).",
    "",
    f"Command: `{command}`",
    "",
    "| case | kiln us (variant) | torch us | Triton us | kiln vs torch | floor us | kiln GB/s | kiln eager us |",
    "|---|---|---|---|---|---|---|---|",
]
for name, c in cases.items():
    t = c["torch_us"]
    tr = c["triton_us"]
    ratio = f"{t / c['kiln_us']:.1f}x faster" if t else "-"
    lines.append(
        f"| {name} | {c['kiln_us']:.2f} ({c['variant']}) | {t:.2f} | {tr:.2f} | {ratio} | {c['floor_us']:.2f} | {c['gbps']:.0f} | {c['kiln_eager_us']:.2f} |"
        if t and tr else f"| {name} | {c['kiln_us']:.2f} ({c['variant']}) | {t} | {tr} | {ratio} | {c['floor_us']:.2f} | {c['gbps']:.0f} | {c['kiln_eager_us']:.2f} |"
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
    f"{torch_launch if torch_launch is None else round(torch_launch, 2)} us.",
    "",
    f"![chart]({'../../docs/bench-h200.png'})",
]
open(stem + ".md", "w").write("\n".join(lines) + "\n")
