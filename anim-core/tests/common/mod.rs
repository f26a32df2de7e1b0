//! Helpers shared by anim-core's test files.

pub mod kernels;
