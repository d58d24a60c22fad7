"""What each sm_90 object of a package loads before its grid-dependency wait in the machine code,
without a GPU: the PTX through ptxas and nvdisasm (CUDA's, or those pip installs with
nvidia-cuda-nvcc: `scripts/setup.sh`), and the global loads before `ACQBULK` (the SASS of
`griddepcontrol.wait`) against the PTX's before the wait. More in the SASS means ptxas moved a
load made after the wait above it (a race with the grid before when that buffer is one it writes:
docs/gemv.md, "The activations stay after the wait"); fewer, that an early load sank past it.
This is how the twenty-ninth session found the early GEMVs' activation loads before the wait.

    python3 bench/sass_wait.py --package dist [--kernel gemv_q8_0_rp,...] [--all] [--jobs 8]

Lists the objects whose counts differ (with `--all`, every object that waits) and exits 1 when
one has more in the SASS.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_loops import tool  # noqa: E402


def counts(ptx_path, ptxas, nvdisasm, tmp):
    """(loads before the wait in the PTX, LDG before ACQBULK in the SASS), or None without a wait."""
    ptx = open(ptx_path).read()
    wait = ptx.find("griddepcontrol.wait")
    if wait < 0:
        return None
    before = len(re.findall(r"\bld\.global", ptx[:wait]))
    cubin = os.path.join(tmp, ptx_path.replace(os.sep, "_") + ".cubin")
    subprocess.run([ptxas, "-arch=sm_90", ptx_path, "-o", cubin], check=True)
    sass = subprocess.run([nvdisasm, cubin], check=True, capture_output=True, text=True).stdout
    acq = sass.find("ACQBULK")
    return before, len(re.findall(r"\bLDG", sass[:acq] if acq >= 0 else sass))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--package", required=True)
    ap.add_argument("--kernel", help="comma-separated families (default: all)")
    ap.add_argument("--all", action="store_true", help="list every object that waits")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    ptxas, nvdisasm = tool("ptxas", "KILN_PTXAS"), tool("nvdisasm", "KILN_NVDISASM")
    fams = a.kernel.split(",") if a.kernel else ["*"]
    paths = sorted(p for f in fams for p in glob.glob(os.path.join(a.package, f, "*.sm_90.ptx")))
    if not paths:
        sys.exit(f"sass_wait: no sm_90 objects under {a.package}")
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(a.jobs) as ex:
        results = list(ex.map(lambda p: (p, counts(p, ptxas, nvdisasm, tmp)), paths))
    waiting = [(p, c) for p, c in results if c is not None]
    above = [(p, c) for p, c in waiting if c[1] > c[0]]
    for p, (ptx, sass) in waiting:
        if a.all or sass != ptx:
            note = "moved above the wait" if sass > ptx else ("sank past it" if sass < ptx else "")
            print(f"{os.path.relpath(p, a.package):64s} PTX {ptx:3d}  SASS {sass:3d}  {note}")
    print(f"{len(waiting)} objects wait; {len(above)} with a load moved above the wait")
    sys.exit(1 if above else 0)


if __name__ == "__main__":
    main()
