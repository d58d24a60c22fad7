"""A list-scheduling model of the causal prompt attention's workgroups (docs/prefill.md, "Longest
workgroups first"): the hardware starts workgroups in the order of their ids as slots free up;
a workgroup's work is its row group's keys (in tiles of 16 tokens at group 4: row group `y`
walks `y + 1` of them) plus a fixed part. Prints the makespan against the ideal (total work over
the slots) with the row groups in order and longest first.

    python3 bench/prefill_schedule.py [--sms 132] [--kv 8] [--fixed 4]
"""
import argparse
import heapq


def makespan(sizes, slots):
    """When the last workgroup ends, each started on the first free slot in the given order."""
    free = [0.0] * slots
    end = 0.0
    for s in sizes:
        t = heapq.heappop(free) + s
        end = max(end, t)
        heapq.heappush(free, t)
    return end


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--kv", type=int, default=8)
    ap.add_argument("--group", type=int, default=4)
    ap.add_argument("--rows", type=int, default=64, help="rows a workgroup")
    ap.add_argument("--fixed", type=float, default=4.0, help="fixed work a workgroup, in tiles")
    args = ap.parse_args()
    print("| L | row groups a KV head | workgroups an SM | in order | longest first |")
    print("|---|---|---|---|---|")
    for length in (512, 2048, 8192):
        n_rg = length * args.group // args.rows
        for per_sm in (2, 3):
            slots = args.sms * per_sm
            # Workgroup ids: the KV head fastest (x), then the row group (y).
            in_order = [y + 1 + args.fixed for y in range(n_rg) for _ in range(args.kv)]
            ideal = sum(in_order) / slots
            a = makespan(in_order, slots) / ideal
            d = makespan(list(reversed(in_order)), slots) / ideal
            print(f"| {length} | {n_rg} | {per_sm} | {a:.2f}x | {d:.2f}x |")


if __name__ == "__main__":
    main()
