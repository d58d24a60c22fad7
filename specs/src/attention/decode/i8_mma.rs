//! The `mma` variant of the i8 order ([`super::i8`]): both products on NVIDIA's `mma.sync
//! m16n8k32 s8` (sm_80+; exact integer products and sums), the softmax on the accumulator
//! layout. `g = lane >> 2`, `t = lane & 3` below (PTX's `groupID`, `threadID_in_group`).
//!
//! A wave runs a split, 4 waves a workgroup (as `rR`); M = a tile of 16 rows of the KV head
//! (`rows_per_head` padded: a padding row repeats the last row's q and stores nothing).
//! - Scores: A = q's quants of block `b` (LDS, loaded once), its k-slot `4t + c` mapped to
//!   dimension `8t + c` and `16 + 4t + c` to `8t + 4 + c`, so each B register pair of a lane is
//!   the 8 contiguous quant bytes `[8t, 8t + 8)` of a key's block. Four B tiles `j` of 8 keys;
//!   column `n` of tile `j` reads chunk key `4(n/2) + 2(j%2) + n%2 + 16(j/2)`, so C element `e`
//!   of tile `j` (row `g + 8(e/2)`, column `2t + e%2`) is key `4t + 2(j%2) + e%2 + 16(j/2)`: a
//!   lane's scores are keys `4t..4t+4` and `16+4t..16+4t+4` of rows `g` and `g + 8`.
//! - Softmax: a row's 32 keys are on the 4 lanes of a group (its max and the `l_chunk` tree's
//!   last two levels by xor shuffles 1 and 2).
//! - P V: A = P's quants (a lane's C keys are exactly its A k-slots of the product: no
//!   shuffles), B tile `i` of block `b` has dimension `32b + 4g + i` in column `g`, from the words
//!   `[34b + 2 + 4g, +4)` of the lane's 8 keys transposed by 8 byte permutes a 4 keys. C element
//!   `e` of tile `i` is row `g + 8(e/2)`, dimension `32b + 8t + 4(e%2) + i`.

use super::combine::{combine, last_of, States};
use super::i8::{chunk_words, load_scale, load_word, p_quant, p_scale, row_base, CHUNK, TILE_ROWS};
use super::{load_q, row, slot, Ctx, Row, Shape};
use crate::math::exp_sub;
use crate::quantize::pack_word;
use kiln_ir::matrix::{FragmentRole, MmaKind};
use kiln_ir::{BarrierKind, KernelBuilder, Param, ScalarType, Type, Value};

/// Keys of the lane in a chunk: `4t + c` and `16 + 4t + c` (`c = 0..4`), in this order.
const LANE_KEYS: usize = 8;

/// The lane's two rows (`g`, `g + 8` of the tile).
struct LaneRows {
    rows: [Row; 2],
}

/// `mma`'s kernel body.
#[allow(clippy::too_many_arguments)]
pub(super) fn body(
    b: &mut KernelBuilder,
    c: &Ctx,
    kind: MmaKind,
    shape: Shape,
    wave_id: Value,
    rg: Value,
    zg: Value,
    counters: Param,
) {
    let flag = b.lds("count", ScalarType::U32, 1);
    let nw = b.u32(shape.waves);
    let s0 = b.mul(zg, nw);
    let busy = b.lt(s0, c.n_splits);
    b.if_then(busy, |b| {
        let tr = b.u32(TILE_ROWS);
        let i0 = b.mul(rg, tr);
        load_q(b, c, i0, TILE_ROWS);
        b.barrier(BarrierKind::Lds);
        let s = b.add(s0, wave_id);
        let mine = b.lt(s, c.n_splits);
        let two = b.u32(2);
        let three = b.u32(3);
        let g = b.shr(c.lane, two);
        let t = b.and(c.lane, three);
        let ig = b.add(i0, g);
        let eight = b.u32(8);
        let ig8 = b.add(ig, eight);
        let lr = LaneRows { rows: [row(b, c, ig), row(b, c, ig8)] };
        let st = scan(b, c, kind, &lr, g, t, s, mine);
        b.if_then(mine, |b| store(b, c, &lr, t, s, &st));
        let nwm1 = b.u32(shape.waves - 1);
        let total = b.add(c.n_splits, nwm1);
        let total = b.div(total, nw);
        let hr = b.mul(c.h, c.rows_per_head);
        let counter = b.add(hr, rg);
        last_of(b, c, flag, counters, counter, total, |b| {
            let rows: Vec<Row> = (0..TILE_ROWS)
                .map(|k| {
                    let kk = b.u32(k);
                    let i = b.add(i0, kk);
                    row(b, c, i)
                })
                .collect();
            combine(b, c, &rows, wave_id, shape.waves, States::Partials);
            let zero = b.u32(0);
            let first = b.eq(c.tid, zero);
            b.if_then(first, |b| {
                let z = b.u32(0);
                b.store(counters, counter, z);
            });
        });
    });
}

/// Index of accumulator `(block, row r, dimension 32 block + 8t + j)` in the state (after `m`,
/// `l` of the two rows).
fn acc_index(bi: u32, r: u32, j: u32) -> usize {
    (4 + (bi * 2 + r) * 8 + j) as usize
}

/// The split's state of the lane's rows: `[m_g, m_g8, l_g, l_g8, acc...]` ([`acc_index`]).
#[allow(clippy::too_many_arguments)]
fn scan(
    b: &mut KernelBuilder,
    c: &Ctx,
    kind: MmaKind,
    lr: &LaneRows,
    g: Value,
    t: Value,
    s: Value,
    mine: Value,
) -> Vec<Value> {
    let blocks = c.d / 32;
    let qd_lds = c.qd_lds.expect("the i8 order's q scales");
    // A fragments of q (a block each) and the rows' block scales, loaded once.
    let two = b.u32(2);
    let t2 = b.mul(t, two);
    let mut qa = vec![];
    let mut dq = vec![];
    for bi in 0..blocks {
        let mut regs = vec![];
        for half in 0..2 {
            for r in 0..2u32 {
                // Word `(row, 32 bi + 8t + 4 half)` of `[16][D]` bytes.
                let rr = b.u32(r * 8);
                let rw = b.add(g, rr);
                let dw = b.u32(c.d / 4);
                let at = b.mul(rw, dw);
                let o = b.u32(8 * bi + half);
                let at = b.add(at, o);
                let at = b.add(at, t2);
                regs.push(b.load(c.q_lds, at, Type::U32));
            }
        }
        qa.push(fragment_of_words(b, kind, FragmentRole::A, &regs));
        for r in 0..2u32 {
            let rr = b.u32(r * 8);
            let rw = b.add(g, rr);
            let nb = b.u32(blocks);
            let at = b.mul(rw, nb);
            let o = b.u32(bi);
            let at = b.add(at, o);
            dq.push(b.load(qd_lds, at, Type::F32));
        }
    }
    let n_acc = (blocks * 2 * 8) as usize;
    let mut init = vec![b.f32(f32::NEG_INFINITY); 2];
    init.extend((0..2 + n_acc).map(|_| b.f32(0.0)));
    let c0 = b.mul(s, c.cps);
    let (zero, one) = (b.u32(0), b.u32(1));
    b.for_range(zero, c.cps, one, 1, &init, |b, i, st| {
        let chunk = b.add(c0, i);
        let inside = b.lt(chunk, c.n_chunks);
        let go = b.and(mine, inside);
        b.if_else(go, |b| chunk_step(b, c, kind, lr, g, t, chunk, &qa, &dq, st), |_| st.to_vec())
    })
}

/// One chunk folded into the lane's rows' state.
#[allow(clippy::too_many_arguments)]
fn chunk_step(
    b: &mut KernelBuilder,
    c: &Ctx,
    kind: MmaKind,
    lr: &LaneRows,
    g: Value,
    t: Value,
    chunk: Value,
    qa: &[Value],
    dq: &[Value],
    st: &[Value],
) -> Vec<Value> {
    let blocks = c.d / 32;
    let ck = b.u32(CHUNK);
    let k0 = b.mul(chunk, ck);
    let one = b.u32(1);
    let last = b.sub(c.kv_len, one);
    let four = b.u32(4);
    let t4 = b.mul(t, four);
    // The lane's keys (unclamped, for the mask) and their rows (clamped, for the loads).
    let mut keys = vec![];
    let mut bases = vec![];
    for k in 0..LANE_KEYS as u32 {
        let o = b.u32(16 * (k / 4) + k % 4);
        let kk = b.add(t4, o);
        let key = b.add(k0, kk);
        let kc = b.min(key, last);
        keys.push(key);
        bases.push(row_base(b, c, kc));
    }
    // Step 1: scores of rows g, g + 8 for the lane's keys, the blocks in order.
    let zc = b.i32(0);
    let zero_c = b.fragment_splat(kind, FragmentRole::C, zc);
    let one_u = b.u32(1);
    let gh = b.shr(g, one_u);
    let gh = b.mul(gh, four);
    let gl = b.and(g, one_u);
    let col0 = b.add(gh, gl);
    let col0 = b.add(k0, col0);
    let col_bases: Vec<Value> = (0..4u32)
        .map(|j| {
            let o = b.u32(2 * (j % 2) + 16 * (j / 2));
            let key = b.add(col0, o);
            let key = b.min(key, last);
            row_base(b, c, key)
        })
        .collect();
    let eight = b.u32(8);
    let t8 = b.mul(t, eight);
    let fz = b.f32(0.0);
    let mut s = [[fz; LANE_KEYS]; 2];
    for bi in 0..blocks {
        let dk: Vec<Value> = bases
            .iter()
            .map(|&base| {
                let o = b.u32(34 * bi);
                let at = b.add(base, o);
                load_scale(b, c.k_cache, at)
            })
            .collect();
        for (j, &cb) in col_bases.iter().enumerate() {
            let o = b.u32(34 * bi + 2);
            let at = b.add(cb, o);
            let at = b.add(at, t8);
            let kw = chunk_words(b, c.k_cache, at);
            let kb = fragment_of_words(b, kind, FragmentRole::B, &kw);
            let d = b.mma(kind, qa[bi as usize], kb, zero_c);
            for e in 0..4u32 {
                let r = (e / 2) as usize;
                let k = 4 * (j / 2) + 2 * (j % 2) + (e % 2) as usize;
                let x = b.extract(d, e as u8);
                let x = b.convert(x, Type::F32);
                let f = b.mul(dq[bi as usize * 2 + r], dk[k]);
                s[r][k] = b.fma(x, f, s[r][k]);
            }
        }
    }
    // Step 2: the softmax of each row on its group's 4 lanes.
    let ninf = b.f32(f32::NEG_INFINITY);
    let mut next = vec![fz; st.len()];
    let mut p = [[fz; LANE_KEYS]; 2];
    let mut a = [fz; 2];
    for r in 0..2 {
        let limit = lr.rows[r].limit;
        let mut mc = ninf;
        for k in 0..LANE_KEYS {
            let sv = b.mul(s[r][k], c.scale);
            let sees = b.le(keys[k], limit);
            s[r][k] = b.select(sees, sv, ninf);
            mc = b.max(mc, s[r][k]);
        }
        for o in [1, 2] {
            let y = b.shuffle_xor(mc, o);
            mc = b.max(mc, y);
        }
        let m2 = b.max(st[r], mc);
        a[r] = exp_sub(b, st[r], m2);
        for k in 0..LANE_KEYS {
            p[r][k] = exp_sub(b, s[r][k], m2);
        }
        let pr = &p[r];
        let x01 = b.add(pr[0], pr[1]);
        let x23 = b.add(pr[2], pr[3]);
        let lo = b.add(x01, x23);
        let x45 = b.add(pr[4], pr[5]);
        let x67 = b.add(pr[6], pr[7]);
        let hi = b.add(x45, x67);
        let mut u = b.add(lo, hi);
        for o in [1, 2] {
            let y = b.shuffle_xor(u, o);
            u = b.add(u, y);
        }
        next[r] = m2;
        next[2 + r] = b.fma(st[2 + r], a[r], u);
    }
    // P V, a V block at a time.
    let g4 = b.mul(g, four);
    for bi in 0..blocks {
        let mut sc = [fz; 2];
        let mut qs = [[fz; LANE_KEYS]; 2];
        let dv: Vec<Value> = bases
            .iter()
            .map(|&base| {
                let o = b.u32(34 * bi);
                let at = b.add(base, o);
                load_scale(b, c.v_cache, at)
            })
            .collect();
        for r in 0..2 {
            let w: Vec<Value> = (0..LANE_KEYS).map(|k| b.mul(p[r][k], dv[k])).collect();
            let mut amax = fz;
            for &x in &w {
                let ax = b.abs(x);
                amax = b.max(amax, ax);
            }
            for o in [1, 2] {
                let y = b.shuffle_xor(amax, o);
                amax = b.max(amax, y);
            }
            let (scr, id) = p_scale(b, amax);
            sc[r] = scr;
            for k in 0..LANE_KEYS {
                qs[r][k] = p_quant(b, w[k], id);
            }
        }
        let regs = [
            pack_word(b, &qs[0][..4]),
            pack_word(b, &qs[1][..4]),
            pack_word(b, &qs[0][4..]),
            pack_word(b, &qs[1][4..]),
        ];
        let pa = fragment_of_words(b, kind, FragmentRole::A, &regs);
        // The V words `[34 bi + 2 + 4g, +4)` of the lane's keys, transposed to 4 keys a word.
        let o = b.u32(34 * bi + 2);
        let words: Vec<Value> = bases
            .iter()
            .map(|&base| {
                let at = b.add(base, o);
                let at = b.add(at, g4);
                load_word(b, c.v_cache, at)
            })
            .collect();
        let lo = transpose(b, &words[..4]);
        let hi = transpose(b, &words[4..]);
        for i in 0..4 {
            let vb = fragment_of_words(b, kind, FragmentRole::B, &[lo[i], hi[i]]);
            let d = b.mma(kind, pa, vb, zero_c);
            for e in 0..4u32 {
                let r = (e / 2) as usize;
                let j = 4 * (e % 2) + i as u32;
                let at = acc_index(bi, r as u32, j);
                let x = b.extract(d, e as u8);
                let x = b.convert(x, Type::F32);
                let ra = b.mul(st[at], a[r]);
                next[at] = b.fma(x, sc[r], ra);
            }
        }
    }
    next
}

/// A fragment of 8-bit elements from its registers (words, element 0 in the low byte).
fn fragment_of_words(
    b: &mut KernelBuilder,
    kind: MmaKind,
    role: FragmentRole,
    words: &[Value],
) -> Value {
    let mut elems = vec![];
    for &w in words {
        let v = b.bitcast(w, Type::vector(ScalarType::I8, 4));
        elems.extend((0..4).map(|e| b.extract(v, e)));
    }
    b.fragment_of(kind, role, &elems)
}

/// Words `w[c]` (key `c`'s bytes of dimensions `0..4`) transposed: result `i` holds dimension
/// `i` of keys `0..4`, key 0 in the low byte (8 byte permutes).
fn transpose(b: &mut KernelBuilder, w: &[Value]) -> [Value; 4] {
    let a_lo = b.perm(w[0], w[1], [0, 4, 1, 5]);
    let a_hi = b.perm(w[0], w[1], [2, 6, 3, 7]);
    let b_lo = b.perm(w[2], w[3], [0, 4, 1, 5]);
    let b_hi = b.perm(w[2], w[3], [2, 6, 3, 7]);
    [
        b.perm(a_lo, b_lo, [0, 1, 4, 5]),
        b.perm(a_lo, b_lo, [2, 3, 6, 7]),
        b.perm(a_hi, b_hi, [0, 1, 4, 5]),
        b.perm(a_hi, b_hi, [2, 3, 6, 7]),
    ]
}

/// Stores the split's state of the lane's rows that exist: `acc` as 4 dimensions a store, `m`
/// and `l` from lane `t = 0` of each group.
fn store(b: &mut KernelBuilder, c: &Ctx, lr: &LaneRows, t: Value, s: Value, st: &[Value]) {
    let blocks = c.d / 32;
    let eight = b.u32(8);
    let t8 = b.mul(t, eight);
    let zero = b.u32(0);
    let first = b.eq(t, zero);
    for (r, rw) in lr.rows.iter().enumerate() {
        let base = slot(b, c, rw.global, s);
        let partials = c.partials;
        let d = c.d;
        b.if_then(rw.valid, |b| {
            for bi in 0..blocks {
                for h in 0..2u32 {
                    let o = b.u32(32 * bi + 4 * h);
                    let at = b.add(base, o);
                    let at = b.add(at, t8);
                    let xs: Vec<Value> =
                        (0..4).map(|i| st[acc_index(bi, r as u32, 4 * h + i)]).collect();
                    let x = b.make_vector(&xs);
                    b.store(partials, at, x);
                }
            }
            b.if_then(first, |b| {
                let dm = b.u32(d);
                let am = b.add(base, dm);
                b.store(partials, am, st[r]);
                let dl = b.u32(d + 1);
                let al = b.add(base, dl);
                b.store(partials, al, st[2 + r]);
            });
        });
    }
}
