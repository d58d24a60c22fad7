//! The commands of `kiln`, one a file, and what several of them share: opening a device, the
//! bandwidth a floor is counted at, finding an object, reading `NAME=VALUE` arguments and scalar
//! values, and sizing outputs by the ABI's length rules.

pub mod bench;
#[cfg(feature = "llvm")]
pub mod build;
pub mod generate;
pub mod inspect;
pub mod parity;
pub mod random_model;
pub mod run;
pub mod tune;

use anyhow::{anyhow, bail, Context, Result};
use kiln_ir::package::ObjectEntry;
use kiln_ir::{EntityRef, ParamKind, ScalarType};
use kiln_runtime::{Catalog, CpuOptions, Device, DeviceKind, Overrides, Package, Runtime, Scalar};
use std::collections::BTreeMap;
use std::path::Path;

/// Opens `cpu`, `cuda` or `hip` (ordinal 0); `arch` is the arch the cpu device emulates.
pub fn open_device(kind: &str, arch: Option<String>) -> Result<Device> {
    Ok(match kind {
        "cpu" => Device::cpu(CpuOptions { arch, ..CpuOptions::default() }),
        "cuda" => Device::cuda(0)?,
        "hip" => {
            // Said every time, before the device is even opened, until an AMD GPU proves it.
            eprintln!("{}", kiln_runtime::HIP_UNTESTED_NOTICE);
            Device::hip(0)?
        }
        other => bail!("unknown device `{other}`: expected cpu, cuda or hip"),
    })
}

/// Opens and checks the package in `dir`; a refusal names the directory (the loader's own
/// messages name the object or route entry, not always the package).
pub fn open_package(dir: &Path) -> Result<Package> {
    Package::open(dir).map_err(|e| in_package(e.into(), dir))
}

/// Loads `pkg` (from `dir`) on `dev` with `overrides`; a refusal names the directory.
pub fn load_package(
    dev: &Device,
    pkg: &Package,
    dir: &Path,
    overrides: Overrides,
) -> Result<Runtime> {
    Runtime::load_with(dev, pkg, overrides).map_err(|e| in_package(e.into(), dir))
}

/// [`load_package`] loading only the objects of `kernels` ([`Runtime::load_only`]).
pub fn load_package_only(
    dev: &Device,
    pkg: &Package,
    dir: &Path,
    overrides: Overrides,
    kernels: &[&str],
) -> Result<Runtime> {
    Runtime::load_only(dev, pkg, overrides, kernels).map_err(|e| in_package(e.into(), dir))
}

/// What `pkg` holds for `dev`'s arch, from its manifest alone ([`Catalog`]), with the package's
/// error context (a device whose arch it lacks is refused as [`load_package`] refuses it).
pub fn package_catalog<'p>(dev: &Device, pkg: &'p Package, dir: &Path) -> Result<Catalog<'p>> {
    Catalog::new(dev, pkg).map_err(|e| in_package(e.into(), dir))
}

fn in_package(e: anyhow::Error, dir: &Path) -> anyhow::Error {
    let shown = dir.display().to_string();
    if format!("{e:#}").contains(&shown) {
        e
    } else {
        e.context(format!("package {shown}"))
    }
}

/// The copy bandwidth a floor is counted at: given, or measured in this run.
pub struct Floor {
    /// GB/s (bytes read plus written).
    pub gbps: f64,
    /// Where it comes from, for a JSON report.
    pub json: serde_json::Value,
    /// The same for a person.
    pub line: String,
}

/// `--bandwidth` when given (refused unless positive), else a device-to-device copy of
/// `bytes` (default: 1 GiB on a GPU, 4 MiB on the cpu device) timed now.
pub fn floor(given: Option<f64>, bytes: Option<u64>, dev: &Device) -> Result<Floor> {
    if let Some(gbps) = given {
        if !(gbps.is_finite() && gbps > 0.0) {
            bail!("--bandwidth {gbps}: expected a positive number of GB/s");
        }
        return Ok(Floor {
            gbps,
            json: serde_json::json!({"gbps": gbps, "source": "--bandwidth"}),
            line: format!("bandwidth {gbps:.0} GB/s (given with --bandwidth)"),
        });
    }
    let bytes = bytes.unwrap_or(match dev.kind() {
        DeviceKind::Cpu => 4 << 20,
        DeviceKind::Cuda | DeviceKind::Hip => 1 << 30,
    });
    let b = crate::measure::bandwidth::copy_bandwidth(dev, bytes, 10)
        .context("measuring the copy bandwidth for the floor (or give it with --bandwidth)")?;
    Ok(Floor {
        gbps: b.gbps,
        json: serde_json::json!({"gbps": b.gbps, "source": "measured", "copy_bytes": b.bytes, "copy_us": b.us}),
        line: format!(
            "bandwidth {:.1} GB/s (measured: a {} MiB device-to-device copy, {:.1} us, median of 10)",
            b.gbps,
            b.bytes >> 20,
            b.us
        ),
    })
}

/// The object of `kernel` for `arch` (any variant), or an error listing the package's kernels.
pub fn entry_for<'a>(pkg: &'a Package, kernel: &str, arch: &str) -> Result<&'a ObjectEntry> {
    pkg.manifest().objects.iter().find(|o| o.kernel == kernel && o.arch == arch).ok_or_else(|| {
        anyhow!(
            "kernel `{kernel}` has no object for {arch} in the package (kernels: {})",
            pkg.kernels().join(", ")
        )
    })
}

/// Checks that every name a user asked for with `flag` is among `known`; an error names the
/// unknown ones and lists the known ones.
pub fn check_known(flag: &str, asked: &[String], known: &[String], what: &str) -> Result<()> {
    let unknown: Vec<&str> =
        asked.iter().filter(|a| !known.contains(a)).map(String::as_str).collect();
    if !unknown.is_empty() {
        bail!(
            "{flag}: unknown {} `{}`; {what}: {}",
            if unknown.len() == 1 { "name" } else { "names" },
            unknown.join("`, `"),
            known.join(", ")
        );
    }
    Ok(())
}

/// Splits `NAME=VALUE` arguments of `flag` into a map; a missing `=`, an empty name or a name
/// given twice is an error.
pub fn named_values<'a>(flag: &str, items: &'a [String]) -> Result<BTreeMap<&'a str, &'a str>> {
    let mut out = BTreeMap::new();
    for s in items {
        let (name, value) =
            s.split_once('=').ok_or_else(|| anyhow!("{flag} `{s}`: expected NAME=VALUE"))?;
        if name.is_empty() {
            bail!("{flag} `{s}`: the name before `=` is empty");
        }
        if let Some(first) = out.insert(name, value) {
            bail!("{flag} {name} is given twice (`{name}={first}` and `{s}`): give it once");
        }
    }
    Ok(out)
}

/// Parses `s` as a value of the scalar type `ty`. A number that does not fit the type is refused
/// (never wrapped, masked or rounded to infinity or zero); `inf`, `-inf` and `nan` are accepted
/// for float types as written.
pub fn scalar_from_str(ty: ScalarType, s: &str) -> Result<Scalar> {
    let bad = || anyhow!("`{s}` is not a {ty}");
    let out_of_range = |range: String| anyhow!("`{s}` is out of range for {ty} ({range})");
    let bits = match ty {
        ScalarType::F64 => float_bits(ty, s, f64::MAX, |v| (v.to_bits(), v))?,
        ScalarType::F32 => float_bits(ty, s, f64::from(f32::MAX), |v| {
            let x = v as f32;
            (u64::from(x.to_bits()), f64::from(x))
        })?,
        ScalarType::F16 => float_bits(ty, s, half::f16::MAX.to_f64(), |v| {
            let x = half::f16::from_f64(v);
            (u64::from(x.to_bits()), x.to_f64())
        })?,
        ScalarType::BF16 => float_bits(ty, s, half::bf16::MAX.to_f64(), |v| {
            let x = half::bf16::from_f64(v);
            (u64::from(x.to_bits()), x.to_f64())
        })?,
        ScalarType::I1 | ScalarType::U8 | ScalarType::U16 | ScalarType::U32 | ScalarType::U64 => {
            let v: u128 = s.trim().parse().map_err(|_| bad())?;
            let max = mask(ty);
            if v > u128::from(max) {
                return Err(out_of_range(format!("0..={max}")));
            }
            v as u64
        }
        ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64 => {
            let v: i128 = s.trim().parse().map_err(|_| bad())?;
            let half_range = 1i128 << (ty.bits() - 1);
            if v < -half_range || v >= half_range {
                return Err(out_of_range(format!("{}..={}", -half_range, half_range - 1)));
            }
            (v as i64 as u64) & mask(ty)
        }
    };
    Ok(Scalar::from_bits(ty, bits))
}

/// A float literal's bits in `ty` (`convert` rounds an f64 to them and gives the value back):
/// a finite literal that becomes infinite or a nonzero one that becomes zero is refused.
fn float_bits(
    ty: ScalarType,
    s: &str,
    max: f64,
    convert: impl Fn(f64) -> (u64, f64),
) -> Result<u64> {
    let v: f64 = s.trim().parse().map_err(|_| anyhow!("`{s}` is not a {ty}"))?;
    let (bits, back) = convert(v);
    if v.is_finite() && back.is_infinite() {
        bail!("`{s}` is out of range for {ty} (largest finite magnitude {max:e})");
    }
    if v != 0.0 && v.is_finite() && back == 0.0 {
        bail!("`{s}` is out of range for {ty} (it would round to zero)");
    }
    Ok(bits)
}

fn mask(ty: ScalarType) -> u64 {
    if ty.bits() >= 64 {
        u64::MAX
    } else {
        (1u64 << ty.bits()) - 1
    }
}

/// A buffer's length rule evaluated with scalar arguments given by name (`name_of` names a param).
pub(crate) fn rule_len<'a>(
    kind: &ParamKind,
    scalars: &BTreeMap<String, u64>,
    name_of: impl Fn(kiln_ir::Param) -> &'a str,
) -> Option<u64> {
    let ParamKind::Buffer { len: Some(e), .. } = kind else { return None };
    // An overflowing length is one no allocation meets: the launch refuses it.
    Some(e.eval(|p| scalars.get(name_of(p)).copied().unwrap_or(0)).unwrap_or(u64::MAX))
}

/// [`rule_len`] with the names of an object's ABI.
pub(crate) fn len_of(
    kind: &ParamKind,
    scalars: &BTreeMap<String, u64>,
    abi: &ObjectEntry,
) -> Option<u64> {
    rule_len(kind, scalars, |p| abi.abi.params[p.index()].name.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(ty: ScalarType, s: &str) -> Result<u64> {
        scalar_from_str(ty, s).map(|v| v.bits())
    }

    #[test]
    fn floats_out_of_range_are_refused_not_made_infinite() {
        let e = parse(ScalarType::F32, "1e39").unwrap_err().to_string();
        assert!(e.contains("out of range for f32") && e.contains("1e39"), "{e}");
        assert!(parse(ScalarType::F32, "-1e39").is_err());
        assert!(parse(ScalarType::F16, "65520").is_err());
        assert!(parse(ScalarType::BF16, "1e39").is_err());
        assert!(parse(ScalarType::F32, "1e-50").is_err(), "underflow to zero");
        assert_eq!(parse(ScalarType::F16, "65504").unwrap(), 0x7bff);
        assert_eq!(parse(ScalarType::F32, "1e-6").unwrap(), u64::from(1e-6f32.to_bits()));
        assert_eq!(parse(ScalarType::F32, "inf").unwrap(), u64::from(f32::INFINITY.to_bits()));
        assert_eq!(parse(ScalarType::F64, "1e300").unwrap(), 1e300f64.to_bits());
        assert_eq!(parse(ScalarType::F32, "0").unwrap(), 0);
    }

    #[test]
    fn integers_out_of_range_are_refused_not_wrapped() {
        assert!(parse(ScalarType::U32, "4294967296").is_err());
        assert!(parse(ScalarType::U32, "-1").is_err());
        assert_eq!(parse(ScalarType::U32, "4294967295").unwrap(), u64::from(u32::MAX));
        assert!(parse(ScalarType::I8, "128").is_err());
        assert!(parse(ScalarType::I8, "-129").is_err());
        assert_eq!(parse(ScalarType::I8, "-128").unwrap(), 0x80);
        assert_eq!(parse(ScalarType::I32, "-1").unwrap(), 0xffff_ffff);
        assert!(parse(ScalarType::I64, "9223372036854775808").is_err());
        assert_eq!(parse(ScalarType::U64, "18446744073709551615").unwrap(), u64::MAX);
        assert!(parse(ScalarType::U64, "18446744073709551616").is_err());
        assert!(parse(ScalarType::I1, "2").is_err());
        assert!(parse(ScalarType::U16, "x").unwrap_err().to_string().contains("not a u16"));
    }

    #[test]
    fn a_name_given_twice_is_refused() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let items = v(&["n=3", "rows=1", "n=4"]);
        let e = named_values("--shape", &items).unwrap_err().to_string();
        assert!(e.contains("--shape n is given twice") && e.contains("n=3") && e.contains("n=4"));
        assert!(named_values("--arg", &v(&["x"])).is_err());
        assert!(named_values("--arg", &v(&["=a.npy"])).is_err());
        let ok = v(&["a=1", "b=x=y"]);
        let m = named_values("--shape", &ok).unwrap();
        assert_eq!(m.get("b"), Some(&"x=y"));
    }
}
