//! Cross-lane ops: each works within one wave (lanes `w*W..(w+1)*W`). Shuffles and broadcast
//! gather from a source lane; ballot, the reductions and `tsum` combine the whole wave.

use super::*;

impl Exec<'_> {
    /// Lane `i` reads lane `i ^ offset`, `i - offset` or `i + offset` of its wave (a lane whose
    /// source is outside the wave keeps its own value).
    pub(super) fn shuffle(
        &mut self,
        inst: Inst,
        m: &Mask,
        mode: ShuffleMode,
        value: Value,
        offset: u32,
        res: Value,
    ) -> Result<(), InterpError> {
        let (w, off) = (self.w, offset as usize);
        let src = |l: usize| {
            let (base, i) = (l - l % w, l % w);
            base + match mode {
                ShuffleMode::Xor => (i ^ off) % w,
                ShuffleMode::Up if i >= off => i - off,
                ShuffleMode::Down if i + off < w => i + off,
                ShuffleMode::Up | ShuffleMode::Down => i,
            }
        };
        let srcs: Vec<usize> = (0..self.lp).map(src).collect();
        self.gather(inst, m, value, res, &srcs)
    }

    /// Lane `i` reads lane `lane[i] % W` of its wave.
    pub(super) fn shuffle_idx(
        &mut self,
        inst: Inst,
        m: &Mask,
        value: Value,
        lane: Value,
        res: Value,
    ) -> Result<(), InterpError> {
        let w = self.w;
        let row = &self.regs[self.p.slot(lane) * self.lp..][..self.lp];
        let srcs: Vec<usize> =
            (0..self.lp).map(|l| l - l % w + (row[l] as u32 as usize) % w).collect();
        self.gather(inst, m, value, res, &srcs)
    }

    /// Every lane reads lane `lane` of its wave.
    pub(super) fn broadcast(
        &mut self,
        inst: Inst,
        m: &Mask,
        value: Value,
        lane: u32,
        res: Value,
    ) -> Result<(), InterpError> {
        let (w, src) = (self.w, lane as usize % self.w);
        let srcs: Vec<usize> = (0..self.lp).map(|l| l - l % w + src).collect();
        self.gather(inst, m, value, res, &srcs)
    }

    /// The mask of the wave's active lanes whose condition holds, in every active lane.
    pub(super) fn ballot(
        &mut self,
        inst: Inst,
        m: &Mask,
        cond: Value,
        res: Value,
    ) -> Result<(), InterpError> {
        self.whole_waves(inst, m)?;
        let (p, w, lp) = (self.p, self.w, self.lp);
        let (d, [c]) = split_rows(&mut self.regs, lp, p.slot(res), [p.slot(cond)]);
        for base in (0..lp).step_by(w) {
            let bits = (0..w)
                .filter(|&i| m.on[base + i] && c[base + i] & 1 != 0)
                .fold(0u64, |acc, i| acc | 1 << i);
            for i in 0..w {
                if m.on[base + i] {
                    d[base + i] = bits;
                }
            }
        }
        Ok(())
    }

    /// Cross-lane read: lane `l` takes the value of lane `srcs[l]` (in its own wave).
    pub(super) fn gather(
        &mut self,
        inst: Inst,
        m: &Mask,
        value: Value,
        res: Value,
        srcs: &[usize],
    ) -> Result<(), InterpError> {
        self.whole_waves(inst, m)?;
        let (p, lp) = (self.p, self.lp);
        for e in 0..lanes_of(p.k.ty(value)) {
            let (d, [v]) = split_rows(&mut self.regs, lp, p.slot(res) + e, [p.slot(value) + e]);
            for l in m.iter() {
                d[l] = v[srcs[l]];
            }
        }
        Ok(())
    }

    /// The waves with at least one active lane. With the sanitizer, an error unless each of them
    /// is fully active: every cross-lane op must be run by whole waves (the verifier's
    /// wave-uniform control rule; NVPTX lowers these ops with the full lane mask).
    pub(super) fn whole_waves(&self, inst: Inst, m: &Mask) -> Result<Vec<usize>, InterpError> {
        let w = self.w;
        let waves: Vec<usize> =
            (0..self.lp / w).filter(|&v| m.on[v * w..(v + 1) * w].iter().any(|&a| a)).collect();
        if self.launch.sanitize {
            let (mut active, mut inactive) = (Vec::new(), Vec::new());
            for &v in &waves {
                let lanes = v * w..(v + 1) * w;
                if lanes.clone().any(|l| !m.on[l]) {
                    active.extend(lanes.clone().filter(|&l| m.on[l]));
                    inactive.extend(lanes.filter(|&l| !m.on[l]));
                }
            }
            if !active.is_empty() {
                return Err(InterpError::PartialWave {
                    site: self.site(inst),
                    lanes: self.lanes(active),
                    inactive: self.lanes(inactive),
                });
            }
        }
        Ok(waves)
    }

    pub(super) fn wave_reduce(
        &mut self,
        inst: Inst,
        m: &Mask,
        op: ReduceOp,
        value: Value,
        res: Value,
    ) -> Result<(), InterpError> {
        let (p, w, lp) = (self.p, self.w, self.lp);
        let t = p.k.ty(value);
        let Some(f) = arith::reduce_fn(op, t.scalar) else {
            return Err(self.unsupported(inst, m, format!("not defined on {t}")));
        };
        let waves = self.whole_waves(inst, m)?;
        let (mut cur, mut next) = (vec![0u64; w], vec![0u64; w]);
        for e in 0..lanes_of(t) {
            let (d, [v]) = split_rows(&mut self.regs, lp, p.slot(res) + e, [p.slot(value) + e]);
            for &wave in &waves {
                let base = wave * w;
                cur.copy_from_slice(&v[base..base + w]);
                let mut o = w / 2;
                while o >= 1 {
                    for i in 0..w {
                        next[i] = f(cur[i], cur[i ^ o]);
                    }
                    std::mem::swap(&mut cur, &mut next);
                    o /= 2;
                }
                d[base..base + w].copy_from_slice(&cur);
            }
        }
        Ok(())
    }

    pub(super) fn wave_argmax(
        &mut self,
        inst: Inst,
        m: &Mask,
        value: Value,
        index: Value,
        res_value: Value,
        res_index: Value,
    ) -> Result<(), InterpError> {
        let (p, w, lp) = (self.p, self.w, self.lp);
        let s = p.k.ty(value).scalar;
        if s == ScalarType::I1 {
            return Err(self.unsupported(inst, m, "not defined on i1".into()));
        }
        let waves = self.whole_waves(inst, m)?;
        let (sv, si) = (p.slot(value), p.slot(index));
        let (dv, di) = (p.slot(res_value), p.slot(res_index));
        let mut cur = vec![(0u64, 0u32); w];
        let mut next = cur.clone();
        for wave in waves {
            let base = wave * w;
            for (i, c) in cur.iter_mut().enumerate() {
                *c = (self.regs[sv * lp + base + i], self.regs[si * lp + base + i] as u32);
            }
            let mut o = w / 2;
            while o >= 1 {
                for i in 0..w {
                    let (own, partner) = (cur[i], cur[i ^ o]);
                    let wins = arith::argmax_wins(s, own.0, own.1, partner.0, partner.1);
                    next[i] = if wins { own } else { partner };
                }
                std::mem::swap(&mut cur, &mut next);
                o /= 2;
            }
            for (i, &(v, x)) in cur.iter().enumerate() {
                self.regs[dv * lp + base + i] = v;
                self.regs[di * lp + base + i] = x as u64;
            }
        }
        Ok(())
    }

    /// `tsum<P>` as the transposed butterfly of DESIGN.md section 2: in the first log2(P) steps
    /// each lane keeps half of its tokens (the lower half where the offset bit of its lane id is 0)
    /// and adds the partner's copy of that half to its own; then a plain xor butterfly.
    pub(super) fn tsum(
        &mut self,
        inst: Inst,
        m: &Mask,
        tokens: u32,
        values: &[Value],
        res: Value,
    ) -> Result<(), InterpError> {
        let (p, w, lp) = (self.p, self.w, self.lp);
        let np = tokens as usize;
        let t = p.k.ty(res);
        if !np.is_power_of_two() || np > w || values.len() > np {
            let msg = format!("tsum<{tokens}> over {} values in wave {w}", values.len());
            return Err(self.unsupported(inst, m, msg));
        }
        let Some(add) = arith::reduce_fn(ReduceOp::Add, t.scalar) else {
            return Err(self.unsupported(inst, m, format!("not defined on {t}")));
        };
        let waves = self.whole_waves(inst, m)?;
        let slots: Vec<usize> = values.iter().map(|&v| p.slot(v)).collect();
        for wave in waves {
            let base = wave * w;
            // cur[lane * held + j]: the lane's partial sum of the j-th token it still holds.
            let mut held = np;
            let mut cur = vec![0u64; w * held];
            for i in 0..w {
                for (j, &s) in slots.iter().enumerate() {
                    cur[i * held + j] = self.regs[s * lp + base + i];
                }
            }
            let mut o = w / 2;
            while held > 1 {
                let half = held / 2;
                let mut next = vec![0u64; w * half];
                for i in 0..w {
                    let partner = i ^ o;
                    let keep = if i & o != 0 { half } else { 0 };
                    for j in 0..half {
                        next[i * half + j] =
                            add(cur[i * held + keep + j], cur[partner * held + keep + j]);
                    }
                }
                cur = next;
                held = half;
                o /= 2;
            }
            let mut next = vec![0u64; w];
            while o >= 1 {
                for i in 0..w {
                    next[i] = add(cur[i], cur[i ^ o]);
                }
                std::mem::swap(&mut cur, &mut next);
                o /= 2;
            }
            let d = p.slot(res);
            self.regs[d * lp + base..d * lp + base + w].copy_from_slice(&cur);
        }
        Ok(())
    }
}

impl Exec<'_> {
    /// `D = A x B + C` per wave: each operand's fragments of the wave are gathered in
    /// `[lane * elements + element]` order and handed to [`crate::matrix::mma_fragments`], the one
    /// model of the lane maps and the arithmetic; D goes back to the wave's lanes.
    pub(super) fn mma(
        &mut self,
        inst: Inst,
        m: &Mask,
        kind: crate::matrix::MmaKind,
        [a, b, c]: [Value; 3],
        res: Value,
    ) -> Result<(), InterpError> {
        let (p, w, lp) = (self.p, self.w, self.lp);
        let shape = kind.shape();
        if shape.wave_size() as usize != w {
            let message = format!("{kind} runs in waves of {}, found {w}", shape.wave_size());
            return Err(self.unsupported(inst, m, message));
        }
        let waves = self.whole_waves(inst, m)?;
        let gather = |regs: &[u64], v: Value, base: usize| {
            let n = lanes_of(p.k.ty(v));
            let mut out = vec![0u64; w * n];
            for lane in 0..w {
                for e in 0..n {
                    out[lane * n + e] = regs[(p.slot(v) + e) * lp + base + lane];
                }
            }
            out
        };
        let n = lanes_of(p.k.ty(res));
        for v in waves {
            let base = v * w;
            let (fa, fb, fc) = (
                gather(&self.regs, a, base),
                gather(&self.regs, b, base),
                gather(&self.regs, c, base),
            );
            let d = match crate::matrix::mma_fragments(kind, &fa, &fb, &fc) {
                Ok(d) => d,
                Err(e) => return Err(self.unsupported(inst, m, e.to_string())),
            };
            for lane in 0..w {
                for e in 0..n {
                    self.regs[(p.slot(res) + e) * lp + base + lane] = d[lane * n + e];
                }
            }
        }
        Ok(())
    }
}
