//! The lane-exact reference interpreter (DESIGN.md section 3): the oracle every device result is
//! compared against, and the runtime's `cpu` device. It runs a kernel for a whole grid on the CPU
//! and doubles as a sanitizer.
//!
//! # Execution model
//! - A workgroup runs with all its lanes in lockstep: each instruction runs over every lane of
//!   the workgroup under an active mask. `if` runs the then-block for the lanes whose condition
//!   holds and the else-block for the others, and merges the results per lane. `for` runs each
//!   lane's own iterations: it loops while any lane still has `i < end`, with carried values kept
//!   per lane (lanes whose bounds differ finish at different times). The index is advanced
//!   without wrapping: a lane stops once `i + step` reaches `end` in exact arithmetic.
//! - Cross-lane ops work within each wave (lanes `w*W..(w+1)*W`); reductions are xor butterflies
//!   with offsets `W/2, W/4, ..., 1`, lane `i` combining `op(own, v[i ^ o])`, so floating sums
//!   have one defined order. `tsum<P>` runs as the transposed butterfly.
//! - Barriers are workgroup-wide. Lockstep means all waves arrive together, so a barrier with any
//!   lane of the workgroup inactive is reported (the sanitizer's "divergent barrier").
//! - Memory: global memory is a set of disjoint spans at fake addresses: each buffer argument
//!   ([`Arg::Buffer`]) at `(param index + 1) << 40`, and, with [`run_with_memory`], caller-given
//!   [`Region`]s at caller-chosen addresses (a buffer argument may also be one of them,
//!   [`Arg::Region`], at the region's address). [`crate::Op::BufferAddr`] gives a buffer's
//!   address, and a raw [`crate::MemRef::Global`] address works in whichever span holds it, so a
//!   table of addresses pointing into other allocations (as an engine stages copies from
//!   host-mapped memory) runs as on a device. An access in no span, or one that crosses a span's
//!   end, is out of bounds. LDS is per workgroup and starts zeroed, private memory is per lane and
//!   starts zeroed. Memory is little-endian, `i1` one byte.
//! - Workgroups run in parallel (rayon) over shared global memory, accessed byte by byte with
//!   relaxed atomics, so even a racy kernel is well defined here. A kernel with atomics on global
//!   memory runs its workgroups one after another in workgroup order instead, so that patterns
//!   like "the last workgroup to finish does the final step" give the same answer on every run
//!   (with the sanitizer, in reverse order too: see below).
//!   Kernels that spin waiting for another workgroup are not supported (they would hang).
//!   Within a workgroup, the lanes of an atomic apply their updates in lane order.
//! - When several workgroups fail, the error of the lowest workgroup (x fastest) is returned, so
//!   errors are deterministic too.
//!
//! # Launch checks
//! Before any lane runs, whatever the options: the arguments match the parameters; every scalar
//! satisfies its parameter's rules ([`crate::Kernel::check_scalars`]); no two buffer parameters
//! name the same region where one of them is written; buffer lengths and the grid evaluate
//! without overflow ([`crate::ShapeExpr::eval`]) and the buffers are long enough; the run has at
//! most [`MAX_LANES`] lanes (a larger one is a mistake in the arguments that would run for hours).
//!
//! # Sanitizer (`RunOptions::sanitize`)
//! Out-of-bounds accesses (global, LDS, private; a raw address in no buffer or region, or an
//! access crossing the end of one) are always errors: there is nothing sensible to execute
//! instead. With the sanitizer on, these are errors too:
//! - an LDS race: two different waves touch the same LDS bytes between two barriers and at least
//!   one writes (atomics from different waves do not race with each other);
//! - a read (or atomic) of LDS bytes never written in this workgroup;
//! - a barrier executed while some lane of the workgroup is inactive;
//! - a cross-lane op (shuffle, `shuffle_idx`, broadcast, ballot, `wave_reduce`, `wave_argmax`,
//!   `tsum`) run by part of a wave: hardware runs them with the full lane mask, so every lane of
//!   the wave must be active (the verifier's wave-uniform control rule, checked at run time);
//! - integer division or remainder by zero (without the sanitizer: `x / 0` is all ones, `x % 0`
//!   is `x`);
//! - a store or atomic to a buffer declared read-only: through the parameter, or through a raw
//!   address into a buffer argument's span (regions are writable whatever the parameters that
//!   name them declare: a raw address carries no access).
//! - a race between workgroups (`races.rs`): global bytes one workgroup writes and another
//!   reads or writes in the same launch with no device atomic ordering the two. A GPU runs the
//!   workgroups at once; here they run one after another, so without the check such a kernel
//!   would pass here and differ on a device.
//! - a race between the waves of a workgroup on global memory: two waves touch the same bytes
//!   of a buffer the kernel writes with no `barrier all` between, one writing (the LDS rule,
//!   with the barrier that orders global memory).
//! - a result that depends on the order of the workgroups: a kernel with global atomics runs
//!   twice from the same memory, its workgroups in order and then in reverse order, and the
//!   bytes of the buffers it writes must be the same (the reverse run's are kept). Which
//!   workgroup is last, or which slot an atomic hands out, is up to a GPU.
//!
//! # Numerics
//! - f32 and f64: the host's IEEE arithmetic, denormals kept; f32 FMA is `f32::mul_add` (one
//!   rounding). Min / Max, compares, conversions and rounding ops exactly as documented on the ops.
//! - f16 and bf16 `+ - * /` and `sqrt` are computed in f32 and rounded once to the narrow type:
//!   f32 has at least `2p + 2` significand bits for both, so this double rounding is innocuous.
//! - f16 and bf16 FMA is exact: the product is exact in f64, the sum's rounding error is recovered
//!   (two-sum) and folded in by rounding to odd, then one rounding to the narrow type.
//! - Every conversion to f16 / bf16 (from f64, f32 or integers) goes through a round-to-odd f32,
//!   then round-to-nearest-even: one correct rounding.
//! - Approximate ops (`exp2_approx`, `log2_approx`, `rsqrt_approx`, `rcp_approx`) are computed in
//!   f64 and rounded once, so within about 0.5 ulp; the hardware instructions meet the op's stated
//!   bound (1 ulp). Compare them within a bound, never bitwise.
//! - NaN payloads are whatever the host produces: only NaN-ness is part of the contract.

mod arith;
mod error;
mod exec;
mod packed;
mod prepare;
mod races;

pub use error::{InterpError, Lanes, Site};

use crate::{Access, Kernel, Param, ParamKind, ShapeExpr};
use cranelift_entity::EntityRef;
use exec::Exec;
use prepare::Prepared;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;

/// One kernel argument, in parameter order.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// A buffer's bytes (little-endian elements); written back in place.
    Buffer(Vec<u8>),
    /// A scalar's bits, zero-extended.
    Scalar(u64),
    /// A buffer argument that is `regions[i]` of [`run_with_memory`]: its bytes are the region's
    /// (written back there) and its address ([`crate::Op::BufferAddr`]) is the region's base.
    /// Several parameters may name one region only if none of them is written (every buffer
    /// parameter is `noalias` on a GPU); the launch refuses it otherwise.
    Region(usize),
}

/// Global memory at a caller-chosen address, beside the buffer arguments: what a raw address in
/// a table points into (a device buffer, host-mapped memory, ...). See [`run_with_memory`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// Its first byte's address.
    pub base: u64,
    /// Its bytes (little-endian elements); written back in place.
    pub bytes: Vec<u8>,
}

/// How to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// The grid in workgroups; `None`: the kernel's grid evaluated with the scalar arguments.
    pub grid: Option<[u32; 3]>,
    /// Run the dynamic checks (races, uninitialized LDS, divergent barriers, partial waves in cross-lane ops,
    /// division by zero, writes to read-only buffers). Default: on.
    pub sanitize: bool,
    /// Run the verifier first. Default: on; turn off to show the dynamic checks on a kernel the
    /// verifier would reject.
    pub verify: bool,
    /// Run workgroups in parallel (kernels with global atomics always run them in order).
    /// Default: on.
    pub parallel: bool,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions { grid: None, sanitize: true, verify: true, parallel: true }
    }
}

/// What a run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Workgroups run.
    pub workgroups: u64,
    /// Active lanes summed over every executed instruction (constants and ids not counted).
    pub lane_ops: u64,
}

/// Bits of a fake global address below the buffer number.
const ADDRESS_BITS: u32 = 40;

/// The default fake global base address of buffer parameter `p`.
fn buffer_base(p: Param) -> u64 {
    (p.index() as u64 + 1) << ADDRESS_BITS
}

/// One span of global memory: a buffer argument or a region.
pub(crate) struct Span<'a> {
    pub base: u64,
    pub bytes: &'a [AtomicU8],
    /// The buffer argument's name; `None` for a region.
    pub param: Option<&'a str>,
    /// A buffer argument's declared access; regions are read-write.
    pub access: Access,
}

impl Span<'_> {
    /// For messages: "buffer `x`" or "region at 0x...".
    pub fn what(&self) -> String {
        match self.param {
            Some(name) => format!("buffer `{name}`"),
            None => format!("region at {:#x}", self.base),
        }
    }
}

/// Everything a workgroup needs from the launch.
pub(crate) struct Launch<'a> {
    /// All global memory.
    pub spans: Vec<Span<'a>>,
    /// Span indices in address order (for raw addresses).
    pub by_address: Vec<usize>,
    /// Per parameter: its span for a buffer, `None` for a scalar.
    pub params: Vec<Option<usize>>,
    /// Per parameter: the scalar's bits (0 for buffers).
    pub scalars: Vec<u64>,
    pub grid: [u32; 3],
    pub sanitize: bool,
    /// With the sanitizer: the check across workgroups.
    pub races: Option<races::Races>,
}

impl Launch<'_> {
    /// For messages: the buffer parameter bound to span `s` (a region given to a parameter is
    /// named by it), else what the span is.
    pub fn name_span(&self, kernel: &Kernel, s: usize) -> String {
        match self.params.iter().position(|&x| x == Some(s)) {
            Some(p) => format!("buffer `{}`", kernel.params[Param::new(p)].name),
            None => self.spans[s].what(),
        }
    }

    /// The span with the highest base at or below `addr`: the one that holds `addr` if any does
    /// (spans do not overlap), else the one `addr` is past the end of.
    pub fn span_below(&self, addr: u64) -> Option<usize> {
        let n = self.by_address.partition_point(|&s| self.spans[s].base <= addr);
        self.by_address.get(n.checked_sub(1)?).copied()
    }
}

fn as_atomic(bytes: &mut [u8]) -> &[AtomicU8] {
    // SAFETY: `AtomicU8` has the same size, alignment and bit validity as `u8`, and the exclusive
    // borrow guarantees that nothing else touches the bytes while the result lives.
    unsafe { &*(bytes as *mut [u8] as *const [AtomicU8]) }
}

/// The most lanes (workgroups times lanes a workgroup) one run may have: at the interpreter's
/// speed (about 10^8 lane-instructions a second) more would run for hours, which is a mistake
/// in the arguments, not a test. Refused before anything runs, with the size in the message.
pub const MAX_LANES: u64 = 1 << 32;

/// Runs `kernel` over its grid with `args` (one per parameter, in order). Buffers are updated in
/// place. See the module docs for the execution model and the checks.
pub fn run(kernel: &Kernel, args: &mut [Arg], opts: &RunOptions) -> Result<RunStats, InterpError> {
    run_with_memory(kernel, args, &mut [], opts)
}

/// [`run`] with more global memory: `regions` at their own addresses, which raw addresses
/// ([`crate::MemRef::Global`]) reach as they reach the buffer arguments, and which
/// [`Arg::Region`] arguments name. Regions are updated in place. They must not overlap each
/// other or a buffer argument's default span (`(param + 1) << 40`, its length); a launch error
/// says which two do.
pub fn run_with_memory(
    kernel: &Kernel,
    args: &mut [Arg],
    regions: &mut [Region],
    opts: &RunOptions,
) -> Result<RunStats, InterpError> {
    let launch_err = |message: String| InterpError::Launch { kernel: kernel.name.clone(), message };
    if opts.verify {
        crate::verify(kernel, None)
            .map_err(|errors| InterpError::Verify { kernel: kernel.name.clone(), errors })?;
    }
    let w = kernel.wave_size;
    if !w.is_power_of_two() || w > 64 {
        return Err(launch_err(format!("wave size {w} (32 or 64 expected)")));
    }
    let lanes = kernel.workgroup_lanes();
    if lanes == 0 || lanes.div_ceil(w) > 64 {
        return Err(launch_err(format!("workgroup of {lanes} lanes (1..={} expected)", 64 * w)));
    }
    if args.len() != kernel.params.len() {
        return Err(launch_err(format!(
            "{} arguments for {} parameters",
            args.len(),
            kernel.params.len()
        )));
    }
    let mut scalars = vec![0u64; args.len()];
    for ((p, data), arg) in kernel.params.iter().zip(args.iter()) {
        match (&data.kind, arg) {
            (ParamKind::Scalar(s), Arg::Scalar(bits)) => {
                scalars[p.index()] = bits & arith::width_mask(*s)
            }
            (ParamKind::Buffer { .. }, Arg::Buffer(_)) => {}
            (ParamKind::Buffer { .. }, Arg::Region(i)) if *i < regions.len() => {}
            (ParamKind::Buffer { .. }, Arg::Region(i)) => {
                return Err(launch_err(format!(
                    "`{}` is region {i}, but the run has {} regions",
                    data.name,
                    regions.len()
                )))
            }
            (ParamKind::Scalar(_), Arg::Buffer(_) | Arg::Region(_)) => {
                return Err(launch_err(format!("`{}` is a scalar, got a buffer", data.name)))
            }
            (ParamKind::Buffer { .. }, Arg::Scalar(_)) => {
                return Err(launch_err(format!("`{}` is a buffer, got a scalar", data.name)))
            }
        }
    }
    let scalar = |p: Param| scalars.get(p.index()).copied().unwrap_or(0);
    let param_name = |p: Param| kernel.params.get(p).map_or(p.to_string(), |d| d.name.clone());
    kernel.check_scalars(scalar).map_err(InterpError::ScalarRule)?;
    check_aliasing(kernel, args).map_err(launch_err)?;
    let eval = |e: &ShapeExpr, what: &str| {
        e.try_eval(
            |p| Ok(scalar(p)),
            || launch_err(format!("{what} ({}) overflows 64 bits", e.text(param_name))),
        )
    };
    let grid = match opts.grid {
        Some(g) => g,
        None => {
            let mut g = [0u32; 3];
            for (d, e) in kernel.grid.iter().enumerate() {
                let v = eval(e, "the grid")?;
                g[d] = u32::try_from(v)
                    .map_err(|_| launch_err(format!("grid dimension {d} is {v}")))?;
            }
            g
        }
    };
    let workgroups = grid.iter().try_fold(1u64, |n, &g| n.checked_mul(g as u64));
    let total_lanes = workgroups.and_then(|n| n.checked_mul(lanes as u64));
    if !matches!(total_lanes, Some(n) if n <= MAX_LANES) {
        let size = total_lanes.map_or("more than 2^64".into(), |n| n.to_string());
        return Err(launch_err(format!(
            "a grid of {grid:?} workgroups of {lanes} lanes is {size} lanes, more than the \
             interpreter runs ({MAX_LANES}): check the scalar arguments"
        )));
    }
    for (data, arg) in kernel.params.values().zip(args.iter()) {
        let have = match arg {
            Arg::Buffer(bytes) => bytes.len(),
            Arg::Region(i) => regions[*i].bytes.len(),
            Arg::Scalar(_) => continue,
        };
        if let ParamKind::Buffer { elem, len: Some(len), .. } = &data.kind {
            let what = format!("the length of `{}`", data.name);
            let need = eval(len, &what)?.checked_mul(elem.bytes() as u64).ok_or_else(|| {
                launch_err(format!(
                    "{what} in bytes ({} elements of {elem}) overflows 64 bits",
                    len.text(param_name)
                ))
            })?;
            if (have as u64) < need {
                return Err(launch_err(format!(
                    "buffer `{}` has {have} bytes, needs {need}",
                    data.name
                )));
            }
        }
    }
    let prepared = Prepared::new(kernel)?;
    let mut spans = Vec::with_capacity(args.len() + regions.len());
    let mut params = vec![None; args.len()];
    let mut region_arg = vec![None; args.len()];
    for ((p, data), arg) in kernel.params.iter().zip(args.iter_mut()) {
        match (arg, &data.kind) {
            (Arg::Buffer(bytes), ParamKind::Buffer { access, .. }) => {
                params[p.index()] = Some(spans.len());
                spans.push(Span {
                    base: buffer_base(p),
                    bytes: as_atomic(bytes),
                    param: Some(&data.name),
                    access: *access,
                });
            }
            (Arg::Region(i), _) => region_arg[p.index()] = Some(*i),
            _ => {}
        }
    }
    let first_region = spans.len();
    for r in regions.iter_mut() {
        spans.push(Span {
            base: r.base,
            bytes: as_atomic(&mut r.bytes),
            param: None,
            access: Access::ReadWrite,
        });
    }
    for (param, region) in params.iter_mut().zip(region_arg) {
        if let Some(i) = region {
            *param = Some(first_region + i);
        }
    }
    let mut by_address: Vec<usize> = (0..spans.len()).collect();
    by_address.sort_by_key(|&s| (spans[s].base, spans[s].bytes.len()));
    let end = |s: &Span| s.base as u128 + s.bytes.len() as u128;
    for (&a, &b) in by_address.iter().zip(by_address.iter().skip(1)) {
        if end(&spans[a]) > spans[b].base as u128 {
            return Err(launch_err(format!(
                "{} ({} bytes) overlaps {}",
                spans[a].what(),
                spans[a].bytes.len(),
                spans[b].what()
            )));
        }
    }
    if let Some(s) = by_address.last().map(|&s| &spans[s]).filter(|s| end(s) > 1 << 64) {
        return Err(launch_err(format!(
            "{} ({} bytes) runs past the end of the address space",
            s.what(),
            s.bytes.len()
        )));
    }
    let total = grid
        .iter()
        .try_fold(1u64, |n, &g| n.checked_mul(g as u64))
        .ok_or_else(|| launch_err(format!("a grid of {grid:?} workgroups")))?;
    let sequential = !opts.parallel || prepared.global_atomics || total <= 1;
    let tracked = races::tracked_spans(kernel, &spans, &params);
    let races = opts.sanitize.then(|| races::Races::new(tracked.clone(), sequential));
    // With the sanitizer, a kernel with global atomics runs a second time with its workgroups in
    // reverse order, from the same memory: its result must not depend on the order.
    let reverse = opts.sanitize && prepared.global_atomics && total > 1;
    let before = reverse.then(|| races::snapshot(&spans, &tracked));
    let mut launch = Launch {
        spans,
        by_address,
        params,
        scalars: scalars.clone(),
        grid,
        sanitize: opts.sanitize,
        races,
    };
    let wg_of = |n: u64| workgroup_at(grid, n);
    let in_order = |launch: &Launch, order: &mut dyn Iterator<Item = u64>| {
        let mut ex = Exec::new(&prepared, launch);
        for n in order {
            ex.run_workgroup(wg_of(n))?;
        }
        Ok::<u64, InterpError>(ex.lane_ops)
    };
    let lane_ops = if sequential {
        let lane_ops = in_order(&launch, &mut (0..total))?;
        if let Some(before) = &before {
            let forward = races::snapshot(&launch.spans, &tracked);
            races::restore(&launch.spans, before);
            launch.races = Some(races::Races::new(tracked, true));
            in_order(&launch, &mut (0..total).rev())?;
            if let Some(e) = races::order_dependence(kernel, &launch, &forward) {
                return Err(e);
            }
        }
        lane_ops
    } else {
        // One worker a thread, each with one `Exec` (its registers can be megabytes: rayon's
        // splits of a parallel iterator would each allocate and zero their own), taking the next
        // workgroup from a shared counter until none is left or an earlier one failed.
        let next = AtomicU64::new(0);
        let first_failed = AtomicU64::new(u64::MAX);
        let lane_ops = AtomicU64::new(0);
        let errors = Mutex::new(Vec::new());
        let work = || {
            let mut ex: Option<Exec> = None;
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= total || n > first_failed.load(Ordering::Relaxed) {
                    break;
                }
                let ex = ex.get_or_insert_with(|| Exec::new(&prepared, &launch));
                let before = ex.lane_ops;
                match ex.run_workgroup(wg_of(n)) {
                    Ok(()) => {
                        lane_ops.fetch_add(ex.lane_ops - before, Ordering::Relaxed);
                    }
                    Err(e) => {
                        first_failed.fetch_min(n, Ordering::Relaxed);
                        errors.lock().unwrap_or_else(|p| p.into_inner()).push((n, e));
                    }
                }
            }
        };
        let workers = rayon::current_num_threads().min(total as usize);
        rayon::scope(|s| {
            for _ in 1..workers {
                s.spawn(|_| work());
            }
            work();
        });
        let errors = errors.into_inner().unwrap_or_else(|p| p.into_inner());
        if let Some((_, e)) = errors.into_iter().min_by_key(|(n, _)| *n) {
            return Err(e);
        }
        lane_ops.into_inner()
    };
    if let Some(races::Model::Parallel(r)) = launch.races.as_ref().map(|r| &r.model) {
        if let Some(c) = r.first_conflict() {
            return Err(races::parallel_race(kernel, &launch, c));
        }
    }
    Ok(RunStats { workgroups: total, lane_ops })
}

/// The id of the `n`th workgroup of `grid` (x fastest).
pub(crate) fn workgroup_at(grid: [u32; 3], n: u64) -> [u32; 3] {
    let (gx, gy) = (grid[0] as u64, grid[1] as u64);
    [(n % gx) as u32, ((n / gx) % gy) as u32, (n / (gx * gy)) as u32]
}

/// Buffer parameters that name the same memory (one region given to two parameters) where one of
/// them is written: every buffer parameter is `noalias` on a GPU, so such a launch is undefined
/// there. Read-only sharing is allowed.
fn check_aliasing(kernel: &Kernel, args: &[Arg]) -> Result<(), String> {
    let params: Vec<(&crate::ParamData, &Arg)> = kernel.params.values().zip(args).collect();
    let writes = |d: &crate::ParamData| match &d.kind {
        ParamKind::Buffer { access, .. } => access.writes(),
        ParamKind::Scalar(_) => false,
    };
    for (n, &(a, arg_a)) in params.iter().enumerate() {
        let Arg::Region(ra) = arg_a else { continue };
        for &(b, arg_b) in &params[n + 1..] {
            if *arg_b != Arg::Region(*ra) || !(writes(a) || writes(b)) {
                continue;
            }
            let written = if writes(a) { &a.name } else { &b.name };
            return Err(format!(
                "buffers `{}` and `{}` are both region {ra}, and `{written}` is written: \
                 overlapping buffers must all be read-only",
                a.name, b.name
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{run, Arg, RunOptions};

    /// Each workgroup resets only the registers and LDS bytes the last one wrote; in these
    /// (unit) tests `Exec::assert_fresh` checks at every workgroup's start that nothing was
    /// missed: a loop's carried values and index, branches, LDS and its shadow, on one thread
    /// (one `Exec` for every workgroup) and several. The sums are checked too.
    #[test]
    fn every_workgroup_starts_from_zeroed_state() {
        let (rows, n) = (7usize, 333usize);
        let x: Vec<f32> = (0..rows * n).map(|i| ((i * 37 % 101) as f32 - 50.0) / 8.0).collect();
        for wave in [32, 64] {
            for parallel in [false, true] {
                let k = crate::examples::workgroup_sum(wave, 128);
                let mut args = [
                    Arg::Buffer(x.iter().flat_map(|v| v.to_le_bytes()).collect()),
                    Arg::Buffer(vec![0; 4 * rows]),
                    Arg::Scalar(n as u64),
                    Arg::Scalar(rows as u64),
                ];
                let opts = RunOptions { parallel, ..RunOptions::default() };
                run(&k, &mut args, &opts).unwrap();
                let Arg::Buffer(out) = &args[1] else { unreachable!() };
                for (r, got) in out.chunks(4).enumerate() {
                    let got = f32::from_le_bytes(got.try_into().unwrap());
                    let want: f32 = x[r * n..(r + 1) * n].iter().sum();
                    assert!((got - want).abs() <= 1e-3, "row {r}: {got} against {want}");
                }
            }
        }
    }
}
