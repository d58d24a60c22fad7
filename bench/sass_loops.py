"""Static SASS profile of a package's NVIDIA objects, without a GPU: each variant's PTX through
ptxas and nvdisasm (CUDA's, or those pip installs with nvidia-cuda-nvcc: `scripts/setup.sh`), then
the instructions of its hot code (what precedes ptxas's out-of-line `WARPSYNC.COLLECTIVE` stubs,
the slow paths of shuffles in code it cannot prove converged) and of its largest loops (a back
edge: a branch to a lower address), by opcode. For comparing variants that give the same bits
(`ld_matrix` against LDS reads, say) before a GPU times them: a loop's count is what one trip
issues when it takes every branch, not a time.

    python3 bench/sass_loops.py --package dist --kernel attention_prefill_f16_d128 \\
        --variants w4g,w4gx [--arch sm_90] [--loops 2] [--blocks]

`--blocks` also lists each loop's straight-line pieces in address order (cut at branch targets,
and after branches, exits and barriers), with their sizes and what ends them, so the count of
one path through the loop (a uniform branch's arm, a chunk inside the context) can be summed.
"""
import argparse
import collections
import glob
import os
import re
import shutil
import site
import subprocess
import sys
import tempfile


def tool(name, env):
    """The path of `name` (ptxas, nvdisasm): $KILN_PTXAS's folder, PATH, or pip's nvidia wheels."""
    given = os.environ.get(env)
    if given:
        return given
    ptxas = os.environ.get("KILN_PTXAS")
    if ptxas and os.path.exists(os.path.join(os.path.dirname(ptxas), name)):
        return os.path.join(os.path.dirname(ptxas), name)
    found = shutil.which(name)
    if found:
        return found
    for s in site.getsitepackages() + [site.getusersitepackages()]:
        for p in glob.glob(os.path.join(s, "nvidia", "*", "bin", name)):
            return p
    sys.exit(f"sass_loops: no {name} (install nvidia-cuda-nvcc with pip, or set {env})")


def parse(sass):
    """(labels: name -> address, instructions: [(address, text)]) of nvdisasm's listing."""
    labels, insts, pending = {}, [], []
    for ln in sass.splitlines():
        m = re.match(r"^(\.L_x_\d+):", ln.strip())
        if m:
            pending.append(m.group(1))
            continue
        m = re.match(r"^\s+/\*([0-9a-f]+)\*/\s+(.*?);", ln)
        if m:
            addr = int(m.group(1), 16)
            for p in pending:
                labels[p] = addr
            pending = []
            insts.append((addr, m.group(2).strip()))
    return labels, insts


def opcode(text):
    """The opcode of an instruction, without its predicate and modifiers."""
    return re.sub(r"^@!?U?P\w+\s+", "", text).split()[0].split(".")[0]


def profile(sass, loops):
    """The hot code's size and opcodes, and its `loops` largest loops'."""
    labels, insts = parse(sass)
    stubs = [a for a, t in insts if "WARPSYNC.COLLECTIVE" in t]
    first_stub = min(stubs) if stubs else None
    exits = [a for a, t in insts if t.endswith("EXIT") and (first_stub is None or a < first_stub)]
    end = max(exits) if exits else insts[-1][0]
    hot = [(a, t) for a, t in insts if a <= end]
    edges = set()
    for addr, text in hot:
        m = re.search(r"BRA\s+(?:\S+\s+)?`?\(?(\.L_x_\d+)", text)
        if m and m.group(1) in labels and labels[m.group(1)] < addr:
            edges.add((labels[m.group(1)], addr))
    ranked = sorted(edges, key=lambda e: e[0] - e[1])[:loops]
    out = {"instructions": len(insts), "hot": len(hot), "loops": []}
    targets = set(labels.values())
    for lo, hi in ranked:
        body = [(a, t) for a, t in hot if lo <= a <= hi]
        ops = collections.Counter(opcode(t) for _, t in body)
        out["loops"].append((lo, hi, len(body), ops, pieces(body, targets)))
    return out


def pieces(body, targets):
    """[(first address, instructions, the last one's text)] of `body` cut at branch targets and
    after branches, exits and barriers."""
    got, start, n = [], None, 0
    for addr, text in body:
        if addr in targets and n:
            got.append((start, n, ""))
            n = 0
        if n == 0:
            start = addr
        n += 1
        if re.search(r"\b(BRA|EXIT|BAR)\b", text):
            got.append((start, n, text))
            n = 0
    if n:
        got.append((start, n, ""))
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--package", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--variants", required=True, help="comma-separated")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--loops", type=int, default=1, help="largest loops shown a variant")
    ap.add_argument("--opcodes", type=int, default=16, help="opcodes shown a loop")
    ap.add_argument("--blocks", action="store_true", help="list each loop's pieces")
    a = ap.parse_args()
    ptxas, nvdisasm = tool("ptxas", "KILN_PTXAS"), tool("nvdisasm", "KILN_NVDISASM")
    with tempfile.TemporaryDirectory() as tmp:
        for v in a.variants.split(","):
            ptx = os.path.join(a.package, a.kernel, f"{v}.{a.arch}.ptx")
            if not os.path.exists(ptx):
                sys.exit(f"sass_loops: {ptx}: no such object (is {v} built for {a.arch}?)")
            cubin = os.path.join(tmp, f"{v}.cubin")
            subprocess.run([ptxas, f"-arch={a.arch}", "-O3", ptx, "-o", cubin], check=True)
            sass = subprocess.run([nvdisasm, "-c", cubin], check=True, capture_output=True,
                                  text=True).stdout
            p = profile(sass, a.loops)
            print(f"{a.kernel}/{v} on {a.arch}: {p['instructions']} instructions, "
                  f"{p['hot']} in the hot code")
            for lo, hi, n, ops, parts in p["loops"]:
                shown = ", ".join(f"{o} {c}" for o, c in ops.most_common(a.opcodes))
                print(f"  loop {lo:#x}-{hi:#x}: {n} instructions: {shown}")
                if a.blocks:
                    for start, count, last in parts:
                        print(f"    {start:#07x} {count:4d}  {last}")


if __name__ == "__main__":
    main()
