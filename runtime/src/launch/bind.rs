//! Binding a call's arguments to an object's ABI: names, types, devices, lengths against
//! their shape rules, the grid, and the runtime-owned workspaces. Nothing is issued here.

use super::alias::{check_aliasing, BufferUse};
use super::shape::{eval_shape, shape_text, shape_values};
use super::{ArgValue, Args, LaunchError, LoadedKernel};
use crate::device::{Buffer, Device, KernelArg, PreparedLaunch};
use crate::package::describe_params;
use crate::value::Scalar;
use crate::RuntimeError;
use kiln_ir::ParamKind;
use std::sync::Arc;

/// Checks the arguments against the object's ABI and builds the launch.
pub(crate) fn bind(
    device: &Device,
    lk: &Arc<LoadedKernel>,
    args: &Args<'_>,
) -> Result<PreparedLaunch, RuntimeError> {
    let e = &lk.object.entry;
    let who: &str = &lk.label;
    let abi = &e.abi;

    // Names first: duplicates and unknown names.
    for (i, (name, _)) in args.items.iter().enumerate() {
        if args.items[..i].iter().any(|(n, _)| n == name) {
            return Err(LaunchError::DuplicateArg {
                kernel: who.to_string(),
                name: name.to_string(),
            }
            .into());
        }
        if !abi.params.iter().any(|p| &p.name == name) {
            return Err(LaunchError::UnknownArg {
                kernel: who.to_string(),
                name: name.to_string(),
                params: describe_params(abi),
            }
            .into());
        }
    }

    // Types, parameter by parameter; scalars are collected for the shape rules.
    let mut scalars: Vec<Option<Scalar>> = vec![None; abi.params.len()];
    let mut buffers: Vec<Option<&Buffer>> = vec![None; abi.params.len()];
    for (i, p) in abi.params.iter().enumerate() {
        let given = args.get(&p.name);
        if p.workspace {
            if let ParamKind::Scalar(_) = p.kind {
                return Err(LaunchError::WorkspaceScalar {
                    kernel: who.to_string(),
                    param: p.name.clone(),
                }
                .into());
            }
            if given.is_some() {
                return Err(LaunchError::WorkspaceGiven {
                    kernel: who.to_string(),
                    param: p.name.clone(),
                }
                .into());
            }
            continue;
        }
        // Messages are built only for an error: this runs on every launch.
        let expected = || match &p.kind {
            ParamKind::Buffer { elem, .. } => format!("a {elem} buffer"),
            ParamKind::Scalar(t) => format!("a {t} scalar"),
        };
        let Some(given) = given else {
            return Err(LaunchError::MissingArg {
                kernel: who.to_string(),
                param: p.name.clone(),
                expected: expected(),
            }
            .into());
        };
        let wrong = |found: String| LaunchError::WrongType {
            kernel: who.to_string(),
            param: p.name.clone(),
            expected: expected(),
            found,
        };
        match (&p.kind, given) {
            (ParamKind::Buffer { elem, .. }, ArgValue::Buffer(b)) => {
                if b.device().id() != device.id() {
                    return Err(LaunchError::ForeignBuffer {
                        kernel: who.to_string(),
                        param: p.name.clone(),
                        expected: format!("{device:?}"),
                        found: format!("{:?}", b.device()),
                    }
                    .into());
                }
                if b.dtype() != *elem {
                    return Err(wrong(format!("a {} buffer", b.dtype())).into());
                }
                buffers[i] = Some(b);
            }
            (ParamKind::Scalar(t), ArgValue::Scalar(s)) => {
                if s.ty() != *t {
                    return Err(wrong(format!("a {} scalar ({s:?})", s.ty())).into());
                }
                scalars[i] = Some(*s);
            }
            (_, ArgValue::Buffer(b)) => {
                return Err(wrong(format!("a {} buffer", b.dtype())).into());
            }
            (_, ArgValue::Scalar(s)) => return Err(wrong(format!("a scalar ({s:?})")).into()),
        }
    }

    // The ABI's rules on scalar values (`n` a multiple of 32...): a kernel that relies on one
    // would otherwise drop or garble data silently.
    for (p, s) in abi.params.iter().zip(&scalars) {
        let Some(s) = s else { continue };
        for &rule in &p.rules {
            let holds = s.as_i128().is_some_and(|v| rule.holds(v));
            if !holds {
                return Err(LaunchError::ScalarRule {
                    kernel: who.to_string(),
                    param: p.name.clone(),
                    value: s.to_string(),
                    rule,
                }
                .into());
            }
        }
    }

    // No written buffer parameter may overlap another buffer parameter (`noalias`).
    let uses: Vec<BufferUse<'_>> = abi
        .params
        .iter()
        .zip(&buffers)
        .filter_map(|(p, b)| match (&p.kind, b) {
            (ParamKind::Buffer { access, .. }, Some(b)) => Some(BufferUse {
                param: &p.name,
                writes: access.writes(),
                address: b.device_address(),
                bytes: b.bytes() as u64,
            }),
            (ParamKind::Buffer { .. }, None) | (ParamKind::Scalar(_), _) => None,
        })
        .collect();
    check_aliasing(who, &uses)?;

    // Lengths against the shape rules.
    for (i, p) in abi.params.iter().enumerate() {
        if let (ParamKind::Buffer { len: Some(rule), .. }, Some(b)) = (&p.kind, buffers[i]) {
            let what = || format!("length of `{}`", p.name);
            let needed = eval_shape(rule, abi, &scalars, who, &what)?;
            if (b.len() as u64) < needed {
                return Err(LaunchError::TooShort {
                    kernel: who.to_string(),
                    param: p.name.clone(),
                    rule: shape_text(rule, abi),
                    values: shape_values(rule, abi, &scalars),
                    needed,
                    found: b.len(),
                }
                .into());
            }
        }
    }

    // Grid.
    let mut grid64 = [0u64; 3];
    for (d, rule) in e.grid.iter().enumerate() {
        grid64[d] = eval_shape(rule, abi, &scalars, who, &|| "grid".to_string())?;
    }
    let rule_text = || e.grid.iter().map(|r| shape_text(r, abi)).collect::<Vec<_>>().join(", ");
    if grid64.iter().any(|&g| g == 0 || g > u32::MAX as u64) {
        return Err(LaunchError::BadGrid {
            kernel: who.to_string(),
            grid: grid64,
            rule: rule_text(),
        }
        .into());
    }
    let grid = grid64.map(|g| g as u32);

    // Workspaces: one per loaded kernel, zero-filled, grown (fresh and zeroed) when a call
    // needs more than it has.
    let unbound = |p: &kiln_ir::package::AbiParam| LaunchError::MissingArg {
        kernel: who.to_string(),
        param: p.name.clone(),
        expected: "an argument bound before the launch is built".into(),
    };
    let mut out = Vec::with_capacity(abi.params.len());
    let mut ws = lk.workspaces.lock().unwrap_or_else(|p| p.into_inner());
    for (i, p) in abi.params.iter().enumerate() {
        out.push(match (&p.kind, p.workspace) {
            (ParamKind::Buffer { elem, len, .. }, true) => {
                let needed = match len {
                    Some(rule) => {
                        let what = || format!("length of workspace `{}`", p.name);
                        eval_shape(rule, abi, &scalars, who, &what)?
                    }
                    None => 1,
                };
                let fits = ws.get(&i).is_some_and(|b| b.len() as u64 >= needed);
                if !fits {
                    let len =
                        usize::try_from(needed.max(1)).map_err(|_| LaunchError::BadShape {
                            kernel: who.to_string(),
                            what: format!("length of workspace `{}`", p.name),
                            rule: len.as_ref().map_or("1".into(), |r| shape_text(r, abi)),
                            detail: format!("{needed} elements do not fit this machine's usize"),
                        })?;
                    ws.insert(i, device.alloc(*elem, len)?);
                }
                KernelArg::Buffer(ws[&i].memory().clone())
            }
            // Both were bound above or refused; a package whose ABI breaks that (a workspace
            // scalar) was refused too, so these are errors, never panics.
            (ParamKind::Buffer { .. }, false) => match buffers[i] {
                Some(b) => KernelArg::Buffer(b.memory().clone()),
                None => return Err(unbound(p).into()),
            },
            (ParamKind::Scalar(_), _) => match scalars[i] {
                Some(s) => KernelArg::Scalar(s),
                None => return Err(unbound(p).into()),
            },
        });
    }
    Ok(PreparedLaunch {
        label: lk.label.clone(),
        variant: lk.variant.clone(),
        code: lk.code.clone(),
        grid,
        block: e.workgroup_size,
        args: out,
        overlap: e.grid_dependency,
        early: lk.early.clone(),
        writes: lk.writes.clone(),
    })
}
