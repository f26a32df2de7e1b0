//! The scenes of the demo binaries (one module each, run by `src/bin/<name>.rs`).

pub mod ch10_cpu_gpu;
pub mod ch10_poses;
pub mod ch12_additive;
pub mod ch12_blend;
pub mod ch12_crossfade;
pub mod ch13_ccd;
pub mod ch13_fabrik;
pub mod ch13_foot_ik;
pub mod ch14_dq_vs_lbs;
pub mod ch15_crowd;
pub mod locomotion;
pub mod retarget;
pub mod seed_bone_texture;
pub mod seed_rigid_box;
pub mod viewer;
