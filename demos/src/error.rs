//! The demos' error type.

use anim_render_vk::RenderError;

/// Everything a demo can fail with.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The renderer failed.
    #[error(transparent)]
    Render(#[from] RenderError),
    /// The model could not be loaded.
    #[error(transparent)]
    Gltf(#[from] anim_gltf::GltfError),
    /// A pose or palette computation failed.
    #[error(transparent)]
    Pose(#[from] anim_core::pose::PoseError),
    /// Sampling a clip failed.
    #[error(transparent)]
    Clip(#[from] anim_core::clip::ClipError),
    /// CPU skinning failed.
    #[error(transparent)]
    Skinning(#[from] anim_core::skin::SkinningError),
    /// A skeleton built in code was rejected.
    #[error(transparent)]
    Skeleton(#[from] anim_core::pose::SkeletonError),
    /// Blending or adding poses failed (mismatched poses, a non-finite weight).
    #[error(transparent)]
    Blend(#[from] anim_core::blend::BlendError),
    /// The crossfade controller rejected a clip or a time step.
    #[error(transparent)]
    CrossFade(#[from] anim_core::blend::CrossFadeError),
    /// An IK chain, solver, ground or foot-grounding pass failed.
    #[error(transparent)]
    Ik(#[from] anim_ik::IkError),
    /// An animation atlas could not be baked, read or used.
    #[error(transparent)]
    Atlas(#[from] anim_crowd::atlas::AtlasError),
    /// A crowd rejected a character.
    #[error(transparent)]
    Crowd(#[from] anim_crowd::crowd::CrowdError),
    /// Root motion could not be extracted from a clip.
    #[error(transparent)]
    RootMotion(#[from] anim_core::offline::root_motion::RootMotionError),
    /// A humanoid map, rig or retarget failed.
    #[error(transparent)]
    Retarget(#[from] anim_retarget::RetargetError),
    /// A character could not be rigged as a humanoid.
    #[error(transparent)]
    Rig(#[from] anim_retarget::RigError),
    /// A humanoid map file was refused.
    #[error(transparent)]
    MapFile(#[from] anim_retarget::MapFileError),
    /// The window system failed.
    #[error("window: {0}")]
    Window(String),
    /// A command-line value that does not fit the model.
    #[error("{0}")]
    Args(String),
    /// Validation was on and the layer reported warnings or errors.
    #[error("{count} validation message(s), first: {first}")]
    Validation {
        /// How many.
        count: usize,
        /// The first one.
        first: String,
    },
}
