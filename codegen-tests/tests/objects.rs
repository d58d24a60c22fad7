//! Gates on the code objects themselves, for the example kernels and every library kernel on every arch: resources come
//! from the object (no scratch; no spills at the target's default wave size), the object's wave size is the kernel's, every HSACO
//! disassembles with `llvm-objdump-19 --mcpu=<arch>`, and every PTX assembles with ptxas (skipped
//! with a message when no ptxas is found).

use kiln_codegen::package::{compile_cached, toolchain};
use kiln_codegen::{compile, find_ptxas, occupancy, CompiledObject, Options};
use kiln_codegen_tests::kernels;
use kiln_ir::package::ObjectFormat;
use kiln_ir::{Kernel, Target, TARGETS};
use rayon::prelude::*;
use std::process::Command;

fn objects() -> Vec<(Kernel, &'static Target, CompiledObject)> {
    let mut jobs: Vec<(Kernel, &'static Target)> = vec![];
    for t in TARGETS {
        for &w in t.wave_sizes {
            jobs.extend(kernels::examples(w).into_iter().map(|k| (k, t)));
        }
        // Every library kernel (kiln-specs), every variant, at the target's own wave size: the
        // same gates, so no library kernel ships with scratch, spills or a wrong wave size.
        // (A family built only for some archs, `KernelSpec::archs`, only there.)
        for f in kiln_specs::library() {
            if f.archs.as_ref().is_some_and(|a| !a.iter().any(|n| n == t.name)) {
                continue;
            }
            for var in &f.variants {
                jobs.push(((var.build)(t, t.default_wave()), t));
            }
        }
    }
    // In parallel (the library is a few thousand objects over all archs). With `KILN_CACHE_DIR`
    // set, through `kiln build`'s cache: scripts/test.sh builds the whole library first, so the
    // gates here read the very objects the package holds instead of compiling them a second time.
    let cache = std::env::var_os("KILN_CACHE_DIR").map(std::path::PathBuf::from);
    let tc = toolchain();
    let from_cache = std::sync::atomic::AtomicUsize::new(0);
    let objects: Vec<_> = jobs
        .into_par_iter()
        .map(|(k, t)| {
            let o = match &cache {
                Some(dir) => compile_cached(&k, t, &Options::default(), dir, &tc).map(|c| {
                    if c.cached {
                        from_cache.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    c.object
                }),
                None => compile(&k, t, &Options::default()).map_err(Into::into),
            }
            .unwrap_or_else(|e| panic!("{} on {}: {e}", k.name, t.name));
            (k, t, o)
        })
        .collect();
    match &cache {
        Some(dir) => println!(
            "{} objects, {} of them from the build cache {}",
            objects.len(),
            from_cache.into_inner(),
            dir.display()
        ),
        None => println!("{} objects compiled (no KILN_CACHE_DIR)", objects.len()),
    }
    objects
}

fn objdump() -> Option<&'static str> {
    ["llvm-objdump-19", "/usr/lib/llvm-19/bin/llvm-objdump", "llvm-objdump"]
        .into_iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok_and(|o| o.status.success()))
}

#[test]
fn example_kernels_on_every_arch() {
    let objdump = objdump();
    if objdump.is_none() {
        println!("SKIP disassembly: no llvm-objdump-19 found");
    }
    if find_ptxas().is_none() {
        println!(
            "SKIP ptxas gate: no ptxas found (set KILN_PTXAS or pip install nvidia-cuda-nvcc)"
        );
    }
    // The gates in parallel too; the HSACOs are written to a directory of the run and
    // disassembled below, many a call.
    let dir = std::env::temp_dir().join(format!("kiln-test-objects-{}", std::process::id()));
    if objdump.is_some() {
        std::fs::create_dir_all(&dir).unwrap();
    }
    let checked: Vec<(Vec<String>, Option<Disassembly>)> = objects()
        .into_par_iter()
        .map(|(k, t, o)| {
            let mut failures = vec![];
            let mut disassembly = None;
            let what = format!("{} (wave {}) on {}", k.name, k.wave_size, t.name);
            let r = &o.resources;
            let mut fail = |m: String| failures.push(format!("{what}: {m}"));
            if r.wave_size != k.wave_size {
                fail(format!("object wave size {} != kernel's {}", r.wave_size, k.wave_size));
            }
            if r.scratch_bytes.unwrap_or(0) != 0 {
                fail(format!("{:?} bytes of scratch", r.scratch_bytes));
            }
            // gfx10 in wave 64 crosses halves through SGPRs (readlane/writelane): SGPR spills into
            // VGPR lanes are expected there, so the spill gate is for each target's own wave size.
            if k.wave_size == t.default_wave()
                && r.vgpr_spills.unwrap_or(0) + r.sgpr_spills.unwrap_or(0) != 0
            {
                fail(format!("spills: {:?} VGPR, {:?} SGPR", r.vgpr_spills, r.sgpr_spills));
            }
            if r.lds_bytes != k.lds_bytes() {
                fail(format!(
                    "LDS {} bytes in the object, the kernel declares {}",
                    r.lds_bytes,
                    k.lds_bytes()
                ));
            }
            match o.format {
                ObjectFormat::Hsaco => {
                    assert_eq!(r.source, "amdhsa metadata");
                    if occupancy(t, &k, r).is_none() {
                        fail("no occupancy".into());
                    }
                    if objdump.is_some() {
                        let file =
                            dir.join(format!("{}-w{}-{}.hsaco", t.name, k.wave_size, k.name));
                        std::fs::write(&file, &o.bytes).unwrap();
                        disassembly = Some(Disassembly {
                            arch: t.name,
                            file,
                            symbol: o.symbol.clone(),
                            what: what.clone(),
                        });
                    }
                }
                ObjectFormat::Ptx => {
                    // With a ptxas, compile() already assembled the PTX to measure it.
                    if find_ptxas().is_some() {
                        assert_eq!(r.source, "ptxas -v", "{what}");
                        assert!(r.vgprs.is_some(), "{what}");
                    } else {
                        assert!(r.vgprs.is_none(), "{what}");
                    }
                }
            }
            (failures, disassembly)
        })
        .collect();
    let (mut failures, mut disassemblies) = (Vec::new(), Vec::new());
    for (f, d) in checked {
        failures.extend(f);
        disassemblies.extend(d);
    }
    if let Some(od) = objdump {
        // One llvm-objdump a few dozen objects of one arch (a process an object was most of this
        // test's time).
        disassemblies.sort_by_key(|d| d.arch);
        let batches: Vec<&[Disassembly]> =
            disassemblies.chunk_by(|a, b| a.arch == b.arch).flat_map(|c| c.chunks(48)).collect();
        failures.par_extend(batches.into_par_iter().flat_map_iter(|b| disassemble(od, b)));
        std::fs::remove_dir_all(&dir).unwrap();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An HSACO written for [`disassemble`]: its arch, file, the kernel symbol the disassembly must
/// show, and how a failure names it.
struct Disassembly {
    arch: &'static str,
    file: std::path::PathBuf,
    symbol: String,
    what: String,
}

/// Disassembles `batch` (HSACOs of one arch) in one `llvm-objdump -d` call; a failure for each
/// object whose listing lacks its symbol or has an instruction it could not decode. When the
/// call fails, each object again on its own, so the failure names the object.
fn disassemble(od: &str, batch: &[Disassembly]) -> Vec<String> {
    let out = Command::new(od)
        .args(["-d", &format!("--mcpu={}", batch[0].arch)])
        .args(batch.iter().map(|d| &d.file))
        .output()
        .unwrap();
    if !out.status.success() {
        if batch.len() > 1 {
            return batch.iter().flat_map(|d| disassemble(od, std::slice::from_ref(d))).collect();
        }
        let err = String::from_utf8_lossy(&out.stderr);
        return vec![format!("{}: llvm-objdump failed: {err}", batch[0].what)];
    }
    let text = String::from_utf8_lossy(&out.stdout);
    // Each file's listing starts with `<file>:\tfile format ...`.
    let starts: Vec<usize> = batch
        .iter()
        .map(|d| text.find(&format!("{}:\tfile format", d.file.display())).unwrap_or(usize::MAX))
        .collect();
    let mut failures = vec![];
    for (i, d) in batch.iter().enumerate() {
        let end = starts.iter().copied().filter(|&e| e > starts[i]).min().unwrap_or(text.len());
        let listing = text.get(starts[i]..end).unwrap_or("");
        if !listing.contains(&format!("<{}>:", d.symbol)) || listing.contains("<unknown>") {
            failures.push(format!(
                "{}: llvm-objdump shows no `{}` or an unknown instruction",
                d.what, d.symbol
            ));
        }
    }
    failures
}

#[test]
fn wave64_where_the_target_allows_it_only() {
    let k = kiln_ir::examples::wave_sum(64);
    let e = compile(&k, Target::by_name("sm_90").unwrap(), &Options::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("wave_sum") && e.contains("sm_90") && e.contains("wave size 64"), "{e}");
}

#[test]
fn every_op_compiles_everywhere() {
    for t in TARGETS {
        for &w in t.wave_sizes {
            compile(&kernels::op_zoo(w), t, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
            for m in [1, 3, 5, 16, 20, 31] {
                compile(
                    &kernels::shuffle_xor(w, m),
                    t,
                    &Options { opt_level: 0, ..Options::default() },
                )
                .unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }
}

/// A kernel that prefetches, then waits for the grids before it, then loads.
fn prefetch_then_wait(wave: u32) -> Kernel {
    use kiln_ir::{Access, KernelBuilder, ScalarType, Type};
    let mut b = KernelBuilder::new("prefetch_then_wait", wave);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    let lane = b.lane();
    let line = b.u32(128);
    let at = b.mul(lane, line);
    b.prefetch(x, at);
    b.grid_dependency_wait();
    let v = b.load(x, lane, Type::F32);
    b.store(out, lane, v);
    b.finish()
}

#[test]
fn the_wait_follows_the_prefetches_where_the_kernel_places_it() {
    let k = prefetch_then_wait(32);
    let ptx = |arch: &str| {
        let o = compile(&k, Target::by_name(arch).unwrap(), &Options::default())
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        (String::from_utf8(o.bytes).unwrap(), o.grid_dependency)
    };
    let (text, waits) = ptx("sm_90");
    assert!(waits, "sm_90 objects wait for their grid dependency");
    let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("no `{s}` in\n{text}"));
    let (launch, pf, wait, load) = (
        at("griddepcontrol.launch_dependents;"),
        at("prefetch.global.L2"),
        at("griddepcontrol.wait;"),
        at("ld.global"),
    );
    assert!(launch < pf && pf < wait && wait < load, "order in\n{text}");
    assert_eq!(text.matches("griddepcontrol.wait;").count(), 1, "{text}");
    // Before sm_90: the prefetch, and no grid-dependency control at all.
    let (text, waits) = ptx("sm_80");
    assert!(!waits && !text.contains("griddepcontrol") && text.contains("prefetch.global.L2"));
    // AMD: the hint is dropped, the kernel compiles.
    for arch in ["gfx906", "gfx1100", "gfx942"] {
        let t = Target::by_name(arch).unwrap();
        for &w in t.wave_sizes {
            compile(&prefetch_then_wait(w), t, &Options::default())
                .unwrap_or_else(|e| panic!("{arch}: {e}"));
        }
    }
}

/// A store, a device-scope fence and a counter's atomic add (the last-workgroup handshake).
fn store_fence_count(wave: u32) -> Kernel {
    use kiln_ir::{Access, AtomicOp, KernelBuilder, ScalarType, Scope};
    let mut b = KernelBuilder::new("store_fence_count", wave);
    let out = b.buffer("out", ScalarType::U32, Access::Write);
    let count = b.buffer("count", ScalarType::U32, Access::ReadWrite);
    let lane = b.lane();
    b.store(out, lane, lane);
    b.fence(Scope::Device);
    let zero = b.u32(0);
    let one = b.u32(1);
    let old = b.atomic(AtomicOp::Add, count, zero, one, Scope::Device);
    b.store(out, lane, old);
    b.finish()
}

/// NVIDIA's device-scope fences are acquire-release (`fence.acq_rel.gpu`), what the IR
/// promises, not the sequentially consistent `membar.gl` (measured about 17 ns a workgroup of
/// the handshake on the H200); a device atomic on global memory is one `atom.acq_rel.gpu`
/// (no fence of its own: ptxas puts the release's `MEMBAR` before it and the acquire's L1
/// invalidation after); AMD compiles.
#[test]
fn device_fences_are_acquire_release_on_nvidia() {
    for arch in ["sm_80", "sm_90"] {
        let o =
            compile(&store_fence_count(32), Target::by_name(arch).unwrap(), &Options::default())
                .unwrap_or_else(|e| panic!("{arch}: {e}"));
        let text = String::from_utf8(o.bytes).unwrap();
        assert!(!text.contains("membar.gl") && !text.contains("fence.sc"), "{arch}:\n{text}");
        let fences: Vec<usize> = text.match_indices("fence.acq_rel.gpu;").map(|(i, _)| i).collect();
        let atom = text
            .find("atom.acq_rel.gpu.global.add.u32")
            .unwrap_or_else(|| panic!("no acq_rel atom in\n{text}"));
        assert_eq!(fences.len(), 1, "{arch}: the kernel's one fence\n{text}");
        assert!(fences[0] < atom, "{arch}: order in\n{text}");
        assert!(!text.contains("atom.global"), "{arch}: a relaxed atom in\n{text}");
    }
    for arch in ["gfx906", "gfx1100", "gfx942"] {
        let t = Target::by_name(arch).unwrap();
        compile(&store_fence_count(t.default_wave()), t, &Options::default())
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
    }
}

/// Each lane copies 16 bytes of `x` into LDS asynchronously, waits, and stores its neighbour's
/// first word (after a barrier).
fn async_neighbour(wave: u32) -> Kernel {
    use kiln_ir::{Access, BarrierKind, KernelBuilder, ScalarType, Type};
    let mut b = KernelBuilder::new("async_neighbour", wave);
    let x = b.buffer("x", ScalarType::U32, Access::Read);
    let out = b.buffer("out", ScalarType::U32, Access::Write);
    let lds = b.lds("stage", ScalarType::U32, 4 * wave);
    let lane = b.lane();
    let sixteen = b.u32(16);
    let at = b.mul(lane, sixteen);
    b.async_copy(lds, at, x, at, 16);
    b.async_wait(0);
    b.barrier(BarrierKind::Lds);
    let one = b.u32(1);
    let other = b.xor(lane, one);
    let four = b.u32(4);
    let w = b.mul(other, four);
    let v = b.load(lds, w, Type::U32);
    b.store(out, lane, v);
    b.finish()
}

/// sm_80 and later issue `cp.async` and wait for its group before the barrier and the LDS
/// read; sm_75 and AMD copy through registers (a global load and an LDS store), no `cp.async`.
#[test]
fn async_copies_are_cp_async_from_sm_80() {
    let ptx = |arch: &str| {
        let o = compile(&async_neighbour(32), Target::by_name(arch).unwrap(), &Options::default())
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        String::from_utf8(o.bytes).unwrap()
    };
    for arch in ["sm_80", "sm_86", "sm_90"] {
        let text = ptx(arch);
        let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{arch}: no `{s}` in\n{text}"));
        let (copy, commit, wait, bar, read) = (
            at("cp.async.cg.shared.global ["),
            at("cp.async.commit_group;"),
            at("cp.async.wait_group 0;"),
            at("bar.sync"),
            at("ld.shared"),
        );
        assert!(copy < commit && commit < wait && wait < bar && bar < read, "{arch}:\n{text}");
        assert!(!text.contains("st.shared"), "{arch}: the copy goes around registers\n{text}");
    }
    let text = ptx("sm_75");
    assert!(!text.contains("cp.async") && text.contains("st.shared"), "sm_75:\n{text}");
    for arch in ["gfx906", "gfx1100", "gfx942"] {
        let t = Target::by_name(arch).unwrap();
        for &w in t.wave_sizes {
            compile(&async_neighbour(w), t, &Options::default())
                .unwrap_or_else(|e| panic!("{arch} wave {w}: {e}"));
        }
    }
}

/// Lane `l` names row `l % 8` of matrix `l / 8` of a staged block (rows of 24 halves) and
/// stores its four pairs.
fn ld_matrix_kernel(trans: bool) -> Kernel {
    use kiln_ir::{Access, BarrierKind, KernelBuilder, ScalarType, Type};
    let mut b = KernelBuilder::new("ld_matrix_x4", 32);
    let x = b.buffer("x", ScalarType::F16, Access::Read);
    let out = b.buffer("out", ScalarType::F16, Access::Write);
    let lds = b.lds("block", ScalarType::F16, 32 * 24);
    let lane = b.lane();
    let (n, w) = (b.u32(32 * 24), b.u32(32));
    b.for_range(lane, n, w, 1, &[], |b, i, _| {
        let v = b.load(x, i, Type::F16);
        b.store(lds, i, v);
        vec![]
    });
    b.barrier(BarrierKind::Lds);
    let stride = b.u32(24);
    let row = b.mul(lane, stride);
    let m = b.ld_matrix(lds, row, 4, trans);
    let eight = b.u32(8);
    let base = b.mul(lane, eight);
    for e in 0..8u32 {
        let v = b.extract(m, e as u8);
        let ev = b.u32(e);
        let o = b.add(base, ev);
        b.store(out, o, v);
    }
    b.finish()
}

/// `ld_matrix` is one `ldmatrix` of four registers on every NVIDIA arch (`.trans` when asked),
/// after the barrier; an AMD arch refuses it (the verifier first, the lowering as well).
#[test]
fn ld_matrix_is_one_ldmatrix_on_nvidia() {
    for arch in ["sm_75", "sm_80", "sm_90"] {
        for trans in [false, true] {
            let k = ld_matrix_kernel(trans);
            let o = compile(&k, Target::by_name(arch).unwrap(), &Options::default())
                .unwrap_or_else(|e| panic!("{arch}: {e}"));
            let text = String::from_utf8(o.bytes).unwrap();
            let op = if trans {
                "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {"
            } else {
                "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {"
            };
            assert_eq!(text.matches("ldmatrix").count(), 1, "{arch}:\n{text}");
            let (bar, ld) = (text.find("bar.sync").unwrap(), text.find(op));
            assert!(ld.is_some_and(|l| l > bar), "{arch} trans={trans}:\n{text}");
        }
    }
    let e =
        compile(&ld_matrix_kernel(false), Target::by_name("gfx1100").unwrap(), &Options::default())
            .unwrap_err()
            .to_string();
    assert!(e.contains("ld_matrix on gfx1100"), "{e}");
}
