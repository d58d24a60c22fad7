//! `kiln parity` for a family with [`kiln_specs::Parity::CopyTable`] cases
//! (`copy_from_mapped_multi`), which the generic harness cannot drive: its input is a table of
//! device addresses. Each case allocates its sources in host-mapped memory and its
//! destinations in device buffers, each copy at an offset into its own buffers (every alignment
//! class) with guard bytes around it, builds the table from the buffers' device addresses, and
//! runs a variant on the device and in the interpreter (the same buffers as regions at the same
//! addresses). Both must equal a host memcpy over the whole destination buffer, so the bytes
//! around each copy are checked too, and the sources must be unchanged.

use kiln_ir::interp::{self, Arg, Region, RunOptions};
use kiln_ir::{Kernel, ScalarType};
use kiln_runtime::{Args, Buffer, Device, Runtime};
use kiln_specs::cases::Rng;
use kiln_specs::copy::{CopyCase as Case, CopySpec as Copy};

/// Random bytes before and after each copy in its buffers.
const GUARD: usize = 64;

/// The buffers of one case on a device, with what they held before the launch and what the
/// destinations must hold after it.
struct Setup {
    table: Buffer,
    srcs: Vec<(Buffer, Vec<u8>)>,
    dsts: Vec<(Buffer, Vec<u8>, Vec<u8>)>,
}

fn random_bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.next_u64() as u8).collect()
}

fn setup(dev: &Device, case: &Case) -> anyhow::Result<Setup> {
    let mut rng = Rng::new(case.seed);
    let (mut srcs, mut dsts, mut table) = (vec![], vec![], vec![]);
    for c in &case.copies {
        let src = random_bytes(&mut rng, c.src_off + c.bytes + GUARD);
        let mut before = random_bytes(&mut rng, GUARD + c.dst_off + c.bytes + GUARD);
        let (s, d, n) = (c.src_off, GUARD + c.dst_off, c.bytes);
        // Every byte to be copied differs from what is there, so an unwritten byte shows.
        for i in 0..n {
            before[d + i] = !src[s + i];
        }
        let mut after = before.clone();
        after[d..d + n].copy_from_slice(&src[s..s + n]);
        let sb = dev.alloc_host_mapped(ScalarType::U8, src.len())?;
        sb.write_bytes(&src)?;
        let db = dev.upload(&before)?;
        table.extend([sb.device_address() + s as u64, db.device_address() + d as u64, n as u64]);
        srcs.push((sb, src));
        dsts.push((db, before, after));
    }
    Ok(Setup { table: dev.upload(&table)?, srcs, dsts })
}

/// The first byte where `got` differs from `want`, described.
fn first_difference(i: usize, c: &Copy, got: &[u8], want: &[u8]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("copy {i}: {} bytes read back, {} expected", got.len(), want.len()));
    }
    let b = (0..want.len()).find(|&b| got[b] != want[b])?;
    let start = GUARD + c.dst_off;
    let place = if b < start {
        format!("{} bytes before the copy", start - b)
    } else if b < start + c.bytes {
        format!("byte {} of the copy", b - start)
    } else {
        format!("{} bytes after the copy", b - start - c.bytes)
    };
    Some(format!(
        "copy {i} (src +{}, dst +{}, {} bytes): {place} is {:#04x}, expected {:#04x}",
        c.src_off, c.dst_off, c.bytes, got[b], want[b]
    ))
}

/// Runs `variant` on the device and `ir` (its IR) in the interpreter on `case`; an error says
/// which copy and byte differ first.
pub fn check(
    rt: &Runtime,
    dev: &Device,
    kernel: &str,
    variant: &str,
    ir: &Kernel,
    case: &Case,
) -> Result<(), String> {
    let s = setup(dev, case).map_err(|e| format!("setting up: {e}"))?;
    let count = case.copies.len() as u32;

    // The interpreter, with every buffer as a region at its device address.
    let mut regions = vec![Region {
        base: s.table.device_address(),
        bytes: s.table.read_bytes().map_err(|e| e.to_string())?,
    }];
    regions.extend(
        s.srcs.iter().map(|(b, bytes)| Region { base: b.device_address(), bytes: bytes.clone() }),
    );
    regions.extend(
        s.dsts
            .iter()
            .map(|(b, before, _)| Region { base: b.device_address(), bytes: before.clone() }),
    );
    let mut args = [Arg::Region(0), Arg::Scalar(count as u64)];
    interp::run_with_memory(ir, &mut args, &mut regions, &RunOptions::default())
        .map_err(|e| format!("interpreter: {e}"))?;
    let n = case.copies.len();
    for (i, (c, (_, _, want))) in case.copies.iter().zip(&s.dsts).enumerate() {
        if let Some(d) = first_difference(i, c, &regions[1 + n + i].bytes, want) {
            return Err(format!("interpreter vs memcpy: {d}"));
        }
    }

    // The device.
    let launch = Args::new().buffer("table", &s.table).scalar("count", count);
    rt.launch_variant(kernel, variant, &launch).map_err(|e| e.to_string())?;
    rt.synchronize().map_err(|e| e.to_string())?;
    for (i, (c, (b, _, want))) in case.copies.iter().zip(&s.dsts).enumerate() {
        let got = b.read_bytes().map_err(|e| e.to_string())?;
        if let Some(d) = first_difference(i, c, &got, want) {
            return Err(format!("device vs memcpy: {d}"));
        }
    }
    for (i, (b, want)) in s.srcs.iter().enumerate() {
        if b.read_bytes().map_err(|e| e.to_string())? != *want {
            return Err(format!("device: source {i} (host-mapped) changed"));
        }
    }
    Ok(())
}
