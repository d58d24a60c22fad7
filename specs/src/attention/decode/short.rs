//! The `short` variants of decode attention (`short`: four rows a workgroup; `short_r1`: one,
//! for more workgroups when there are few rows; `short_r1t640`: one row, 640 lanes, for the
//! contexts up to 632 positions at head dim 64): at a context whose splits all fit in one
//! workgroup (`n_splits <= waves`, a wave a split), the `rR` design's two global round trips
//! (each split's state to `partials`, a counter, the last workgroup reading them back) and its
//! idle workgroups are pure latency. Here one workgroup a (row group, KV head) keeps the states
//! in LDS (in `k_chunks`, free once the scan is done) and combines them after a barrier.
//!
//! Every step is the family's (the same [`scan`] and [`combine`]: only where the states are kept
//! differs), so the bits are the baseline's. A call with more splits (outside the route's
//! admission, but a valid call, and parity runs every variant on every case) still gets them:
//! row by row (several rows' states spill next to the fast path's), the waves take the splits
//! in passes, store them in `partials` and the workgroup combines from there (no counter: one
//! workgroup holds every split). `counters` is never touched.

use super::{
    combine, combine_direct, first_loads, load_q, row, scan, store_lds, store_state, Ctx, Fold,
    LdsStates, Row, States, GROUPED_ABOVE,
};
use kiln_ir::{BarrierKind, KernelBuilder, Value};

/// Rows a workgroup of `short` (`short_r1` has one).
pub const ROWS: u32 = 4;
/// Most tokens `short_r1` is routed for (more rows a head share each K/V read better in
/// `short`).
pub const R1_MAX_TOKENS: u64 = 2;
/// Lanes a workgroup (at every wave size `THREADS / W` waves cover `THREADS` keys: one chunk
/// of `W` keys a wave).
pub const THREADS: u32 = 256;
/// Lanes a workgroup of `short_r1t640` (head dim 64 only: twenty waves' staged K chunks are
/// 44.8 KB of LDS, within the 48 KiB a workgroup has on every arch; on NVIDIA the 64K registers
/// of an SM cap it at 96 a lane). It takes `pos <= WIDE_THREADS - 8`.
pub const WIDE_THREADS: u32 = 640;
/// The NVIDIA archs where `short_r1t640` builds its 640 lanes (and is routed: measured on the
/// H200): sm_86's ptxas spills 8 bytes under the 96-register cap, so sm_75 to sm_89 build the
/// 256-lane code under the name.
pub const WIDE_NVIDIA_ARCHS: &[&str] = &["sm_90"];
/// Largest `pos` the route admits: `kv_len <= pos + n_tokens <= THREADS` keys for every
/// `n_tokens <= 8`, so every split fits in the workgroup (`cps = 1` below 128 chunks). The
/// admission is on single scalars, so `pos` in `MAX_POS + 1 .. THREADS` goes to the other
/// routes even where `T` would allow it.
pub const MAX_POS: u64 = (THREADS - 8) as u64;

/// The kernel's body after the common set-up: row group `rg` of `r` rows, `waves` waves;
/// `splits`: where the splits' states go in `k_lds`.
pub(super) fn body(
    b: &mut KernelBuilder,
    c: &Ctx,
    r: u32,
    waves: u32,
    wave_id: Value,
    rg: Value,
    splits: LdsStates,
) {
    // Where every split fits the workgroup, step 3 has one level.
    assert!(waves <= GROUPED_ABOVE, "{waves} waves hold more splits than one level takes");
    let rv = b.u32(r);
    let i0 = b.mul(rg, rv);
    // The first chunk of the wave's split (the route's case) is asked for before q (where
    // [`first_loads`] says: not by the 640-lane variant, which would spill under its cap).
    let first = first_loads(b, c, |_| wave_id, r as usize);
    load_q(b, c, i0, r);
    b.barrier(BarrierKind::Lds);
    let rows: Vec<Row> = (0..r)
        .map(|k| {
            let kk = b.u32(k);
            let i = b.add(i0, kk);
            row(b, c, i)
        })
        .collect();
    let nw = b.u32(waves);
    // Uniform: every split has its wave (the route's case).
    let fits = b.le(c.n_splits, nw);
    b.if_else(
        fits,
        |b| {
            let mine = b.lt(wave_id, c.n_splits);
            // Ends with a barrier: `k_lds` is free for the states.
            let st = scan(b, c, &rows, wave_id, mine, first.as_ref());
            b.if_then(mine, |b| store_lds(b, c, &rows, splits, wave_id, &st));
            b.barrier(BarrierKind::Lds);
            combine(b, c, &rows, wave_id, waves, States::Lds(splits), Fold::UNROLLED);
            vec![]
        },
        |b| {
            // Row by row (the registers of one row's states: several spill next to the
            // fast path's), the waves taking the splits in passes.
            let (zero, one) = (b.u32(0), b.u32(1));
            let rv = b.u32(r);
            b.for_range(zero, rv, one, 1, &[], |b, k, _| {
                let i = b.add(i0, k);
                b.barrier(BarrierKind::Lds);
                load_q(b, c, i, 1);
                b.barrier(BarrierKind::Lds);
                let rows = [row(b, c, i)];
                let nwm1 = b.u32(waves - 1);
                let passes = b.add(c.n_splits, nwm1);
                let passes = b.div(passes, nw);
                let (zero, one) = (b.u32(0), b.u32(1));
                b.for_range(zero, passes, one, 1, &[], |b, p, _| {
                    let s0 = b.mul(p, nw);
                    let s = b.add(s0, wave_id);
                    let mine = b.lt(s, c.n_splits);
                    let st = scan(b, c, &rows, s, mine, None);
                    b.if_then(mine, |b| store_state(b, c, &rows, s, &st));
                    vec![]
                });
                b.barrier(BarrierKind::All);
                combine_direct(b, c, &rows);
                // The next row writes the LDS (q, weights) again.
                b.barrier(BarrierKind::All);
                vec![]
            });
            vec![]
        },
    );
}
