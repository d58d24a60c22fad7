//! Shape rules (`ceil(rows*cols/32)+1`) of an object's ABI, evaluated with a call's scalars:
//! buffer lengths, workspace lengths and the grid all go through [`eval_shape`], the one place
//! a launch evaluates a [`ShapeExpr`].

use super::LaunchError;
use crate::value::Scalar;
use cranelift_entity::EntityRef;
use kiln_ir::package::Abi;
use kiln_ir::ShapeExpr;

/// `ceil(rows*cols/32)+1`, with the ABI's parameter names.
pub(crate) fn shape_text(e: &ShapeExpr, abi: &Abi) -> String {
    e.text(|p| abi.params.get(p.index()).map_or(format!("{p}"), |p| p.name.clone()))
}

/// Evaluates a shape rule with the call's scalars. `what` names the rule in an error (built only
/// then: this runs on every launch).
pub(crate) fn eval_shape(
    e: &ShapeExpr,
    abi: &Abi,
    scalars: &[Option<Scalar>],
    who: &str,
    what: &dyn Fn() -> String,
) -> Result<u64, LaunchError> {
    let bad = |detail: String| LaunchError::BadShape {
        kernel: who.to_string(),
        what: what(),
        rule: shape_text(e, abi),
        detail,
    };
    e.try_eval(
        |f| {
            let i = f.index();
            let p =
                abi.params.get(i).ok_or_else(|| bad(format!("parameter #{i} does not exist")))?;
            let v = scalars
                .get(i)
                .copied()
                .flatten()
                .ok_or_else(|| bad(format!("`{}` is not a scalar parameter", p.name)))?;
            v.as_shape().ok_or_else(|| bad(format!("{}={v} is not a non-negative integer", p.name)))
        },
        || bad("overflows u64".into()),
    )
}

/// `n=100, k=4`: the scalars a shape rule reads, for messages.
pub(crate) fn shape_values(e: &ShapeExpr, abi: &Abi, scalars: &[Option<Scalar>]) -> String {
    let v: Vec<String> = e
        .factors
        .iter()
        .filter_map(|f| {
            Some(format!(
                "{}={}",
                abi.params.get(f.index())?.name,
                scalars.get(f.index())?.as_ref()?
            ))
        })
        .collect();
    if v.is_empty() {
        "no scalars".into()
    } else {
        v.join(", ")
    }
}
