//! Dense GEMV: `y[t][n] = sum_k W[n][k] * x[t][k]` for `t` tokens, with the residual and the
//! fused gate/up SwiGLU epilogues.
//!
//! The order of the f32 arithmetic (every variant keeps it, so all agree bit for bit): for each
//! output, the `k / 32` blocks are dealt to `W` slots (the wave's lanes), block `b` to slot
//! `b mod W`; each slot adds its blocks in increasing order with [`accumulate`], from `+0.0`;
//! the `W` slot sums are then added by the xor butterfly with offsets `W/2, ..., 1` (what
//! `wave_reduce(add)` and `tsum` both compute). The epilogue adds the residual once
//! (`res + sum`) or takes `silu(gate) * up` (portable `exp`).
//!
//! Variants:
//! - `baseline`: one wave a workgroup, one row a wave, one token at a time (the weights are read
//!   once per token), `wave_reduce(add)`.
//! - `pN` (N = 1..8): four waves a workgroup, one row a wave, `N` tokens a pass sharing each
//!   weight block read, reduced together by `tsum<P>` (P the power of two at or above N). Any
//!   `t` is computed (passes of N tokens; tokens past `t` in the last pass are loaded clamped
//!   and not stored); the router takes `pN` for the `t` it is fastest at.

use super::format::{accumulate, Acts, Layout, WType, Weights, QK};
use crate::math::silu;
use kiln_ir::target::Family;
use kiln_ir::{
    Access, Dim, Kernel, KernelBuilder, Param, ReduceOp, ScalarRule, ScalarType, ShapeExpr, Target,
    Type, Value,
};

/// What is done with the sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Epilogue {
    /// `y = W x`.
    Plain,
    /// `y = res + W x` (the residual stream).
    Residual,
    /// `y = silu(Wg x) * (Wu x)`: gate and up in one pass.
    Swiglu,
}

impl Epilogue {
    /// The suffix of the family name.
    pub fn suffix(self) -> &'static str {
        match self {
            Epilogue::Plain => "",
            Epilogue::Residual => "_res",
            Epilogue::Swiglu => "_swiglu",
        }
    }
}

/// One GEMV kernel's shape.
#[derive(Clone, Copy, Debug)]
pub struct Gemv {
    /// Weight format.
    pub wt: WType,
    /// Weight layout.
    pub layout: Layout,
    /// Epilogue.
    pub epi: Epilogue,
    /// Tokens a pass (`None`: the baseline).
    pub tokens: Option<u32>,
    /// Rows a wave (each activation block loaded once for all of them).
    pub rows: u32,
    /// Unroll of the block loop (0: the default, 2 for one repacked row, else 1).
    pub unroll: u32,
    /// Waves a workgroup (0: [`WAVES`]).
    pub waves: u32,
}

impl Gemv {
    /// A `pN` / `pNrR` variant with the default unroll and waves.
    pub const fn tiled(wt: WType, layout: Layout, epi: Epilogue, tokens: u32, rows: u32) -> Gemv {
        Gemv { wt, layout, epi, tokens: Some(tokens), rows, unroll: 0, waves: 0 }
    }
    /// The baseline.
    pub const fn baseline(wt: WType, layout: Layout, epi: Epilogue) -> Gemv {
        Gemv { wt, layout, epi, tokens: None, rows: 1, unroll: 0, waves: 0 }
    }
    fn unroll_of(&self) -> u32 {
        match self.unroll {
            0 if self.layout == Layout::Repacked
                && self.epi != Epilogue::Swiglu
                && self.rows == 1 =>
            {
                2
            }
            0 => 1,
            u => u,
        }
    }
}

/// Waves a workgroup of the `pN` variants.
pub const WAVES: u32 = 4;

/// The family name: `gemv_q8_0`, `gemv_q4_0_rp_res`, ...
pub fn family_name(wt: WType, layout: Layout, epi: Epilogue) -> String {
    let l = match layout {
        Layout::Ggml => "",
        Layout::Repacked => "_rp",
    };
    format!("gemv_{}{l}{}", wt.name(), epi.suffix())
}

/// The declared parameters.
pub(crate) struct Params {
    pub weights: Vec<Weights>,
    pub acts: Acts,
    pub res: Option<Param>,
    pub y: Param,
    pub n: Param,
    pub k: Param,
    pub t: Param,
}

/// Declares a dense GEMV's parameters (weights, activations, residual, `y`, `n`, `k`, `t`).
fn declare(b: &mut KernelBuilder, g: &Gemv) -> Params {
    let n = b.scalar_param("n", ScalarType::U32);
    let k = b.scalar_param("k", ScalarType::U32);
    let t = b.scalar_param("t", ScalarType::U32);
    b.scalar_rule(n, ScalarRule::AtLeast(1));
    b.scalar_rule(k, ScalarRule::AtLeast(QK as u64));
    b.scalar_rule(k, ScalarRule::MultipleOf(QK as u64));
    b.scalar_rule(t, ScalarRule::AtLeast(1));
    let weights = match g.epi {
        Epilogue::Swiglu => vec![
            Weights::declare(b, "gate_w", g.wt, g.layout, &[n], k),
            Weights::declare(b, "up_w", g.wt, g.layout, &[n], k),
        ],
        Epilogue::Plain | Epilogue::Residual => {
            vec![Weights::declare(b, "w", g.wt, g.layout, &[n], k)]
        }
    };
    let acts = Acts::declare(b, g.wt, t, k);
    let res = match g.epi {
        Epilogue::Residual => {
            let r = b.buffer("res", ScalarType::F32, Access::Read);
            b.set_buffer_len(r, ShapeExpr::scaled(&[t, n], 1, 1));
            Some(r)
        }
        Epilogue::Plain | Epilogue::Swiglu => None,
    };
    let y = b.buffer("y", ScalarType::F32, Access::Write);
    b.set_buffer_len(y, ShapeExpr::scaled(&[t, n], 1, 1));
    Params { weights, acts, res, y, n, k, t }
}

/// The epilogue of one output: `sums` has one value a matrix.
pub(crate) fn finish(
    b: &mut KernelBuilder,
    epi: Epilogue,
    sums: &[Value],
    res: Option<Value>,
) -> Value {
    match epi {
        Epilogue::Plain => sums[0],
        Epilogue::Residual => b.add(res.expect("a residual"), sums[0]),
        Epilogue::Swiglu => {
            let s = silu(b, sums[0]);
            b.mul(s, sums[1])
        }
    }
}

/// The variant name: `baseline`, `pN` (one row a wave) or `pNrR`.
pub fn variant_name(g: &Gemv) -> String {
    let Some(p) = g.tokens else { return "baseline".to_string() };
    let mut s = format!("p{p}");
    if g.rows != 1 {
        s += &format!("r{}", g.rows);
    }
    if g.unroll != 0 {
        s += &format!("u{}", g.unroll);
    }
    if g.waves != 0 {
        s += &format!("w{}", g.waves);
    }
    s
}

/// The seeds' fused tsum GEMV-up kernel's VGPRs on gfx1201 for T = 1..6: the fused gate/up
/// variants `p1`..`p6` cap their registers there on AMD (so the scheduler issues loads later
/// instead of raising the count past what the seeds needed), and the family's budgets check it.
pub const SEED_SWIGLU_VGPRS: [u32; 6] = [45, 59, 68, 77, 86, 95];

/// Builds one dense GEMV kernel.
pub fn build(target: &Target, wave: u32, g: Gemv) -> Kernel {
    let mut b = KernelBuilder::new(
        format!("{}_{}", family_name(g.wt, g.layout, g.epi), variant_name(&g)),
        wave,
    );
    let p = declare(&mut b, &g);
    // On the archs the seeds measured (RDNA3 / RDNA4, wave 32): elsewhere the cap could spill.
    let rdna = matches!(target.family, Family::Rdna3 | Family::Rdna4);
    if let (Epilogue::Swiglu, Some(t @ 1..=6), true) = (g.epi, g.tokens, rdna) {
        b.max_registers(SEED_SWIGLU_VGPRS[t as usize - 1]);
    }
    let waves = match (g.tokens, g.waves) {
        (None, _) => 1,
        (Some(_), 0) => WAVES,
        (Some(_), w) => w,
    };
    let rows = if g.tokens.is_some() { g.rows } else { 1 };
    b.workgroup_size([waves * wave, 1, 1]);
    b.const_param("waves", waves as i64);
    b.const_param("rows_per_wave", rows as i64);
    b.const_param("tokens_per_pass", g.tokens.unwrap_or(1) as i64);
    b.grid([
        ShapeExpr::scaled(&[p.n], 1, (waves * rows) as u64),
        ShapeExpr::constant(1),
        ShapeExpr::constant(1),
    ]);
    let n = b.arg(p.n);
    let k = b.arg(p.k);
    let t = b.arg(p.t);
    let qk = b.u32(QK);
    let nb = b.div(k, qk);
    let lane = b.lane();
    let wave_id = b.wave();
    let wg = b.workgroup_id(Dim::X);
    let wv = b.u32(waves);
    let row0 = b.mul(wg, wv);
    let row0 = b.add(row0, wave_id);
    let rv = b.u32(rows);
    let row0 = b.mul(row0, rv);
    let one = b.u32(1);
    let last = b.sub(n, one);
    let nb64 = b.convert(nb, Type::U64);
    // Row r of the wave: its index, whether it exists, and its first block. Rows past `n`
    // compute on the last row and skip the store, so the cross-lane sums run with the whole
    // wave.
    let mut row_of = vec![];
    for r in 0..rows {
        let rr = b.u32(r);
        let row = b.add(row0, rr);
        let valid = b.lt(row, n);
        let row_c = b.min(row, last);
        let row64 = b.convert(row_c, Type::U64);
        let wrow = b.mul(row64, nb64);
        row_of.push((row, valid, row_c, wrow));
    }
    let per = g.tokens.unwrap_or(1);
    let step = b.u32(per);
    let zero = b.u32(0);
    let w = b.u32(wave);
    let mats = p.weights.len();
    let rn = rows as usize;
    let pn = per as usize;
    // acc[(mi * rows + r) * per + j]
    let at_acc = move |mi: usize, r: usize, j: usize| (mi * rn + r) * pn + j;
    b.for_range(zero, t, step, 1, &[], |b, tok0, _| {
        let fz = b.f32(0.0);
        let init = vec![fz; mats * rn * pn];
        let unroll = g.unroll_of();
        let accs = b.for_range(lane, nb, w, unroll, &init, |b, blk, acc| {
            let blk64 = b.convert(blk, Type::U64);
            let tl = b.sub(t, one);
            let mut next = acc.to_vec();
            // One matrix at a time (gate, then up): fewer registers live.
            for (mi, m) in p.weights.iter().enumerate() {
                let wbs: Vec<_> = row_of
                    .iter()
                    .map(|&(_, _, _, wrow)| {
                        let at = b.add(wrow, blk64);
                        m.load(b, at)
                    })
                    .collect();
                for j in 0..per {
                    let jj = b.u32(j);
                    let tok = b.add(tok0, jj);
                    let tok = b.min(tok, tl);
                    let ab = b.mul(tok, nb);
                    let ab = b.add(ab, blk);
                    // One activation block for every row of the wave (reloaded per matrix:
                    // the loads hit L1, and it keeps fewer registers live).
                    let a = p.acts.load(b, ab);
                    for (r, wb) in wbs.iter().enumerate() {
                        let i = at_acc(mi, r, j as usize);
                        next[i] = accumulate(b, wb, &a, next[i]);
                    }
                }
            }
            next
        });
        for (r, &(row, valid, row_c, _)) in row_of.iter().enumerate() {
            match g.tokens {
                None => {
                    // Baseline: one token a pass, each matrix's sum by the plain butterfly.
                    let sums: Vec<Value> = (0..mats)
                        .map(|mi| b.wave_reduce(ReduceOp::Add, accs[at_acc(mi, r, 0)]))
                        .collect();
                    let res = p.res.map(|rp| {
                        let i = b.mul(tok0, n);
                        let i = b.add(i, row_c);
                        b.load(rp, i, Type::F32)
                    });
                    let out = finish(b, g.epi, &sums, res);
                    let first = b.eq(lane, zero);
                    let ok = b.and(first, valid);
                    b.if_then(ok, |b| {
                        let i = b.mul(tok0, n);
                        let i = b.add(i, row);
                        b.store(p.y, i, out);
                    });
                }
                Some(per) => {
                    let pp = per.next_power_of_two();
                    let sums: Vec<Value> = (0..mats)
                        .map(|mi| {
                            let first = at_acc(mi, r, 0);
                            b.tsum(pp, &accs[first..first + per as usize])
                        })
                        .collect();
                    // Lanes [j*W/P, (j+1)*W/P) hold token j's sums; the first of them stores.
                    let span = b.u32(wave / pp);
                    let j = b.div(lane, span);
                    let head = b.rem(lane, span);
                    let tok = b.add(tok0, j);
                    let is_head = b.eq(head, zero);
                    let perv = b.u32(per);
                    let in_pass = b.lt(j, perv);
                    let in_t = b.lt(tok, t);
                    let ok = b.and(is_head, in_pass);
                    let ok = b.and(ok, in_t);
                    let ok = b.and(ok, valid);
                    b.if_then(ok, |b| {
                        let i = b.mul(tok, n);
                        let i = b.add(i, row);
                        let res = p.res.map(|rp| b.load(rp, i, Type::F32));
                        let out = finish(b, g.epi, &sums, res);
                        b.store(p.y, i, out);
                    });
                }
            }
        }
        vec![]
    });
    b.finish()
}
