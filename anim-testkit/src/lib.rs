//! Test support shared by the workspace's tests and benches, so that each helper exists
//! once: the import-cycle check every library crate runs ([`imports`]), the rule for which
//! SIMD kernels a test must run ([`kernels`]), a deterministic generator ([`rng`]), the
//! shared test models ([`assets`]) and the counting allocator of the no-allocation tests
//! ([`alloc`]).
//!
//! Not published: the library crates take it as a dev-dependency only.

#![warn(missing_docs)]

pub mod alloc;
pub mod assets;
pub mod imports;
pub mod kernels;
pub mod rng;
