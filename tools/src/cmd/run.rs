//! `kiln run`: one call of a kernel on your own data (.npy in, .npy out).

use super::{
    entry_for, len_of, load_package, named_values, open_device, open_package, scalar_from_str,
};
use crate::npy;
use anyhow::{anyhow, bail, Context, Result};
use kiln_ir::{Access, ParamKind, ScalarType};
use kiln_runtime::{Args, Buffer, Overrides};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Arguments of `kiln run`.
#[derive(clap::Args)]
#[command(after_help = "\
Inputs are 1-D or N-D C-ordered little-endian .npy arrays whose dtype is the parameter's
element type (f32 <f4, f16 <f2, i32 <i4, u8 |u1, ...). NumPy has no bf16: a bf16 parameter
takes a uint16 array of the values' bits (<u2; e.g. `(x.view(np.uint32) >> 16).astype(np.uint16)`
from float32, which truncates), and a bf16 output is written the same way.")]
pub struct RunArgs {
    /// Kernel family.
    kernel: String,
    /// Force a variant (default: the router's choice).
    #[arg(long)]
    variant: Option<String>,
    /// cpu, cuda or hip.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// The arch the cpu device emulates (default: the package's first wave-32 arch).
    #[arg(long)]
    arch: Option<String>,
    /// Package directory.
    #[arg(long, default_value = "dist")]
    package: PathBuf,
    /// Buffer arguments, NAME=FILE.npy, once a name (bf16: a uint16 array of the bits).
    #[arg(long = "arg")]
    args: Vec<String>,
    /// Scalar arguments, NAME=VALUE, once a name; a value out of the type's range is refused.
    #[arg(long = "shape")]
    shapes: Vec<String>,
    /// Output directory for the written buffers (NAME.npy).
    #[arg(long)]
    out: PathBuf,
}

/// True when an array of `found` elements may be passed for a parameter of `elem`: the same
/// type, or the bits of bf16 as uint16 (NumPy has no bf16).
fn accepts(elem: ScalarType, found: ScalarType) -> bool {
    found == elem || (elem == ScalarType::BF16 && found == ScalarType::U16)
}

/// `kiln run`.
pub fn run(a: RunArgs) -> Result<()> {
    let pkg = open_package(&a.package)?;
    let dev = open_device(&a.device, a.arch.clone())?;
    let rt = load_package(&dev, &pkg, &a.package, Overrides::from_env())?;
    let entry = entry_for(&pkg, &a.kernel, rt.arch())?.clone();
    let files = named_values("--arg", &a.args)?;
    let values = named_values("--shape", &a.shapes)?;
    let params: Vec<&str> =
        entry.abi.params.iter().filter(|p| !p.workspace).map(|p| p.name.as_str()).collect();
    for (flag, names) in [("--arg", files.keys()), ("--shape", values.keys())] {
        for name in names {
            let Some(p) = entry.abi.params.iter().find(|p| p.name == *name && !p.workspace) else {
                bail!("{} has no parameter `{name}` (parameters: {})", a.kernel, params.join(", "));
            };
            let fits = match p.kind {
                ParamKind::Buffer { .. } => flag == "--arg",
                ParamKind::Scalar(_) => flag == "--shape",
            };
            if !fits {
                let want = if flag == "--arg" { "--shape" } else { "--arg" };
                bail!("`{name}` of {} is given with {flag}; it takes {want} {name}=..", a.kernel);
            }
        }
    }
    let mut scalars = BTreeMap::new();
    let mut scalar_vals = vec![];
    for p in &entry.abi.params {
        if let ParamKind::Scalar(ty) = p.kind {
            let s = values
                .get(p.name.as_str())
                .ok_or_else(|| anyhow!("missing --shape {}=..", p.name))?;
            let v = scalar_from_str(ty, s).with_context(|| format!("--shape {}", p.name))?;
            scalars.insert(p.name.clone(), v.as_shape().unwrap_or(0));
            scalar_vals.push((p.name.clone(), v));
        }
    }
    let mut bufs: Vec<(String, Buffer, bool)> = vec![];
    for p in entry.abi.params.iter().filter(|p| !p.workspace) {
        let ParamKind::Buffer { elem, access, .. } = p.kind.clone() else { continue };
        let buf = if let Some(file) = files.get(p.name.as_str()) {
            let (ty, bytes) = npy::read(Path::new(file))?;
            if !accepts(elem, ty) {
                let hint = if elem == ScalarType::BF16 {
                    " (bf16: a uint16 array of the bits)"
                } else {
                    ""
                };
                bail!("--arg {}={file}: expected elements of {elem}{hint}, found {ty}", p.name);
            }
            let b = dev.alloc(elem, bytes.len() / elem.bytes() as usize)?;
            b.write_bytes(&bytes)?;
            b
        } else if access == Access::Write {
            let n = len_of(&p.kind, &scalars, &entry).ok_or_else(|| {
                anyhow!(
                    "output `{}` has no length rule: pass --arg {}=FILE.npy to size it",
                    p.name,
                    p.name
                )
            })?;
            dev.alloc(elem, n as usize)?
        } else {
            bail!("missing --arg {}=FILE.npy (an input of {})", p.name, a.kernel);
        };
        bufs.push((p.name.clone(), buf, access.writes()));
    }
    let mut args = Args::new();
    for (n, b, _) in &bufs {
        args = args.buffer(n.clone(), b);
    }
    for (n, v) in &scalar_vals {
        args = args.scalar(n.clone(), *v);
    }
    let launched = match &a.variant {
        Some(v) => rt.launch_variant(&a.kernel, v, &args)?,
        None => {
            // Why this variant (and, for a tuned family, whether it is tuned): on stderr, so
            // stdout stays the outputs and the summary.
            eprintln!("{}", rt.explain(&a.kernel, &args)?.explain());
            rt.launch(&a.kernel, &args)?
        }
    };
    rt.synchronize()?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    for (n, b, writes) in &bufs {
        if *writes {
            let p = a.out.join(format!("{n}.npy"));
            npy::write_atomic(&p, b.dtype(), &b.read_bytes()?)?;
            println!("wrote {}", p.display());
        }
    }
    println!(
        "ran {} variant {} on {} ({}), grid {:?}",
        a.kernel,
        launched.variant,
        dev.name(),
        rt.arch(),
        launched.grid
    );
    Ok(())
}
