//! The wide variants of `gemv_q8_0_rp_k4` (the module docs of [`super`]): fragments filled by
//! 8- or 16-byte loads a lane ([`WideMap`]), `G` groups of a slot's blocks in flight, the first
//! trip's weights loaded before the grid-dependency wait; four waves ([`build_wide`]) or eight
//! ([`build_wide8`]) a workgroup.

use super::*;

/// How an 8-bit shape's A and B fragments can be filled by wide loads (8 or 16 bytes a lane): the
/// elements a lane holds of one row of A (one column of B) are `bytes` values of K, the same lists
/// in A and B, partitioning the shape's K. Storing list `j` (ordered by its first K) at bytes
/// `bytes * j ..` of a K chunk is a permutation of K applied to both operands alike, which leaves
/// every integer dot product (and so `sumi`) unchanged; the repacked layout's rows are read as
/// they are, list `j` being at `alpha * first K`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WideMap {
    /// Bytes a lane loads for one row of A (one column of B) a K chunk.
    pub bytes: u32,
    /// Byte offset of a list in the chunk = `alpha` x its first K.
    pub alpha: u32,
}

/// Elements of `role` grouped by the coordinate that is not K (row of A, column of B), each group
/// in element order; the same grouping at every lane, or `None`.
fn groups_by_line(kind: MmaKind, role: FragmentRole) -> Option<Vec<Vec<u32>>> {
    let shape = kind.shape();
    let per = shape.elements_per_lane(role);
    let line = |lane, e| {
        let (r, c) = shape.coord(role, lane, e).ok()?;
        Some(if role == FragmentRole::B { c } else { r })
    };
    let mut groups: Vec<(u32, Vec<u32>)> = vec![];
    for e in 0..per {
        let l = line(0, e)?;
        match groups.iter_mut().find(|g| g.0 == l) {
            Some(g) => g.1.push(e),
            None => groups.push((l, vec![e])),
        }
    }
    let groups: Vec<Vec<u32>> = groups.into_iter().map(|g| g.1).collect();
    for lane in 0..shape.wave_size() {
        for (i, g) in groups.iter().enumerate() {
            let l = line(lane, g[0])?;
            if g.iter().any(|&e| line(lane, e) != Some(l)) {
                return None;
            }
            if groups[..i].iter().any(|h| line(lane, h[0]) == Some(l)) {
                return None;
            }
        }
    }
    Some(groups)
}

/// The [`WideMap`] of `kind`, when its lane maps allow one.
pub fn wide_map(kind: MmaKind) -> Option<WideMap> {
    let shape = kind.shape();
    let (_, _, kk) = shape.mnk();
    let mut lists: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
    let mut size = None;
    for role in [FragmentRole::A, FragmentRole::B] {
        let groups = groups_by_line(kind, role)?;
        for lane in 0..shape.wave_size() {
            for g in &groups {
                let ks: Vec<u32> = g
                    .iter()
                    .map(|&e| {
                        let (r, c) = shape.coord(role, lane, e).expect("in range");
                        if role == FragmentRole::B {
                            r
                        } else {
                            c
                        }
                    })
                    .collect();
                if *size.get_or_insert(ks.len()) != ks.len() {
                    return None;
                }
                match lists.get(&ks[0]) {
                    Some(l) if *l != ks => return None,
                    Some(_) => {}
                    None => {
                        lists.insert(ks[0], ks);
                    }
                }
            }
        }
    }
    let bytes = size? as u32;
    if bytes != 8 && bytes != 16 {
        return None;
    }
    let mut all: Vec<u32> = lists.values().flatten().copied().collect();
    all.sort_unstable();
    if all != (0..kk).collect::<Vec<_>>() {
        return None;
    }
    let firsts: Vec<u32> = lists.keys().copied().collect();
    let alpha = match firsts.get(1) {
        None => 1,
        Some(&f1) if f1 > 0 && bytes.is_multiple_of(f1) => bytes / f1,
        Some(_) => return None,
    };
    firsts
        .iter()
        .enumerate()
        .all(|(j, &f)| bytes * j as u32 == alpha * f)
        .then_some(WideMap { bytes, alpha })
}

/// The archs the wide `mma` variants are routed on: an 8-bit matrix shape at the default wave
/// size with a [`WideMap`].
pub fn wide_archs() -> Vec<String> {
    kiln_ir::TARGETS
        .iter()
        .filter(|t| {
            kind_for(t, MmaInputs::Int8)
                .is_some_and(|k| k.shape().wave_size() == t.default_wave() && wide_map(k).is_some())
        })
        .map(|t| t.name.to_string())
        .collect()
}

/// Where a wave of two tiles keeps four groups in flight (`wide_t2_g4`) without spilling under
/// the register cap (`kiln build --strict`: sm_86, sm_89, gfx11 and gfx12 spill 332 to 1040
/// bytes). Elsewhere a wave holds at most two tile-groups ([`groups_on`]).
pub const DEEP_ARCHS: &[&str] = &["sm_80", "sm_90", "gfx90a", "gfx942"];

/// The groups a wave of `tiles` tiles takes in flight on `t` when `unroll` are asked for:
/// `unroll`, or one where more than two tile-groups would spill ([`DEEP_ARCHS`]).
fn groups_on(t: &Target, tiles: u32, unroll: u32) -> u32 {
    if tiles * unroll <= 2 || DEEP_ARCHS.contains(&t.name) {
        unroll
    } else {
        1
    }
}

/// Builds a wide `mma` variant: as [`build`]'s `mma` with `tiles` row tiles, but each lane fills
/// its fragments with one wide load a row of A and a column of B ([`WideMap`]), and a wave loads
/// the `unroll` groups of its slot it takes next (`unroll` x 4 blocks) before it multiplies any
/// of them, so that many bytes are in flight; the blocks are then added in increasing `b`, as every
/// variant of the family does. Where the shape has no wide map, the plain `mma` body.
pub fn build_wide(t: &Target, wave: u32, tiles: u32, unroll: u32) -> Kernel {
    let name = format!("gemv_q8_0_rp_k4_wide_t{tiles}_g{unroll}");
    wide(t, (wave, FEW_SLOTS), name, tiles, unroll, Early::Quants)
}

/// [`build_wide`] with eight waves a workgroup, a slot each: twice the waves of a call with eight
/// slots (`n <= 8192`: [`slots_for`]); with four slots the last four waves idle (not routed there).
pub fn build_wide8(t: &Target, wave: u32, tiles: u32, unroll: u32) -> Kernel {
    let name = format!("gemv_q8_0_rp_k4_wide_t{tiles}_g{unroll}_w8");
    wide(t, (wave, MANY_SLOTS), name, tiles, unroll, Early::Quants)
}

/// [`build_wide8`] for co-resident calls: a register cap of `cap` on sm_90 (so that two calls'
/// workgroups fit an SM at once: at N = 4096 a call is 256 workgroups of eight waves, two an
/// H200 SM, and at the usual cap of 128 those two fill its 64K registers, so the next call's
/// workgroups cannot start, and load their first trip, before this call's leave), and the rest
/// of each wave's slot (past the `unroll` groups it holds) asked of L2 before the
/// grid-dependency wait ([`prefetch_slot`]: no register held), so the whole slot streams while
/// the grid before runs. Named `wide_t{T}_g{G}_w8_r{cap}`. The same loads and sums as
/// [`build_wide8`], so the same bits.
pub fn build_wide8_ahead(t: &Target, wave: u32, tiles: u32, unroll: u32, cap: u32) -> Kernel {
    let name = format!("gemv_q8_0_rp_k4_wide_t{tiles}_g{unroll}_w8_r{cap}");
    wide(t, (wave, MANY_SLOTS), name, tiles, unroll, Early::Ahead(cap))
}

/// [`build_wide`] (four waves, `eight == false`) or [`build_wide8`] with the held blocks' weight
/// scales loaded before the grid-dependency wait too ([`ScaleStage`]: one 16-byte vector a lane
/// at `wide_t1_g4_w8` and `wide_t2_g4`, through LDS after the wait; without it ptxas sinks each
/// lane's 2-byte scale loads past the wait, 32 of them at `wide_t1_g4_w8`). With `acts` the
/// held blocks' activation scales also go through LDS after the wait ([`ActStage`]: a few
/// coalesced words a lane instead of 32 scattered ones). Named `wide_t{T}_g{G}[_w8]_hs[x]`. The
/// same scales and sums, so the same bits.
pub fn build_wide_hs(
    t: &Target,
    wave: u32,
    (tiles, unroll): (u32, u32),
    eight: bool,
    acts: bool,
) -> Kernel {
    let (waves, w8) = if eight { (MANY_SLOTS, "_w8") } else { (FEW_SLOTS, "") };
    let x = if acts { "x" } else { "" };
    let name = format!("gemv_q8_0_rp_k4_wide_t{tiles}_g{unroll}{w8}_hs{x}");
    wide(t, (wave, waves), name, tiles, unroll, Early::Scales { acts })
}

/// What a wide variant does before the grid-dependency wait besides loading the quants it holds
/// across it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Early {
    /// Nothing more.
    Quants,
    /// [`build_wide8_ahead`]: a register cap (on [`AHEAD_CAP_ARCHS`]) and [`AHEAD_GROUPS`] more
    /// groups of the slot asked of L2.
    Ahead(u32),
    /// [`build_wide_hs`]: the held blocks' weight scales loaded too ([`ScaleStage`]), and with
    /// `acts` their activation scales staged after the wait ([`ActStage`]).
    Scales { acts: bool },
}

/// Most 16-byte weight vectors a lane of a wide variant loads before the grid-dependency wait
/// and holds across it (64 registers): `wide_t1_g4*`'s whole first trip, half of
/// `wide_t2_g4`'s. Until 2026-12-05 the whole first trip was held (128 registers at two
/// tiles), which fit the cap of 128 only because ptxas (CUDA 13) also moved the activations'
/// loads and the `IMMA`s on them above the wait (`.nc` loads: see the codegen's
/// `buffers_maybe_in_flight`); with those after the wait, `wide_t2_g4` spilled 328 bytes.
pub const EARLY_VECTORS: u32 = 16;

/// Where [`build_wide8_ahead`]'s register cap applies (sm_80's ptxas spills 8 bytes at 64);
/// elsewhere it keeps [`WIDE_MAX_REGISTERS`] (and is not routed).
pub const AHEAD_CAP_ARCHS: &[&str] = &["sm_90"];

/// Most groups of its slot past the held ones a wave of [`build_wide8_ahead`] asks of L2 before
/// the wait (8 KiB a tile and wave: at K = 4096 with eight slots a slot has four groups).
pub const AHEAD_GROUPS: u32 = 4;

/// The wide variants' kernel; `early` says what its waves do before the grid-dependency wait
/// besides loading the quants they hold.
fn wide(
    t: &Target,
    (wave, waves): (u32, u32),
    name: String,
    tiles: u32,
    unroll: u32,
    early: Early,
) -> Kernel {
    let kind = kind_for(t, MmaInputs::Int8).filter(|k| k.shape().wave_size() == wave);
    let mut b = KernelBuilder::new(name, wave);
    // A cap well above what the body needs: without one, ptxas (CUDA 13, sm_90) allocates 40
    // registers and sinks each block's loads to just before its `mma` (one memory latency a
    // block: 35 us at N = 14336 where the floor is 15); with it, the loads of all the blocks of
    // an iteration are issued first (76 registers, checked in the SASS). AMD's back end issues
    // them first without one (and a cap would make the two-tile variants spill there).
    if t.sm().is_some() {
        // The low cap only where ptxas fits it without spilling ([`AHEAD_CAP_ARCHS`]).
        let low = match early {
            Early::Ahead(cap) if AHEAD_CAP_ARCHS.contains(&t.name) => Some(cap),
            _ => None,
        };
        b.max_registers(low.unwrap_or(WIDE_MAX_REGISTERS));
    }
    let p = declare(&mut b);
    match kind {
        Some(kind) => match wide_map(kind) {
            Some(map) => {
                let g = groups_on(t, tiles, unroll);
                let shape = (tiles, g, early);
                body_wide(&mut b, &p, (wave, waves), kind, map, shape)
            }
            None => body_mma(&mut b, &p, wave, kind, tiles),
        },
        None => body_lanes(&mut b, &p),
    }
    b.finish()
}

/// A wide load of `bytes` (4, 8 or 16) at byte `at` of `buf`: a vector of `u32` words.
fn wide_load(b: &mut KernelBuilder, buf: Param, at: Value, bytes: u32) -> Value {
    let words = bytes / 4;
    b.load_with(buf, at, Type::vector(ScalarType::U32, words as u8), IndexUnit::Byte, Some(bytes))
}

/// The bytes (signed) of a [`wide_load`] of `bytes` bytes.
fn vector_bytes(b: &mut KernelBuilder, v: Value, bytes: u32) -> Vec<Value> {
    (0..(bytes / 4) as u8)
        .flat_map(|i| {
            let w = b.extract(v, i);
            bytes_of(b, w)
        })
        .collect()
}

/// Fragment elements from per-group bytes: element `groups[g][i]` is `bytes[g][i]`.
fn elements(groups: &[Vec<u32>], bytes: &[Vec<Value>], per: u32) -> Vec<Value> {
    let mut el = vec![None; per as usize];
    for (g, vals) in groups.iter().zip(bytes) {
        for (i, &e) in g.iter().enumerate() {
            el[e as usize] = Some(vals[i]);
        }
    }
    el.into_iter().map(|v| v.expect("every element in a group")).collect()
}

/// Whether each lane's A elements are two groups of 8 bytes, rows `r` and `r + 8` with `r mod 16
/// < 8`, of the same K list: then they are one 16-byte chunk of the tile layout (NVIDIA's
/// `m16n8k32`).
fn paired_rows(kind: MmaKind, map: WideMap) -> bool {
    let shape = kind.shape();
    let Some(groups) = groups_by_line(kind, FragmentRole::A) else {
        return false;
    };
    map.bytes == 8
        && groups.len() == 2
        && (0..shape.wave_size()).all(|lane| {
            let at = |g: &[u32]| shape.coord(FragmentRole::A, lane, g[0]).ok();
            match (at(&groups[0]), at(&groups[1])) {
                (Some((r0, c0)), Some((r1, c1))) => r1 == r0 + 8 && r0 % 16 < 8 && c0 == c1,
                _ => false,
            }
        })
}

/// The raw scale words of one block for each C element (`bases[i]`: its first scale, `at` the
/// block's offset): loaded where the element is the first of its row or token (`rep`: the first
/// element of the tile that shares it, per element of one tile), `None` where it reuses one.
fn scale_words(
    b: &mut KernelBuilder,
    bases: &[Value],
    rep: &[u32],
    per_c: u32,
    at: Value,
    (buf, ty): (Param, Type),
) -> Vec<Option<Value>> {
    (0..bases.len())
        .map(|i| {
            let (e, ti) = (i % per_c as usize, i / per_c as usize);
            (ti * per_c as usize + rep[e] as usize >= i).then(|| {
                let x = b.add(bases[i], at);
                b.load(buf, x, ty)
            })
        })
        .collect()
}

fn body_wide(
    b: &mut KernelBuilder,
    p: &Params,
    (wave, waves): (u32, u32),
    kind: MmaKind,
    map: WideMap,
    (tiles, unroll, early): (u32, u32, Early),
) {
    let (m, nt, kk) = kind.shape().mnk();
    assert!(nt >= MAX_T && QK.is_multiple_of(kk), "{kind:?}: shape {m}x{nt}x{kk}");
    assert_eq!(m, TILE_ROWS, "{kind:?}: a wide tile is a tile of the layout");
    let ga = groups_by_line(kind, FragmentRole::A).expect("a wide map has A groups");
    let gb = groups_by_line(kind, FragmentRole::B).expect("a wide map has B groups");
    // C elements grouped by row (one weight scale each) and by column (one activation scale).
    let shape = kind.shape();
    let per_c = shape.elements_per_lane(FragmentRole::C);
    let same_at_every_lane = |e1: u32, e2: u32, pick: fn((u32, u32)) -> u32| {
        (0..wave).all(|l| {
            pick(shape.coord(FragmentRole::C, l, e1).expect("in range"))
                == pick(shape.coord(FragmentRole::C, l, e2).expect("in range"))
        })
    };
    let first_like = |e: u32, pick: fn((u32, u32)) -> u32| {
        (0..e).find(|&e0| same_at_every_lane(e0, e, pick)).unwrap_or(e)
    };
    let c_row_rep: Vec<u32> = (0..per_c).map(|e| first_like(e, |rc| rc.0)).collect();
    let c_col_rep: Vec<u32> = (0..per_c).map(|e| first_like(e, |rc| rc.1)).collect();

    let f = Frame::new(b, p, (wave, waves), kind, tiles);
    b.const_param("unroll", unroll as i64);
    let Frame { n, k, qk, nb, row0, slot, one, tl, nb64, .. } = f;
    let last_blk = b.sub(nb, one);
    let alpha = b.u32(map.alpha);
    // A tile past the last row reads the last tile (its outputs are not stored): whole tiles,
    // so a lane's rows keep their place in the tile layout.
    let tile_rows = b.u32(m);
    let last_tile = b.sub(n, tile_rows);
    // Per tile and A group: the tile-layout byte of block 0 of its row (u64) and its list's byte
    // in a block (u32, a multiple of 8).
    let a_loads: Vec<Vec<(Value, Value)>> = (0..tiles)
        .map(|ti| {
            let off = b.u32(ti * m);
            let start = b.add(row0, off);
            let start = b.min(start, last_tile);
            ga.iter()
                .map(|g| {
                    let (r, c) = b.fragment_coord(kind, FragmentRole::A, g[0]);
                    let row = b.add(start, r);
                    let base = tile_row_base(b, row, nb64);
                    (base, b.mul(c, alpha))
                })
                .collect()
        })
        .collect();
    let paired = paired_rows(kind, map);
    // Per B group: its token's first quant plus its list's byte in a chunk.
    let b_loads: Vec<Value> = gb
        .iter()
        .map(|g| {
            let (r, c) = b.fragment_coord(kind, FragmentRole::B, g[0]);
            let tok = b.min(c, tl);
            let base = b.mul(tok, k);
            let at = b.mul(r, alpha);
            b.add(base, at)
        })
        .collect();
    let per_a = shape.elements_per_lane(FragmentRole::A);
    let per_b = shape.elements_per_lane(FragmentRole::B);
    // `unroll` groups of the slot an iteration: blocks `blk0 + j * S * GROUP + i`, `S` the slot
    // count the workgroup is built for (its waves; the other count takes the `mma` body).
    let group = b.u32(GROUP);
    let stride = b.u32(waves * GROUP * unroll);
    let offsets: Vec<Value> = (0..unroll)
        .flat_map(|j| (0..GROUP).map(move |i| j * waves * GROUP + i))
        .map(|u| b.u32(u))
        .collect();
    let fz = b.f32(0.0);
    let init = vec![fz; (tiles * per_c) as usize];
    let iz = b.i32(0);
    let start = b.mul(slot, group);
    // The raw loads of block `blk0 + u` (a block past the end reads the last one): per K chunk
    // the B vectors and, per tile, the A vectors; then the scales' raw words (`None` where a C
    // element shares its row's or token's scale with an earlier one).
    struct Raw {
        bq: Vec<Vec<Value>>,
        a: Vec<Vec<Vec<Value>>>,
        dw: Vec<Option<Value>>,
        da: Vec<Option<Value>>,
    }
    // The weight loads of block `blk0 + u` (a block past the end reads the last one): per K
    // chunk, per tile, the A vectors; then the weight scales' raw words. They read only `wq`
    // and `ws`, which no grid before this one writes, so the first trip's may be issued before
    // the grid-dependency wait.
    // With `Early::Scales` the first trip's held blocks take their weight scales from the
    // wave's LDS ([`ScaleStage`]), not from `ws` (`staged`: `load_w` leaves them out).
    let held = (EARLY_VECTORS / (tiles * GROUP)).clamp(1, unroll) * GROUP;
    let load_w = |b: &mut KernelBuilder,
                  blk0: Value,
                  u: Value,
                  staged: bool|
     -> (Vec<Vec<Vec<Value>>>, Vec<Option<Value>>) {
        let blk = b.add(blk0, u);
        let blk = b.min(blk, last_blk);
        let sblk = scale_block(b, blk);
        let wblk = tile_block(b, blk);
        let mut a = vec![];
        for kc in 0..QK / kk {
            let kc_off = b.u32(kc * kk);
            a.push(
                a_loads
                    .iter()
                    .map(|tile| {
                        let at = |b: &mut KernelBuilder, (base, list): (Value, Value), piece| {
                            let x = b.add(base, wblk);
                            let byte = b.add(list, kc_off);
                            let off = b.u32(8 * piece);
                            let byte = b.add(byte, off);
                            let y = tile_byte(b, byte);
                            b.add(x, y)
                        };
                        if paired {
                            // Rows r and r + 8, the same list: one chunk of the layout.
                            let x = at(b, tile[0], 0);
                            vec![wide_load(b, p.wq, x, 16)]
                        } else {
                            tile.iter()
                                .flat_map(|&g| (0..map.bytes / 8).map(move |piece| (g, piece)))
                                .map(|(g, piece)| {
                                    let x = at(b, g, piece);
                                    wide_load(b, p.wq, x, 8)
                                })
                                .collect::<Vec<_>>()
                        }
                    })
                    .collect::<Vec<_>>(),
            );
        }
        let dw = if staged {
            vec![]
        } else {
            let bases: Vec<Value> = f.c_elems.iter().map(|c| c.0).collect();
            let ty = Type::scalar(ScalarType::U16);
            scale_words(b, &bases, &c_row_rep, per_c, sblk, (p.ws, ty))
        };
        (a, dw)
    };
    // The activation loads of block `blk0 + u`: per K chunk the B vectors, then the activation
    // scales' raw words.
    let load_x = |b: &mut KernelBuilder,
                  blk0: Value,
                  u: Value,
                  staged: bool|
     -> (Vec<Vec<Value>>, Vec<Option<Value>>) {
        let blk = b.add(blk0, u);
        let blk = b.min(blk, last_blk);
        let ablk = b.mul(blk, qk);
        let bq = (0..QK / kk)
            .map(|kc| {
                let kc_off = b.u32(kc * kk);
                b_loads
                    .iter()
                    .map(|&base| {
                        let at = b.add(base, ablk);
                        let at = b.add(at, kc_off);
                        wide_load(b, p.xq, at, map.bytes)
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let da = if staged {
            vec![]
        } else {
            let bases: Vec<Value> = f.c_elems.iter().map(|c| c.1).collect();
            scale_words(b, &bases, &c_col_rep, per_c, blk, (p.xs, Type::U32))
        };
        (bq, da)
    };
    let load = |b: &mut KernelBuilder, blk0: Value, u: Value| -> Raw {
        let (a, dw) = load_w(b, blk0, u, false);
        let (bq, da) = load_x(b, blk0, u, false);
        Raw { bq, a, dw, da }
    };
    // Whether the call has the slot count the workgroup is built for (its waves): then the
    // wide path below runs at the top level (no branch around it, so ptxas schedules its
    // loads as in a kernel of one path) over `nb` blocks; else over none, and the `mma` body
    // takes the call's slots in a branch after it (not routed there).
    let native = f.native(b);
    let zero = b.u32(0);
    let nb_eff = b.select(native, nb, zero);
    // Block `blk0 + u` of `raw` added to `acc` (not where it is past the end).
    let add = |b: &mut KernelBuilder, blk0: Value, u: Value, raw: &Raw, acc: &mut [Value]| {
        let blk = b.add(blk0, u);
        let valid = b.lt(blk, nb_eff);
        let mut dw: Vec<Value> = vec![];
        let mut da: Vec<Value> = vec![];
        for i in 0..raw.dw.len() {
            let e = i % per_c as usize;
            let ti = i / per_c as usize;
            let rep_w = ti * per_c as usize + c_row_rep[e] as usize;
            let rep_a = ti * per_c as usize + c_col_rep[e] as usize;
            dw.push(match raw.dw[i] {
                Some(x) => f16_bits(b, x),
                None => dw[rep_w],
            });
            da.push(match raw.da[i] {
                Some(x) => halves(b, x).0,
                None => da[rep_a],
            });
        }
        let mut cs: Vec<Value> =
            (0..tiles).map(|_| b.fragment_splat(kind, FragmentRole::C, iz)).collect();
        for kc in 0..(QK / kk) as usize {
            let bytes: Vec<Vec<Value>> =
                raw.bq[kc].iter().map(|&v| vector_bytes(b, v, map.bytes)).collect();
            let bf = b.fragment_of(kind, FragmentRole::B, &elements(&gb, &bytes, per_b));
            for (c, a) in cs.iter_mut().zip(&raw.a[kc]) {
                let bytes: Vec<Vec<Value>> = if paired {
                    let mut all = vector_bytes(b, a[0], 16);
                    let second = all.split_off(8);
                    vec![all, second]
                } else {
                    let per_group = (map.bytes / 8) as usize;
                    a.chunks(per_group)
                        .map(|pieces| pieces.iter().flat_map(|&v| vector_bytes(b, v, 8)).collect())
                        .collect()
                };
                let el = elements(&ga, &bytes, per_a);
                let af = b.fragment_of(kind, FragmentRole::A, &el);
                *c = b.mma(kind, af, bf, *c);
            }
        }
        for (i, a) in acc.iter_mut().enumerate() {
            let (ti, e) = (i / per_c as usize, i % per_c as usize);
            let sumi = b.extract(cs[ti], e as u8);
            let next = term(b, dw[i], da[i], sumi, *a);
            *a = b.select(valid, next, *a);
        }
    };
    // The first trip's weights of the wave's first slot, for the slot count the workgroup is
    // built for (its waves), are loaded before the grid-dependency wait: under programmatic
    // dependent launch their bytes stream while the grid before this one finishes. Its
    // activations, which that grid may write, after it.
    // At most [`EARLY_VECTORS`] 16-byte vectors a lane are held across the wait (whole groups,
    // at least one): the rest of the first trip's weights are loaded after it.
    if matches!(early, Early::Ahead(_)) {
        // From the first group not held (the second trip where the whole first is held),
        // asked before the held loads are issued: after them, their addresses spilled 88
        // bytes under the cap of the removed `wide_t2_g4_a` on sm_90.
        let past = b.u32(held / GROUP * waves * GROUP);
        let from = b.add(start, past);
        for ti in 0..tiles {
            let off = b.u32(ti * m);
            let row = b.add(row0, off);
            let row = b.min(row, last_tile);
            prefetch_slot(b, p, (row, nb, nb64), from, waves * GROUP);
        }
    }
    let (staged, acts) = match early {
        Early::Scales { acts } => (true, acts),
        _ => (false, false),
    };
    let mut first_w: Vec<_> =
        offsets[..held as usize].iter().map(|&u| load_w(b, start, u, staged)).collect();
    // The quants: each held vector keeps its whole load before the wait. (Holding the scales'
    // words as they are loaded made `wide_t2_g4` spill under its cap on sm_90, and
    // `wide_t1_g4_w8` 48 bytes: `Early::Scales` holds one 16-byte vector a lane instead.)
    let mut vals: Vec<Value> =
        first_w.iter().flat_map(|(a, _)| a.iter().flatten().flatten().copied()).collect();
    let stage = staged.then(|| {
        let held_scales =
            ScaleStage::new(b, p, (wave, waves, tiles, held), (row0, last_tile, nb, slot));
        vals.extend(held_scales.chunks.iter().map(|c| c.1));
        held_scales
    });
    crate::prefetch::hold(b, p.wq, &vals);
    b.grid_dependency_wait();
    let act_stage = acts.then(|| {
        let at = ActStage::new(b, p, (wave, waves, held), (start, last_blk, nb, tl, slot));
        at.store(b);
        at
    });
    if let Some(st) = &stage {
        st.store(b);
        // One barrier for both stages (`acts` only comes with the scales staged).
        b.barrier(BarrierKind::Lds);
        let rows: Vec<Value> = f.c_elems.iter().map(|c| c.2).collect();
        for (i, (_, dw)) in first_w.iter_mut().enumerate() {
            *dw = st.words(b, &rows, (&c_row_rep, per_c, m), i as u32);
        }
    }
    first_w.extend(offsets[held as usize..].iter().map(|&u| load_w(b, start, u, false)));
    let cols: Vec<Value> = f.c_elems.iter().map(|c| c.3).collect();
    let first: Vec<Raw> = first_w
        .into_iter()
        .zip(&offsets)
        .enumerate()
        .map(|(i, ((a, dw), &u))| {
            let staged = act_stage.is_some() && i < held as usize;
            let (bq, mut da) = load_x(b, start, u, staged);
            if let (Some(at), true) = (&act_stage, staged) {
                da = at.words(b, &cols, (&c_col_rep, per_c), i as u32);
            }
            Raw { bq, a, dw, da }
        })
        .collect();
    // The wave's slot: the first trip peeled (its blocks past `nb` add nothing), then the loop
    // from the second, the same blocks in the same order.
    let mut acc = init.clone();
    for (raw, &u) in first.iter().zip(&offsets) {
        add(b, start, u, raw, &mut acc);
    }
    let second = b.add(start, stride);
    let accs = b.for_range(second, nb_eff, stride, 1, &acc, |b, blk0, acc| {
        // Every load of the `unroll` groups first, then the blocks in increasing order.
        let raws: Vec<Raw> = offsets.iter().map(|&u| load(b, blk0, u)).collect();
        let mut acc = acc.to_vec();
        for (raw, &u) in raws.iter().zip(&offsets) {
            add(b, blk0, u, raw, &mut acc);
        }
        acc
    });
    b.if_then(native, |b| f.store(b, slot, &accs));
    f.other_slots(b, native, &|b, s, sc| mma_slot(b, p, &f, kind, tiles, (s, sc)));
    f.finish(b, p, wave);
}

/// `Early::Scales`: a wave's held blocks' weight scales (`held` blocks of each of its `tiles`
/// tiles, 32 bytes a tile and block) loaded before the grid-dependency wait as 16-byte vectors,
/// a lane's few vectors held across it in place of the 2-byte words each lane would hold, and
/// stored after it to the wave's part of the LDS, from which each lane reads its rows' words.
/// In the tile scale layout a tile's four blocks of a group are 128 contiguous bytes (8
/// vectors), so chunk `c` of the wave's `tiles * held * 2` is tile `c / (2 held)`, group `(c /
/// 8) mod (held / 4)`, vector `c mod 8`; it is stored at the same place of the wave's LDS
/// (`[tile][held block][row]`, u16). A vector past `ws`'s end (blocks past `nb` at the last
/// tile) reads `ws`'s last one instead: its blocks add nothing.
struct ScaleStage {
    lds: kiln_ir::LdsSlot,
    /// The wave's first u16 of `lds`.
    base: Value,
    /// Blocks held a tile.
    held: u32,
    /// `tiles * held * 2`: the wave's chunks.
    count: u32,
    /// Per chunk this lane takes: the chunk's index and its vector (four u32 words).
    chunks: Vec<(Value, Value)>,
}

impl ScaleStage {
    /// Loads this lane's chunks; `held` is a multiple of [`GROUP`].
    fn new(
        b: &mut KernelBuilder,
        p: &Params,
        (wave, waves, tiles, held): (u32, u32, u32, u32),
        (row0, last_tile, nb, slot): (Value, Value, Value, Value),
    ) -> ScaleStage {
        let per_wave = tiles * held * TILE_ROWS;
        let lds = b.lds("held_scales", ScalarType::U16, waves * per_wave);
        let pw = b.u32(per_wave);
        let base = b.mul(slot, pw);
        let count = tiles * held * 2;
        let nb64 = b.convert(nb, Type::U64);
        // The last 16-byte vector of `ws` (n nb u16, n a multiple of 16).
        let n = b.arg(p.n);
        let n64 = b.convert(n, Type::U64);
        let len = b.mul(n64, nb64);
        let two = b.u64(2);
        let len = b.mul(len, two);
        let sixteen = b.u64(16);
        let last = b.sub(len, sixteen);
        let chunks = wave_items(b, wave, count)
            .into_iter()
            .map(|(c, cc)| {
                let per_tile = b.u32(2 * held);
                let ti = b.div(cc, per_tile);
                let m = b.u32(TILE_ROWS);
                let row = b.mul(ti, m);
                let row = b.add(row0, row);
                let row = b.min(row, last_tile);
                let c8 = b.u32(8);
                let g = b.div(cc, c8);
                let gh = b.u32(held / GROUP);
                let g = b.rem(g, gh);
                let v = b.rem(cc, c8);
                // Block `4 (slot + S g)`, byte `16 v` of its group.
                let sg = b.u32(waves);
                let blk = b.mul(g, sg);
                let blk = b.add(blk, slot);
                let four = b.u32(GROUP);
                let blk = b.mul(blk, four);
                let at = tile_start(b, row, nb64, 2 * TILE_ROWS as u64);
                let bs = block_start(b, blk, 2 * TILE_ROWS as u64);
                let at = b.add(at, bs);
                let v64 = b.convert(v, Type::U64);
                let v64 = b.mul(v64, sixteen);
                let at = b.add(at, v64);
                let at = b.min(at, last);
                (c, wide_load(b, p.ws, at, 16))
            })
            .collect();
        ScaleStage { lds, base, held, count, chunks }
    }

    /// Stores this lane's chunks to the wave's LDS (the caller then puts a workgroup barrier:
    /// there is no wave-level one in the IR; every wave of the workgroup stages its own).
    fn store(&self, b: &mut KernelBuilder) {
        let count = b.u32(self.count);
        for &(c, v) in &self.chunks {
            let mine = b.lt(c, count);
            b.if_then(mine, |b| {
                let eight = b.u32(8);
                let at = b.mul(c, eight);
                let at = b.add(self.base, at);
                let two = b.u32(2);
                let at = b.mul(at, two);
                b.store_with(self.lds, at, v, IndexUnit::Byte, Some(16));
            });
        }
    }

    /// The raw scale words of held block `i` for each C element, as `load_w` gives them from
    /// `ws` (`rows[j]`: element `j`'s row in the workgroup's tiles of `m` rows).
    fn words(
        &self,
        b: &mut KernelBuilder,
        rows: &[Value],
        (rep, per_c, m): (&[u32], u32, u32),
        i: u32,
    ) -> Vec<Option<Value>> {
        let held = self.held;
        (0..rows.len())
            .map(|j| {
                let (e, ti) = (j % per_c as usize, (j / per_c as usize) as u32);
                (ti as usize * per_c as usize + rep[e] as usize >= j).then(|| {
                    // `[tile][held block][row]`: row `rows[j] - ti m` of tile `ti`.
                    let off = b.u32((ti * held + i) * TILE_ROWS);
                    let at = b.add(self.base, off);
                    let at = b.add(at, rows[j]);
                    let back = b.u32(ti * m);
                    let at = b.sub(at, back);
                    b.load(self.lds, at, Type::scalar(ScalarType::U16))
                })
            })
            .collect()
    }
}

/// The items a lane takes of `count` dealt to a wave's lanes in turn (item `lane + i wave`):
/// each item's index and the index clamped to the last item (to address with; the caller
/// skips an item past `count`).
fn wave_items(b: &mut KernelBuilder, wave: u32, count: u32) -> Vec<(Value, Value)> {
    let lane = b.lane();
    (0..count.div_ceil(wave))
        .map(|i| {
            let c = b.u32(i * wave);
            let c = b.add(lane, c);
            let cmax = b.u32(count - 1);
            (c, b.min(c, cmax))
        })
        .collect()
}

/// `Early::Scales { acts: true }`: after the grid-dependency wait a wave's held blocks'
/// activation scales (`xs`, one u32 a token and block) for all [`MAX_T`] token columns, loaded
/// by the wave's lanes one word each in turn (word `c` of the wave's `MAX_T * held`: column `c /
/// held`, held block `c mod held`; a column past `t` reads token `t - 1` and a block past the row
/// the last block, as `load_x` does) and stored at `[column][held block]` of the wave's part of
/// the LDS, from which each lane reads its columns' words after the barrier.
struct ActStage {
    lds: kiln_ir::LdsSlot,
    /// The wave's first u32 of `lds`.
    base: Value,
    held: u32,
    /// Per word this lane takes: its index in the wave's and its value.
    words: Vec<(Value, Value)>,
}

impl ActStage {
    /// Loads this lane's words (`start`: the slot's first block).
    fn new(
        b: &mut KernelBuilder,
        p: &Params,
        (wave, waves, held): (u32, u32, u32),
        (start, last_blk, nb, tl, slot): (Value, Value, Value, Value, Value),
    ) -> ActStage {
        let per_wave = MAX_T * held;
        let lds = b.lds("held_acts", ScalarType::U32, waves * per_wave);
        let pw = b.u32(per_wave);
        let base = b.mul(slot, pw);
        let words = wave_items(b, wave, per_wave)
            .into_iter()
            .map(|(c, cc)| {
                let hv = b.u32(held);
                let col = b.div(cc, hv);
                let tok = b.min(col, tl);
                let j = b.rem(cc, hv);
                // Held block `j`: group `j / 4` of the slot, `j mod 4` in it.
                let four = b.u32(GROUP);
                let g = b.div(j, four);
                let step = b.u32(waves * GROUP);
                let g = b.mul(g, step);
                let r = b.rem(j, four);
                let blk = b.add(start, g);
                let blk = b.add(blk, r);
                let blk = b.min(blk, last_blk);
                let at = b.mul(tok, nb);
                let at = b.add(at, blk);
                (c, b.load(p.xs, at, Type::U32))
            })
            .collect();
        ActStage { lds, base, held, words }
    }

    /// Stores this lane's words to the wave's LDS (the caller puts the barrier).
    fn store(&self, b: &mut KernelBuilder) {
        let count = b.u32(MAX_T * self.held);
        for &(c, v) in &self.words {
            let mine = b.lt(c, count);
            b.if_then(mine, |b| {
                let at = b.add(self.base, c);
                b.store(self.lds, at, v);
            });
        }
    }

    /// The raw activation-scale words of held block `i` for each C element, as `load_x` gives
    /// them from `xs` (`cols[j]`: element `j`'s column, its token before the clamp).
    fn words(
        &self,
        b: &mut KernelBuilder,
        cols: &[Value],
        (rep, per_c): (&[u32], u32),
        i: u32,
    ) -> Vec<Option<Value>> {
        (0..cols.len())
            .map(|j| {
                let (e, ti) = (j % per_c as usize, j / per_c as usize);
                (ti * per_c as usize + rep[e] as usize >= j).then(|| {
                    // A column past the last staged one (shapes of 16 columns) is a token
                    // past `t` too: the last staged column holds the same word.
                    let last = b.u32(MAX_T - 1);
                    let col = b.min(cols[j], last);
                    let hv = b.u32(self.held);
                    let at = b.mul(col, hv);
                    let iv = b.u32(i);
                    let at = b.add(at, iv);
                    let at = b.add(self.base, at);
                    b.load(self.lds, at, Type::U32)
                })
            })
            .collect()
    }
}

/// Asks L2 for a slot's groups of four blocks of the tile holding `row`: from block `from`
/// every `step` blocks (a group of every slot), at most [`AHEAD_GROUPS`] of them, before `nb`.
/// Per group lanes 0..16 each ask for a 128-byte line of its 2 KiB of quants and lane 16 for
/// the line of its 16 rows' scales (a tile's bytes of four consecutive blocks are contiguous in
/// both layouts). Only arithmetic and prefetches: it may run before the grid-dependency wait.
fn prefetch_slot(
    b: &mut KernelBuilder,
    p: &Params,
    (row, nb, nb64): (Value, Value, Value),
    from: Value,
    step: u32,
) {
    let lane = b.lane();
    let qbase = tile_start(b, row, nb64, TILE_BLOCK);
    let sbase = tile_start(b, row, nb64, 2 * TILE_ROWS as u64);
    let one64 = b.u64(1);
    // The tile's last byte of each layout (a group past `nb` is clamped to it).
    let qunit = b.u64(TILE_BLOCK);
    let qlen = b.mul(nb64, qunit);
    let qlast = b.add(qbase, qlen);
    let qlast = b.sub(qlast, one64);
    let sunit = b.u64(2 * TILE_ROWS as u64);
    let slen = b.mul(nb64, sunit);
    let slast = b.add(sbase, slen);
    let slast = b.sub(slast, one64);
    let cap = b.u32(AHEAD_GROUPS * step);
    let end = b.add(from, cap);
    let step = b.u32(step);
    let end = b.min(end, nb);
    let c16 = b.u32(16);
    let quant_lane = b.lt(lane, c16);
    let scale_lane = b.eq(lane, c16);
    let line = b.u64(crate::prefetch::LINE);
    b.for_range(from, end, step, 1, &[], |b, blk0, _| {
        b.if_then(quant_lane, |b| {
            let at = tile_block(b, blk0);
            let at = b.add(qbase, at);
            let l = b.convert(lane, Type::U64);
            let l = b.mul(l, line);
            let at = b.add(at, l);
            let at = b.min(at, qlast);
            b.prefetch(p.wq, at);
        });
        b.if_then(scale_lane, |b| {
            let at = block_start(b, blk0, 2 * TILE_ROWS as u64);
            let at = b.add(sbase, at);
            let at = b.min(at, slast);
            b.prefetch(p.ws, at);
        });
        vec![]
    });
}
