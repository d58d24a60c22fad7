//! The caller's side of a launch: named arguments, and what a launch ran.

use crate::device::Buffer;
use crate::value::Scalar;
use std::borrow::Cow;

/// One named argument.
#[derive(Clone, Debug)]
pub enum ArgValue<'a> {
    /// A device buffer.
    Buffer(&'a Buffer),
    /// A typed scalar.
    Scalar(Scalar),
}

/// Named arguments of a launch.
#[derive(Clone, Debug, Default)]
pub struct Args<'a> {
    pub(crate) items: Vec<(Cow<'a, str>, ArgValue<'a>)>,
}

impl<'a> Args<'a> {
    /// No arguments.
    pub fn new() -> Args<'a> {
        Args::default()
    }

    /// Adds a buffer argument.
    pub fn buffer(mut self, name: impl Into<Cow<'a, str>>, b: &'a Buffer) -> Args<'a> {
        self.items.push((name.into(), ArgValue::Buffer(b)));
        self
    }

    /// Adds a scalar argument (its Rust type is its ABI type: `5u32` is a `u32`).
    pub fn scalar(mut self, name: impl Into<Cow<'a, str>>, v: impl Into<Scalar>) -> Args<'a> {
        self.items.push((name.into(), ArgValue::Scalar(v.into())));
        self
    }

    /// The argument named `name`.
    pub fn get(&self, name: &str) -> Option<&ArgValue<'a>> {
        self.items.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The scalar argument named `name`.
    pub fn scalar_value(&self, name: &str) -> Option<Scalar> {
        match self.get(name)? {
            ArgValue::Scalar(s) => Some(*s),
            ArgValue::Buffer(_) => None,
        }
    }

    /// Every argument, in the order given.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ArgValue<'a>)> {
        self.items.iter().map(|(n, v)| (n.as_ref(), v))
    }
}

/// What a launch ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launched {
    /// The variant the router chose.
    pub variant: String,
    /// The grid, in workgroups.
    pub grid: [u32; 3],
}
