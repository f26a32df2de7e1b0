//! The crowd types most programs touch, in one import: `use anim_crowd::prelude::*;`.

pub use crate::atlas::{AnimAtlas, AtlasClip, AtlasSource, BakeSettings, TexelFormat, TextureLayout};
pub use crate::crowd::{CharacterDesc, Crowd, CrowdInstance};
pub use crate::job::{CrowdCharacter, CrowdJob, PaletteOutput};
