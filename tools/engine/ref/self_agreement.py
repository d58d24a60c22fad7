#!/usr/bin/env python3
"""How well two llama.cpp oracle fixtures agree with each other (issue 16).

kiln's engine is held to >= 99% top-1 agreement with llama.cpp on the teacher-forced
positions of tools/engine/ref/prompts.txt. This script asks what agreement is reachable
at all without copying llama.cpp's float order: it compares two fixtures written by
tools/engine/ref/oracle.cpp from the *same* llama.cpp source, built or run differently
(a native AVX2/AVX512 build against a build with every SIMD option off, or 1 thread
against 2), so only the float arithmetic order differs between them.

The measures mirror `compare` in tools/engine/src/oracle.rs, with REF in llama.cpp's
place and CAND in kiln's:
  - top-1: CAND's top-1 id equals REF's at a position;
  - near tie: at a disagreement, both ids are in REF's top-8 and REF's logits of the
    two are within NEAR_TIE (0.5) of each other;
  - |dlogit|: for each (id, logit) of REF's top-8, |CAND's logit of id - REF's|; max
    and mean over all such pairs. kiln reads the whole logit row; a fixture keeps only
    its top-8, so a pair whose id is not in CAND's top-8 cannot be measured: those are
    counted and reported (`unmeasured`), not guessed.
Both fixtures must hold the same prompts and token ids (the script checks).

Run (fixtures written by `oracle MODEL.gguf tools/engine/ref/prompts.txt > X.json`):
  python3 tools/engine/ref/self_agreement.py REF.json CAND.json [--json] [--list]
It also counts the positions whose REF top-1/top-2 logit gap is below a few bounds, and
how much CAND changes that gap (a shift common to all logits changes no top-1; this does),
and what top-1 agreement Gaussian noise of that size would give on REF's gaps (a rough model,
to tell how small the change must be for 99%).
--list prints every disagreement (prompt, position, the two ids, REF's logit gap);
--json prints the numbers as one JSON object instead of text.
"""

import argparse
import json
import math
import sys

NEAR_TIE = 0.5
# REF's top-1/top-2 logit gap: how many positions are closer than each of these (the
# positions a small logit difference can flip).
GAP_BINS = (0.02, 0.05, 0.1, 0.2, 0.5)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def expected_top1_rate(gaps, mean_abs_gap_change):
    """Top-1 agreement expected if CAND moved each top-1/top-2 gap by Gaussian noise.

    A rough model, not a measurement: the noise is N(0, s) with s set so that its mean
    absolute value is `mean_abs_gap_change`; a position flips when the noise takes its gap
    below zero, with probability Phi(-gap / s)."""
    if mean_abs_gap_change <= 0:
        return 1.0
    s = mean_abs_gap_change * math.sqrt(math.pi / 2)
    flips = sum(0.5 * math.erfc(g / (s * math.sqrt(2))) for g in gaps)
    return 1 - flips / max(len(gaps), 1)


def compare(ref, cand):
    """Agreement of CAND against REF, as kiln's oracle::compare counts it."""
    if len(ref["prompts"]) != len(cand["prompts"]):
        raise SystemExit(
            f"expected the same prompt count, found {len(ref['prompts'])} in REF "
            f"and {len(cand['prompts'])} in CAND"
        )
    out = {
        "positions": 0,
        "top1_equal": 0,
        "near_ties": 0,
        "mismatches": [],
        "pairs": 0,
        "unmeasured": 0,
        "max_abs_diff": 0.0,
        "mean_abs_diff": 0.0,
        "identical_top8_positions": 0,
        "ref_gap_below": {str(g): 0 for g in GAP_BINS},
        "gap_pairs": 0,
        "mean_abs_gap_change": 0.0,
        "max_abs_gap_change": 0.0,
    }
    gap_total = 0.0
    ref_gaps = []
    total = 0.0
    for pi, (rp, cp) in enumerate(zip(ref["prompts"], cand["prompts"])):
        if rp["ids"] != cp["ids"]:
            raise SystemExit(f"prompt {pi}: expected the same token ids in REF and CAND, found different ones")
        for i, (rtop, ctop) in enumerate(zip(rp["top8"], cp["top8"])):
            out["positions"] += 1
            out["identical_top8_positions"] += int(rtop == ctop)
            ref_gaps.append(rtop[0][1] - rtop[1][1])
            for g in GAP_BINS:
                out["ref_gap_below"][str(g)] += int(rtop[0][1] - rtop[1][1] < g)
            r1, c1 = rp["top1"][i], cp["top1"][i]
            rlog = {tid: l for tid, l in rtop}
            clog = {tid: l for tid, l in ctop}
            if r1 == c1:
                out["top1_equal"] += 1
            else:
                gap = abs(rlog[r1] - rlog[c1]) if c1 in rlog and r1 in rlog else None
                near = gap is not None and gap <= NEAR_TIE
                out["near_ties"] += int(near)
                out["mismatches"].append(
                    {"prompt": pi, "pos": i, "cand": c1, "ref": r1, "ref_gap": gap, "near_tie": near}
                )
            (a1, l1), (a2, l2) = rtop[0], rtop[1]
            if a1 in clog and a2 in clog:
                dg = abs((clog[a1] - clog[a2]) - (l1 - l2))
                gap_total += dg
                out["gap_pairs"] += 1
                out["max_abs_gap_change"] = max(out["max_abs_gap_change"], dg)
            for tid, l in rtop:
                if tid not in clog:
                    out["unmeasured"] += 1
                    continue
                d = abs(clog[tid] - l)
                total += d
                out["pairs"] += 1
                out["max_abs_diff"] = max(out["max_abs_diff"], d)
    out["mean_abs_diff"] = total / max(out["pairs"], 1)
    out["mean_abs_gap_change"] = gap_total / max(out["gap_pairs"], 1)
    out["expected_top1_rate"] = expected_top1_rate(ref_gaps, out["mean_abs_gap_change"])
    out["gap_change_for_99"] = next(
        (m / 1000 for m in range(1, 1001) if expected_top1_rate(ref_gaps, m / 1000) < 0.99), None
    )
    out["top1_rate"] = out["top1_equal"] / max(out["positions"], 1)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ref")
    ap.add_argument("cand")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    a = compare(load(args.ref), load(args.cand))
    if args.json:
        json.dump(a, sys.stdout, indent=1)
        print()
        return
    print(
        f"top-1 {a['top1_equal']}/{a['positions']} ({100 * a['top1_rate']:.1f}%); "
        f"{len(a['mismatches'])} disagreements, {a['near_ties']} near ties (gap <= {NEAR_TIE}); "
        f"|dlogit| over REF's top-8: max {a['max_abs_diff']:.4g}, mean {a['mean_abs_diff']:.4g} "
        f"({a['pairs']} pairs, {a['unmeasured']} not in CAND's top-8); "
        f"identical top-8 at {a['identical_top8_positions']}/{a['positions']} positions"
    )
    bins = ", ".join(f"< {g}: {n}" for g, n in a["ref_gap_below"].items())
    print(f"REF's top-1/top-2 gap at the {a['positions']} positions: {bins}")
    print(
        f"change of that gap in CAND (the part of |dlogit| that can flip a top-1): "
        f"mean {a['mean_abs_gap_change']:.4g}, max {a['max_abs_gap_change']:.4g} over {a['gap_pairs']} positions"
    )
    print(
        f"Gaussian model of that change: expected top-1 {100 * a['expected_top1_rate']:.1f}%; "
        f"99% expected only below a mean gap change of about {a['gap_change_for_99']}"
    )
    if args.list:
        for m in a["mismatches"]:
            gap = "n/a" if m["ref_gap"] is None else f"{m['ref_gap']:.4f}"
            print(f"  prompt {m['prompt']} pos {m['pos']}: cand {m['cand']} ref {m['ref']} ref gap {gap}")


if __name__ == "__main__":
    main()
