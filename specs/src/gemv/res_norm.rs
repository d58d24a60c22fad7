//! The `_res_rmsnorm` epilogue of the residual GEMVs (`gemv_<fmt>_rp_res_rmsnorm`): `y = res +
//! W x` exactly as the `_res` kernel computes it (the same code), then, in the last workgroup to
//! finish, `rmsnorm_q8_1s_f32` of `y`'s `t` rows into `norm_xq` / `norm_xs`. A decode step runs
//! the norm after every residual GEMV (about 65 launches a step of a Llama-3-8B-shaped model, each
//! 2.6 us on the H200 plus a launch gap); here it costs one workgroup's tail instead.
//!
//! The order, bit for bit `_res` followed by `rmsnorm_q8_1s_f32` with `rows = t`:
//! 1. every workgroup stores its rows of `y` as the `_res` kernel does;
//! 2. it makes them visible and counts itself on `counters[0]`
//!    ([`last_of_workgroups`]: device fence, barrier, one atomic add); the workgroup that brings
//!    the count to the grid's size fences again, sets the counter back to 0 (the next call, or a
//!    graph replay, starts from it) and
//! 3. normalizes and quantizes `y`'s rows, a token at a time, with the `_norm` prologue's
//!    phases ([`RowNorm::run_row`]: the norm's 512-lane order emulated on this workgroup's
//!    waves, and the norm's own builders; each phase's loads issued a batch of trips at a time,
//!    so a token costs a few memory round trips), writing to global memory ([`Blocks::Global`]).
//!
//! `y` is read back, so it is read-write in the ABI (never read before this call writes it).
//! Rows are whole Q8 blocks of at most [`NORM_MAX_K`] values (two vectors a lane of the
//! norm's workgroup): rules on `n`, so other lengths are refused before launch.

use super::format::QK;
use super::norm::{Blocks, RowNorm, NORM_MAX_K};
use crate::common::{last_of_workgroups, reset_counter};
use kiln_ir::{
    Access, Dim, KernelBuilder, LdsSlot, Param, ScalarRule, ScalarType, ShapeExpr, Value,
};

/// The tail's parameters and LDS.
#[derive(Clone, Copy)]
pub(crate) struct Tail {
    /// The norm of `y`'s rows.
    norm: RowNorm,
    /// `norm_xq`.
    q: Param,
    /// `norm_xs`.
    s: Param,
    /// The workspace: one counter.
    counters: Param,
    /// The count as lane 0 read it, for the workgroup.
    flag: LdsSlot,
}

impl Tail {
    /// Declares `weight` (`n`), `eps`, the outputs `norm_xq` (`u8`, `t * n`) and `norm_xs`
    /// (`u32`, `t * n / 32`), the workspace `counters` and the LDS, with the rules on `n`; `y`
    /// is the GEMV's output (declared read-write).
    pub(crate) fn declare(b: &mut KernelBuilder, wave: u32, y: Param, n: Param, t: Param) -> Tail {
        b.scalar_rule(n, ScalarRule::AtMost(NORM_MAX_K as u64));
        b.scalar_rule(n, ScalarRule::MultipleOf(QK as u64));
        b.const_param("norm_max_k", NORM_MAX_K as i64);
        let weight = b.buffer("weight", ScalarType::F32, Access::Read);
        b.set_buffer_len(weight, ShapeExpr::scaled(&[n], 1, 1));
        let eps = b.scalar_param("eps", ScalarType::F32);
        let q = b.buffer("norm_xq", ScalarType::U8, Access::Write);
        b.set_buffer_len(q, ShapeExpr::scaled(&[t, n], 1, 1));
        let s = b.buffer("norm_xs", ScalarType::U32, Access::Write);
        b.set_buffer_len(s, ShapeExpr::scaled(&[t, n], 1, QK as u64));
        let counters = b.workspace("counters", ScalarType::U32, ShapeExpr::constant(1));
        let flag = b.lds("count", ScalarType::U32, 1);
        let norm = RowNorm::new(b, wave, 1, (y, weight, eps));
        Tail { norm, q, s, counters, flag }
    }

    /// Steps 2 and 3, after this workgroup (`waves` waves of `wave` lanes) has stored its rows
    /// of `y` (`t` rows of `n`). Runs under workgroup-uniform control.
    pub(crate) fn run(
        &self,
        b: &mut KernelBuilder,
        (wave, waves): (u32, u32),
        (n, t): (Value, Value),
    ) {
        let tid = b.local_id();
        let zero = b.u32(0);
        let total = b.num_workgroups(Dim::X);
        last_of_workgroups(b, tid, self.flag, self.counters, zero, total, |b| {
            reset_counter(b, tid, self.counters, zero);
            let one = b.u32(1);
            let blocks = Blocks::Global { q: self.q, s: self.s };
            b.for_range(zero, t, one, 1, &[], |b, tok, _| {
                self.norm.run_row(b, (wave, waves), tok, n, blocks);
                vec![]
            });
        });
    }
}
