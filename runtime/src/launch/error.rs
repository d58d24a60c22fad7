//! Why a launch is refused: one variant per check, each naming the kernel/variant, the
//! parameter, what the ABI expects and what the call gave.

/// Why a launch was refused. Nothing was issued.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// No kernel of that name in the package.
    #[error("no kernel `{kernel}` in the package; kernels: {}", available.join(", "))]
    UnknownKernel {
        /// The name asked for.
        kernel: String,
        /// The package's kernels.
        available: Vec<String>,
    },
    /// No such variant built for the arch.
    #[error("{kernel}: no variant `{variant}` built for {arch}; built: {}", available.join(", "))]
    UnknownVariant {
        /// Kernel.
        kernel: String,
        /// The variant asked for.
        variant: String,
        /// Arch.
        arch: String,
        /// Variants built for the arch.
        available: Vec<String>,
    },
    /// An argument the ABI has no parameter for.
    #[error("{kernel}: no parameter `{name}`; parameters: {params}")]
    UnknownArg {
        /// `kernel/variant`.
        kernel: String,
        /// The argument's name.
        name: String,
        /// The ABI.
        params: String,
    },
    /// The same argument twice.
    #[error("{kernel}: argument `{name}` given twice")]
    DuplicateArg {
        /// `kernel/variant`.
        kernel: String,
        /// The name.
        name: String,
    },
    /// A parameter without an argument.
    #[error("{kernel}: missing argument `{param}` (expected {expected})")]
    MissingArg {
        /// `kernel/variant`.
        kernel: String,
        /// The parameter.
        param: String,
        /// What it takes.
        expected: String,
    },
    /// An argument for a workspace parameter.
    #[error("{kernel}: `{param}` is a workspace buffer: the runtime allocates it, do not pass it")]
    WorkspaceGiven {
        /// `kernel/variant`.
        kernel: String,
        /// The parameter.
        param: String,
    },
    /// A buffer where a scalar belongs or the other way round, or a wrong type.
    #[error("{kernel}: argument `{param}`: expected {expected}, found {found}")]
    WrongType {
        /// `kernel/variant`.
        kernel: String,
        /// The parameter.
        param: String,
        /// What the ABI says.
        expected: String,
        /// What was passed.
        found: String,
    },
    /// A buffer shorter than its length rule.
    #[error(
        "{kernel}: buffer `{param}` has {found} elements, needs at least {needed} ({rule} with {values})"
    )]
    TooShort {
        /// `kernel/variant`.
        kernel: String,
        /// The parameter.
        param: String,
        /// The length rule as text.
        rule: String,
        /// The scalars it used.
        values: String,
        /// Elements needed.
        needed: u64,
        /// Elements the buffer has.
        found: usize,
    },
    /// A buffer of another device.
    #[error("{kernel}: buffer `{param}` lives on {found}, the kernel runs on {expected}")]
    ForeignBuffer {
        /// `kernel/variant`.
        kernel: String,
        /// The parameter.
        param: String,
        /// This runtime's device.
        expected: String,
        /// The buffer's device.
        found: String,
    },
    /// A scalar argument that breaks a rule of the ABI.
    #[error("{kernel}: scalar `{param}` = {value} breaks the kernel's rule {rule}")]
    ScalarRule {
        /// `kernel/variant`.
        kernel: String,
        /// The parameter.
        param: String,
        /// The value given.
        value: String,
        /// The rule.
        rule: kiln_ir::ScalarRule,
    },
    /// A shape rule that cannot be evaluated (a factor that is not a non-negative scalar).
    #[error("{kernel}: {what} rule {rule}: {detail}")]
    BadShape {
        /// `kernel/variant`.
        kernel: String,
        /// Which rule (`grid`, `length of x`, ...).
        what: String,
        /// The rule as text.
        rule: String,
        /// What is wrong.
        detail: String,
    },
    /// A grid with a zero or too large dimension.
    #[error("{kernel}: grid {grid:?} ({rule}) cannot launch: each dimension must be 1..=2^32-1")]
    BadGrid {
        /// `kernel/variant`.
        kernel: String,
        /// The grid as evaluated.
        grid: [u64; 3],
        /// The grid rule as text.
        rule: String,
    },
    /// Two buffer parameters bound to overlapping memory, one of them written: every buffer
    /// parameter is `noalias` in the lowering, so this would be undefined on a GPU.
    #[error(
        "{kernel}: `{first}` and `{second}` are bound to overlapping memory and `{written}` is \
         written; buffer parameters must not alias (only read-only parameters may share a buffer)"
    )]
    Aliased {
        /// `kernel/variant` (or the graph node).
        kernel: String,
        /// The first parameter, in ABI order.
        first: String,
        /// The second parameter.
        second: String,
        /// The one of the two that is written.
        written: String,
    },
    /// A scalar parameter marked as a workspace (only buffers can be): a malformed package.
    #[error(
        "{kernel}: scalar parameter `{param}` is marked as a workspace; only buffer parameters \
         can be workspaces (the package is malformed)"
    )]
    WorkspaceScalar {
        /// `kernel/variant`.
        kernel: String,
        /// The parameter.
        param: String,
    },
}
