//! Case files: `cases/*.kt`, one kernel x arch x output each.
//!
//! ```text
//! ; kernel: workgroup_sum        which kernel (`kernels::by_name`, else a kiln-specs library family)
//! ; variant: baseline            a knob of the kernel (`all`, `p4`, `m16`...); default `baseline`
//! ; arch: gfx1201                the target
//! ; wave: 32                     default: the target's default wave size
//! ; check: asm                   `asm` (ISA text / PTX) or `llvm` (optimized LLVM IR)
//! ; bless: row_xmask|permlane    optional: `KILN_BLESS=1` rewrites the CHECK lines from the output
//! ; implicit-check-not: ds_|scratch_   optional: texts on no line that a directive did not match
//! CHECK: s_wait_dscnt 0x0        directives (see `filecheck`)
//! ```
//!
//! A blessable case is a snapshot: blessing replaces its directives with one `CHECK:` per output
//! line that contains one of the `|`-separated patterns, in order.

use crate::filecheck::{self, Directive};
use kiln_codegen::{compile, CompiledObject, Options};
use kiln_ir::Target;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Which output a case checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Output {
    /// The target assembly.
    Asm,
    /// The optimized LLVM IR.
    Llvm,
}

/// A parsed case file.
#[derive(Clone, Debug)]
pub struct Case {
    /// The file.
    pub path: PathBuf,
    /// Kernel name.
    pub kernel: String,
    /// Variant / knob.
    pub variant: String,
    /// Architecture.
    pub arch: String,
    /// Wave size.
    pub wave: u32,
    /// What is checked.
    pub output: Output,
    /// Patterns for blessing, when blessable.
    pub bless: Option<Vec<String>>,
    /// Texts forbidden on every line that no positive directive matched.
    pub implicit_not: Vec<String>,
    /// The directives.
    pub directives: Vec<Directive>,
    /// The header lines, as written.
    header: Vec<String>,
}

impl Case {
    /// The case's name (file stem).
    pub fn name(&self) -> String {
        self.path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
    }

    /// Parses a case file.
    pub fn parse(path: &Path, text: &str) -> Result<Case, String> {
        let mut kv: HashMap<String, String> = HashMap::new();
        let mut header = vec![];
        let mut directives = vec![];
        for (n, line) in text.lines().enumerate() {
            let t = line.trim();
            if let Some(rest) = t.strip_prefix(';') {
                header.push(line.to_string());
                if let Some((k, v)) = rest.split_once(':') {
                    kv.insert(k.trim().to_string(), v.trim().to_string());
                }
            } else if let Some(d) = Directive::parse(t) {
                directives.push(d.map_err(|e| format!("line {}: {e}", n + 1))?);
            } else if !t.is_empty() {
                return Err(format!(
                    "line {}: neither a header (`; key: value`) nor a directive: `{t}`",
                    n + 1
                ));
            }
        }
        let get = |k: &str| kv.get(k).cloned().ok_or_else(|| format!("missing header `; {k}:`"));
        let arch = get("arch")?;
        let target = Target::by_name(&arch).map_err(|e| e.to_string())?;
        let wave = match kv.get("wave") {
            Some(w) => w.parse().map_err(|_| format!("bad wave `{w}`"))?,
            None => target.default_wave(),
        };
        let output = match get("check")?.as_str() {
            "asm" => Output::Asm,
            "llvm" => Output::Llvm,
            other => return Err(format!("`; check:` must be asm or llvm, not `{other}`")),
        };
        let bless = kv.get("bless").map(|b| b.split('|').map(|s| s.trim().to_string()).collect());
        let implicit_not: Vec<String> = kv
            .get("implicit-check-not")
            .map(|b| b.split('|').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
            .unwrap_or_default();
        if kv.contains_key("implicit-check-not") && implicit_not.is_empty() {
            return Err("`; implicit-check-not:` names no text".into());
        }
        if directives.is_empty() && bless.is_none() {
            return Err("no directives".into());
        }
        Ok(Case {
            path: path.to_path_buf(),
            kernel: get("kernel")?,
            variant: kv.get("variant").cloned().unwrap_or_else(|| "baseline".into()),
            arch,
            wave,
            output,
            bless,
            implicit_not,
            directives,
            header,
        })
    }

    /// The directives a bless would write for `output`.
    pub fn blessed(&self, output: &str) -> Vec<Directive> {
        let pats = self.bless.clone().unwrap_or_default();
        output
            .lines()
            .map(filecheck::normalize)
            .filter(|l| {
                !l.starts_with("//")
                    && !l.starts_with(';')
                    && pats.iter().any(|p| l.contains(p.as_str()))
            })
            .map(Directive::Check)
            .collect()
    }

    /// The file text with `directives`.
    pub fn render(&self, directives: &[Directive]) -> String {
        let mut s = self.header.join("\n");
        s.push('\n');
        for d in directives {
            s += &format!("{d}\n");
        }
        s
    }
}

/// Compiles each (kernel, variant, arch, wave) once.
#[derive(Default)]
pub struct Compiler {
    cache: HashMap<(String, String, String, u32), Result<CompiledObject, String>>,
}

impl Compiler {
    /// The compiled object of a case's kernel (asm and LLVM IR included).
    pub fn get(&mut self, c: &Case) -> Result<&CompiledObject, String> {
        let key = (c.kernel.clone(), c.variant.clone(), c.arch.clone(), c.wave);
        self.cache
            .entry(key)
            .or_insert_with(|| {
                let t = Target::by_name(&c.arch).map_err(|e| e.to_string())?;
                let k = crate::kernels::by_name(&c.kernel, &c.variant, c.wave)
                    .or_else(|| crate::kernels::library(&c.kernel, &c.variant, t, c.wave))
                    .ok_or_else(|| {
                        format!("unknown kernel `{}` / variant `{}`", c.kernel, c.variant)
                    })?;
                let opts = Options { emit_asm: true, emit_llvm: true, ..Options::default() };
                compile(&k, t, &opts).map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// Runs one case; with `bless` set, rewrites a blessable case's file instead of failing.
pub fn run(case: &Case, compiler: &mut Compiler, bless: bool) -> Result<(), String> {
    let obj = compiler.get(case)?;
    let text = match case.output {
        Output::Asm => obj.asm.clone().unwrap_or_default(),
        Output::Llvm => obj.llvm_ir.clone().unwrap_or_default(),
    };
    if bless && case.bless.is_some() {
        let ds = case.blessed(&text);
        std::fs::write(&case.path, case.render(&ds))
            .map_err(|e| format!("{}: {e}", case.path.display()))?;
        return Ok(());
    }
    filecheck::check_with(&case.directives, &text, &case.implicit_not).map_err(|m| {
        match case.directives.get(m.directive) {
            Some(d) => format!("`{d}` failed: {}", m.message),
            None => format!("end of input: {}", m.message),
        }
    })
}

/// Every case file under `dir`, sorted.
pub fn case_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "kt"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}
