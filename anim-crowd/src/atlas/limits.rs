//! The atlas's size limits and file version, at the bottom of the module (its errors
//! name them).

/// Version of the atlas file format this crate writes and reads.
pub const FILE_VERSION: u32 = 1;

/// Longest string (clip or joint name) an atlas file may hold, in bytes.
pub const MAX_NAME_BYTES: u32 = 64 * 1024;

/// The widest atlas [`AnimAtlas::bake`](super::AnimAtlas::bake) makes and [`AnimAtlas::read_from`](super::AnimAtlas::read_from) accepts, in
/// columns (frames of all clips): the texture width every Vulkan 1.x GPU of the project's
/// targets supports.
pub const MAX_WIDTH: u32 = 16384;

/// The tallest atlas (rows: `joint_count · texels_per_joint`), for the same reason as
/// [`MAX_WIDTH`].
pub const MAX_HEIGHT: u32 = 16384;
