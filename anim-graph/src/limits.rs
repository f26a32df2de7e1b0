//! The caps the loader and the builder enforce, so that no description (a hostile file
//! included) makes a graph allocate without bound or recurse without bound. Every one is
//! far above what a character needs.

/// Largest graph file, bytes.
pub const MAX_FILE_BYTES: usize = 1 << 20;
/// Deepest nesting of JSON arrays and objects in a file.
pub const MAX_JSON_DEPTH: usize = 64;
/// Longest name, bytes.
pub const MAX_NAME: usize = 128;
/// Most parameters.
pub const MAX_PARAMS: usize = 256;
/// Most nodes.
pub const MAX_NODES: usize = 1024;
/// Most masks, and most entries in one mask.
pub const MAX_MASKS: usize = 64;
/// Most sync groups.
pub const MAX_SYNC_GROUPS: usize = 64;
/// Most points in a blend space (evaluation is quadratic in it).
pub const MAX_POINTS: usize = 64;
/// Most states in one machine.
pub const MAX_STATES: usize = 256;
/// Most transitions out of one state, and most any-state transitions of a machine.
pub const MAX_TRANSITIONS: usize = 64;
/// Most terms in one condition (all of its `all`, `any` and `not` nodes counted).
pub const MAX_CONDITION_TERMS: usize = 64;
/// Deepest nesting of `all`, `any` and `not` in a condition.
pub const MAX_CONDITION_DEPTH: usize = 8;
/// Deepest node tree (a node's children one level below it; nested machines included).
pub const MAX_DEPTH: usize = 32;
/// Most legs of a foot-grounding node.
pub const MAX_LEGS: usize = 4;
/// Most distinct contact curves a graph carries through its nodes.
pub const MAX_CURVES: usize = 8;
/// Longest transition, seconds.
pub const MAX_DURATION: f32 = 60.0;
/// Largest constant clip speed (either sign).
pub const MAX_SPEED: f32 = 100.0;
/// Largest coordinate (blend-space points, IK axes and poles, heights).
pub const MAX_COORD: f32 = 1.0e6;
