//! Entity handles: u32 newtypes indexing the kernel's `PrimaryMap`s.

use cranelift_entity::entity_impl;
use serde::{Deserialize, Serialize};

/// An SSA value: an instruction result or a block parameter.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Value(u32);
entity_impl!(Value, "v");

/// An instruction.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Inst(u32);
entity_impl!(Inst, "inst");

/// A block: a straight list of instructions with parameters. Blocks nest through the
/// structured control-flow ops (`if`, `for`); the kernel body is the entry block.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Block(u32);
entity_impl!(Block, "block");

/// A kernel parameter (buffer or scalar).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Param(u32);
entity_impl!(Param, "arg");

/// A static LDS (shared memory) allocation of the workgroup.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LdsSlot(u32);
entity_impl!(LdsSlot, "lds");

/// A private (per-lane) array.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PrivateSlot(u32);
entity_impl!(PrivateSlot, "priv");
