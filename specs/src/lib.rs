//! kiln-specs: the kernel library. One kernel family a file, written with [`KernelBuilder`];
//! `build.ron` is the build matrix (which families, variants and archs are built, and budgets).
//!
//! A family has a baseline and speed variants. Every variant computes the same function as its
//! baseline, bit for bit (`kiln parity` proves it), and carries an admission rule for the router.

use kiln_ir::package::Admission;
use kiln_ir::{Kernel, Target};

pub mod argmax;
pub mod cases;
mod common;
pub mod copy;
pub mod math;
pub mod mma;
pub mod quantize;
pub mod rmsnorm;
pub mod swiglu;
pub mod top_prob;
use serde::{Deserialize, Serialize};

/// Builds one variant's IR for a target at a wave size.
pub type BuildFn = fn(&Target, u32) -> Kernel;

/// One variant of a kernel family.
#[derive(Clone)]
pub struct VariantSpec {
    /// Variant name; the baseline is called `baseline`.
    pub name: &'static str,
    /// Builds the IR.
    pub build: BuildFn,
    /// When the router may take it.
    pub admit: Admission,
}

/// A kernel family: a baseline and its speed variants.
#[derive(Clone)]
pub struct KernelSpec {
    /// Family name (`argmax_rows`, ...).
    pub name: &'static str,
    /// The variants; the first is the baseline.
    pub variants: Vec<VariantSpec>,
}

impl KernelSpec {
    /// The baseline variant.
    pub fn baseline(&self) -> &VariantSpec {
        &self.variants[0]
    }
    /// A variant by name.
    pub fn variant(&self, name: &str) -> Option<&VariantSpec> {
        self.variants.iter().find(|v| v.name == name)
    }
}

/// Resource budget for a family on some archs: a build that misses it fails. One type for the
/// matrix and the builder; unknown (misspelled) keys are refused.
pub use kiln_ir::package::Budget;

/// The build matrix (`specs/build.ron`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BuildMatrix {
    /// Archs built by default.
    pub archs: Vec<String>,
    /// Families built (empty: all).
    pub kernels: Vec<String>,
    /// Budgets.
    pub budgets: Vec<Budget>,
}

/// A build matrix that does not parse or names what does not exist.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MatrixError {
    /// Not valid RON for a [`BuildMatrix`].
    #[error("{origin}:{line}:{col}: {message}")]
    Syntax {
        /// Where the text came from (a file name).
        origin: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What the parser expected.
        message: String,
    },
    /// An arch that is not in the target table.
    #[error("{origin}: {source}")]
    Arch {
        /// Where the text came from.
        origin: String,
        /// The unknown arch, with the supported list.
        source: kiln_ir::target::UnknownTarget,
    },
    /// A kernel family that is not in the library.
    #[error("{origin}: unknown kernel `{name}` in {field}; the library has: {known}")]
    Kernel {
        /// Where the text came from.
        origin: String,
        /// The field (`kernels` or `budgets`).
        field: &'static str,
        /// The unknown name.
        name: String,
        /// The library's families.
        known: String,
    },
}

/// Parses and checks a build matrix: every arch must be in the target table and every kernel
/// (in `kernels` and in budgets, `*` aside) in the library.
pub fn parse_build_matrix(origin: &str, text: &str) -> Result<BuildMatrix, MatrixError> {
    let m: BuildMatrix = ron::from_str(text).map_err(|e| MatrixError::Syntax {
        origin: origin.to_string(),
        line: e.position.line,
        col: e.position.col,
        message: e.code.to_string(),
    })?;
    let archs = m.archs.iter().chain(m.budgets.iter().flat_map(|b| b.archs.iter()));
    for a in archs {
        kiln_ir::Target::by_name(a)
            .map_err(|source| MatrixError::Arch { origin: origin.to_string(), source })?;
    }
    let lib = library();
    let known = || lib.iter().map(|f| f.name).collect::<Vec<_>>().join(", ");
    let kernels = m.kernels.iter().map(|k| ("kernels", k));
    let budgets = m.budgets.iter().map(|b| ("budgets", &b.kernel)).filter(|(_, k)| *k != "*");
    for (field, k) in kernels.chain(budgets) {
        if !lib.iter().any(|f| f.name == k) {
            return Err(MatrixError::Kernel {
                origin: origin.to_string(),
                field,
                name: k.clone(),
                known: known(),
            });
        }
    }
    Ok(m)
}

/// The build matrix shipped with the library (`specs/build.ron`; a test keeps it valid).
pub fn build_matrix() -> BuildMatrix {
    parse_build_matrix("specs/build.ron", include_str!("../build.ron"))
        .unwrap_or_else(|e| panic!("the shipped build matrix is invalid: {e}"))
}

/// Every kernel family of the library.
pub fn library() -> Vec<KernelSpec> {
    let mut v = vec![argmax::spec(), top_prob::spec()];
    v.extend(quantize::specs());
    v.extend(swiglu::specs());
    v.extend(rmsnorm::specs());
    v.push(copy::spec());
    v
}

/// Looks a family up by name.
pub fn family(name: &str) -> Option<KernelSpec> {
    library().into_iter().find(|k| k.name == name)
}
