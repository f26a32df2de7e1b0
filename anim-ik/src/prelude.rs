//! The IK types most programs touch, in one import: `use anim_ik::prelude::*;`.

pub use crate::chain::{Constraint, IkChain};
pub use crate::error::IkError;
pub use crate::{CcdSolver, FabrikSolver, FootGrounding, FootSettings, HeightField, Leg, TwoBoneIk};
