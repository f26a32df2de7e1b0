//! Runtime clips: a [`Clip`](super::Clip) compiled for playback, and their playback.
//!
//! A [`RuntimeClip`] is made once from any clip by the offline compiler
//! ([`crate::offline::compile`], which documents the keyframe reduction and the error
//! budget) and then only played, here:
//!
//! - **Linear keys only.** Translation and scale are lerped, rotations nlerped (after a
//!   hemisphere fix made when a key is loaded).
//! - **Quantized keys.** A rotation key stores the smallest three components of the unit
//!   quaternion (sign chosen so the dropped, largest one is positive) as 16-bit values,
//!   plus the 2-bit index of the dropped component ([`decode_rotation`]); translation and
//!   scale keys store three 16-bit values relative to the track's range (per track minimum
//!   and extent). A track stored as 32-bit floats (when 16 bits could not meet its budget)
//!   keeps 12-byte keys, whose value slot then indexes a side table.
//! - **Keys in the order forward playback needs them.** Key `k` of a track is needed once
//!   the playhead passes key `k − 1`; keys are sorted by that time, so sampling walks a
//!   cursor kept in a per-instance [`RuntimeClipContext`] and decodes each key once, when it
//!   enters. Jumping forward walks the cursor further; jumping backward restarts from the
//!   clip's decoded state at time 0. Any time sequence gives the same result as a fresh
//!   context, bit for bit.
//! - **Structure of arrays.** The context keeps the two active keys of every track decoded
//!   in groups of sixteen joints, so a frame's interpolation runs four joints per
//!   instruction (sixteen on a CPU with AVX-512, chosen at run time) and writes a
//!   [`SoaPose`] directly ([`SoaSampler`]). A group whose tracks have no key after time 0
//!   (constant tracks, as scales usually are) is read from the clip's own start state,
//!   shared by every instance: a crowd's contexts then stream only the groups that move.
//!
//! Every joint of the skeleton is written: channels the source clip does not animate were
//! filled from the skeleton's rest pose when the clip was compiled.
//!
//! ```
//! use anim_core::clip::{Clip, Interpolation, JointTracks, RuntimeClip, SoaSampler, TimePolicy, Track};
//! use anim_core::offline::JointRadii;
//! use anim_core::pose::{JointDesc, Skeleton, SoaPose};
//! use anim_math::{Transform, Vec3};
//!
//! let skeleton = Skeleton::new(vec![
//!     JointDesc::new("root", None, Transform::IDENTITY),
//!     JointDesc::new("tip", Some(0), Transform::from_translation(Vec3::new(0.0, 1.0, 0.0))),
//! ]).unwrap();
//! let mut tracks = JointTracks::new(0);
//! tracks.translation = Some(Track::new(
//!     Interpolation::Linear,
//!     vec![0.0, 0.5, 1.0],
//!     vec![Vec3::zeros(), Vec3::new(0.5, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0)],
//! ).unwrap());
//! let clip = Clip::new("slide", vec![tracks], vec![]).unwrap();
//! let radii = JointRadii::from_skeleton(&skeleton);
//! let runtime = RuntimeClip::compile(&clip, &skeleton, &radii, 0.001).unwrap();
//! // The middle key lies on the line between the others: reduction drops it.
//! assert_eq!(runtime.key_counts(), [2 * 2, 2 * 2, 2 * 2]);
//! let mut context = runtime.new_context();
//! let mut pose = SoaPose::identity(2);
//! runtime.sample_soa(&mut context, 0.25, TimePolicy::Clamp, &mut pose).unwrap();
//! assert!((pose.get(0).unwrap().translation.x - 0.25).abs() < 1e-4);
//! ```

use super::error::ClipError;
use super::interp::{Interp, WIDE, interpolate};
use super::sampler::SoaSampler;
use super::sampler::TimePolicy;
use crate::pose::{Pose, PoseError, SkeletonId, SoaPose};

/// Most joints a runtime clip animates (rotation keys keep the track index in 14 bits).
pub const MAX_JOINTS: usize = 1 << 14;

/// One stored key: 12 bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub(crate) struct Key {
    pub(crate) time: f32,
    /// Track index; for rotations the top two bits hold the dropped component.
    pub(crate) track: u16,
    /// Three 16-bit values, or (wide tracks) an index into the side table in the first two.
    pub(crate) value: [u16; 3],
}

pub(crate) const TRACK_MASK: u16 = (MAX_JOINTS - 1) as u16;

/// What a channel animates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Translation,
    Rotation,
    Scale,
}

/// The keys of one kind of channel (all joints' translations, say) in playback order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Channel {
    pub(crate) keys: Vec<Key>,
    /// Per track: range minimum and step (extent / 65535) for 16-bit vectors.
    pub(crate) min: Vec<[f32; 3]>,
    pub(crate) step: Vec<[f32; 3]>,
    /// Per track: stored as floats in `wide`.
    pub(crate) is_wide: Vec<bool>,
    pub(crate) wide: Vec<[f32; 4]>,
}

impl Channel {
    fn byte_size(&self) -> usize {
        self.keys.len() * size_of::<Key>()
            + (self.min.len() + self.step.len()) * size_of::<[f32; 3]>()
            + self.is_wide.len()
            + self.wide.len() * size_of::<[f32; 4]>()
    }
}

/// A clip compiled for playback (see the [module docs](self)).
///
/// ```
/// use anim_core::clip::{RuntimeClip, SoaSampler, TimePolicy};
/// use anim_core::offline::JointRadii;
/// use anim_core::pose::SoaPose;
/// use anim_core::skin::Skin;
///
/// let m = anim_mannequin::build();
/// let radii = JointRadii::from_skin(&m.skeleton, &Skin::from_skeleton(&m.skeleton), &[&m.mesh])?;
/// let walk = RuntimeClip::compile(m.clip("walk").unwrap(), &m.skeleton, &radii, 0.001)?;
/// let mut context = walk.new_context(); // one per playing character
/// let mut pose = SoaPose::from_pose(m.skeleton.rest_pose());
/// let shown = walk.sample_soa(&mut context, 10.0, TimePolicy::Wrap, &mut pose)?; // a running clock
/// assert!(shown < walk.duration());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeClip {
    name: String,
    duration: f32,
    joints: usize,
    skeleton: SkeletonId,
    tolerance: f32,
    channels: [Channel; 3],
    /// The playback state at time 0 (every track's first keys loaded): what a context is
    /// reset to when playback jumps backward (a loop wraps), instead of reloading them.
    start: Start,
}

/// A context's key state at time 0; see [`RuntimeClip`]'s `start`.
#[derive(Clone, Debug, PartialEq)]
struct Start {
    cursor: [usize; 3],
    translation: Vec<Interp<3>>,
    rotation: Vec<Interp<4>>,
    scale: Vec<Interp<3>>,
    /// Per channel kind (translation, rotation, scale), per group of [`WIDE`] tracks: no
    /// key of the group's tracks comes after the start state (constant tracks: their two
    /// keys are both loaded at time 0). A context's copy of such a group never changes, so
    /// sampling reads the clip's copy here instead, shared by every instance and warm in
    /// cache, and a context never touches its own (a crowd streams less memory).
    fixed: [Vec<bool>; 3],
}

impl Start {
    fn byte_size(&self) -> usize {
        (self.translation.len() + self.scale.len()) * size_of::<Interp<3>>()
            + self.rotation.len() * size_of::<Interp<4>>()
            + self.fixed.iter().map(Vec::len).sum::<usize>()
    }
}

/// Per-instance playback state of one [`RuntimeClip`]: the key cursor of each channel kind
/// and the decoded active keys of every track. One per playing instance; made by
/// [`SoaSampler::new_context`].
#[derive(Clone, Debug)]
pub struct RuntimeClipContext {
    time: f32,
    cursor: [usize; 3],
    translation: Vec<Interp<3>>,
    rotation: Vec<Interp<4>>,
    scale: Vec<Interp<3>>,
    scratch: SoaPose,
    /// Joints of the clip the context was made for.
    joints: usize,
}

impl RuntimeClipContext {
    /// A context with no key loaded, for `groups` lane groups of `joints` joints.
    fn empty(groups: usize, joints: usize) -> Self {
        Self {
            time: f32::NEG_INFINITY,
            cursor: [0; 3],
            translation: vec![Interp::reset([0.0; 3]); groups],
            rotation: vec![Interp::reset([0.0, 0.0, 0.0, 1.0]); groups],
            scale: vec![Interp::reset([1.0; 3]); groups],
            scratch: SoaPose::identity(joints),
            joints,
        }
    }

    /// Back to time 0: a copy of the clip's start state (no key is decoded again).
    fn restore(&mut self, start: &Start) {
        self.time = 0.0;
        self.cursor = start.cursor;
        restore_groups(&mut self.translation, &start.translation, &start.fixed[0]);
        restore_groups(&mut self.rotation, &start.rotation, &start.fixed[1]);
        restore_groups(&mut self.scale, &start.scale, &start.fixed[2]);
    }

    /// Heap bytes held by the context.
    pub fn byte_size(&self) -> usize {
        (self.translation.len() + self.scale.len()) * size_of::<Interp<3>>()
            + self.rotation.len() * size_of::<Interp<4>>()
            + size_of_val(self.scratch.groups())
    }
}

/// Copies the groups that can change ([`Start`]'s `fixed` is false) from the start state.
fn restore_groups<const N: usize>(to: &mut [Interp<N>], from: &[Interp<N>], fixed: &[bool]) {
    for ((to, from), fixed) in to.iter_mut().zip(from).zip(fixed) {
        if !fixed {
            *to = *from;
        }
    }
}

/// Which groups of a channel's tracks have no key after the start state's `cursor`.
fn fixed_groups(channel: &Channel, cursor: usize, groups: usize) -> Vec<bool> {
    let mut fixed = vec![true; groups];
    for key in &channel.keys[cursor..] {
        fixed[usize::from(key.track & TRACK_MASK) / WIDE] = false;
    }
    fixed
}

pub(crate) const INV_SQRT2: f32 = std::f32::consts::FRAC_1_SQRT_2;

/// Decodes [`encode_rotation`](crate::offline::compile::encode_rotation)'s output into a unit quaternion `[x, y, z, w]` whose
/// largest component is positive. Each stored component is within `√2/65535/2` of the
/// source, so the quaternion is within `3.75·10⁻⁵` (`√3·√2/131070·√(1 + 3)`; the largest
/// component is at least ½ and picks up the other three's error times `√3`).
#[inline]
pub fn decode_rotation(largest: u8, v: [u16; 3]) -> [f32; 4] {
    let [a, b, c] = v.map(|x| (f32::from(x) * (2.0 / 65535.0) - 1.0) * INV_SQRT2);
    let d = (1.0 - (a * a + b * b + c * c)).max(0.0).sqrt();
    match largest & 3 {
        0 => [d, a, b, c],
        1 => [a, d, b, c],
        2 => [a, b, d, c],
        _ => [a, b, c, d],
    }
}

impl RuntimeClip {
    /// A runtime clip from compiled channels (the offline compiler's output): decodes the
    /// playback state at time 0 once, the state a wrapping loop restarts from.
    pub(crate) fn from_channels(
        name: String,
        duration: f32,
        skeleton: SkeletonId,
        joints: usize,
        tolerance: f32,
        channels: [Channel; 3],
    ) -> Self {
        let groups = joints.div_ceil(WIDE);
        let mut context = RuntimeClipContext::empty(groups, 0);
        load_keys(&channels, &mut context, 0.0);
        let fixed = [0, 1, 2].map(|c| fixed_groups(&channels[c], context.cursor[c], groups));
        let start = Start {
            cursor: context.cursor,
            translation: context.translation,
            rotation: context.rotation,
            scale: context.scale,
            fixed,
        };
        Self { name, duration, joints, skeleton, tolerance, channels, start }
    }

    /// Name of the source clip.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The skeleton the clip was compiled for.
    pub fn skeleton_id(&self) -> SkeletonId {
        self.skeleton
    }

    /// Joints written by sampling (the skeleton's joint count).
    pub fn joint_count(&self) -> usize {
        self.joints
    }

    /// The tolerance it was compiled for, in metres.
    pub fn tolerance_m(&self) -> f32 {
        self.tolerance
    }

    /// Stored keys of the translation, rotation and scale channels (each track has at least two).
    pub fn key_counts(&self) -> [usize; 3] {
        self.channels.each_ref().map(|c| c.keys.len())
    }

    /// Tracks stored as 32-bit floats because 16 bits could not meet their budget
    /// (translation, rotation, scale).
    pub fn wide_track_counts(&self) -> [usize; 3] {
        self.channels.each_ref().map(|c| c.is_wide.iter().filter(|w| **w).count())
    }

    /// Heap bytes of the clip: keys, per-track headers, the float side table, the
    /// decoded playback state at time 0 (what a wrapping loop restarts from) and the name.
    pub fn byte_size(&self) -> usize {
        self.channels.iter().map(Channel::byte_size).sum::<usize>() + self.start.byte_size() + self.name.len()
    }

    /// Samples at `time` (raw seconds, brought into `[0, duration]` by `policy`) into
    /// `pose`, writing every joint. Returns the time sampled. Allocates nothing.
    ///
    /// # Errors
    /// `time` is not finite, `pose` has another joint count, or the context belongs to
    /// another clip.
    pub fn sample_pose(
        &self,
        context: &mut RuntimeClipContext,
        time: f32,
        policy: TimePolicy,
        pose: &mut Pose,
    ) -> Result<f32, ClipError> {
        if !time.is_finite() {
            return Err(ClipError::NonFiniteTime(time));
        }
        if pose.len() != self.joints {
            return Err(ClipError::JointCount { clip: self.name.clone(), expected: self.joints, got: pose.len() });
        }
        if pose.skeleton_id().is_some_and(|id| id != self.skeleton) {
            return Err(ClipError::Skeleton {
                clip: self.name.clone(),
                source: PoseError::SkeletonMismatch { what: "pose", joints: pose.len() },
            });
        }
        let t = policy.apply(time, self.duration);
        let mut scratch = std::mem::replace(&mut context.scratch, SoaPose::identity(0));
        let r = self.sample_soa(context, t, TimePolicy::Clamp, &mut scratch);
        context.scratch = scratch;
        r?;
        context.scratch.to_pose(pose).expect("scratch pose sized for the clip in new_context");
        Ok(t)
    }

    fn check_context(&self, context: &RuntimeClipContext) -> Result<(), ClipError> {
        let groups = self.joints.div_ceil(WIDE);
        let sized =
            context.translation.len() == groups && context.rotation.len() == groups && context.scale.len() == groups;
        if context.joints != self.joints || !sized {
            return Err(ClipError::CacheMismatch {
                clip: self.name.clone(),
                got: context.joints,
                expected: self.joints,
            });
        }
        Ok(())
    }
}

/// Walks `channel`'s cursor to `t`, decoding each key that enters.
#[inline]
fn advance<const N: usize>(
    channel: &Channel,
    cursor: &mut usize,
    cache: &mut [Interp<N>],
    t: f32,
    decode: impl Fn(&Channel, &Key, usize) -> [f32; N],
) {
    while let Some(key) = channel.keys.get(*cursor) {
        let track = (key.track & TRACK_MASK) as usize;
        let lane = &mut cache[track / WIDE];
        let l = track % WIDE;
        // Key k is needed once the playhead reaches key k − 1, the lane's current next key.
        if lane.t1[l] > t {
            break;
        }
        let value = decode(channel, key, track);
        lane.push(l, key.time, value);
        *cursor += 1;
    }
}

#[inline]
fn decode_vec(channel: &Channel, key: &Key, track: usize) -> [f32; 3] {
    if channel.is_wide[track] {
        let w = channel.wide[wide_index(key)];
        [w[0], w[1], w[2]]
    } else {
        let (m, s) = (channel.min[track], channel.step[track]);
        [0, 1, 2].map(|c| m[c] + f32::from(key.value[c]) * s[c])
    }
}

#[inline]
fn wide_index(key: &Key) -> usize {
    usize::from(key.value[0]) | (usize::from(key.value[1]) << 16)
}

impl SoaSampler for RuntimeClip {
    type Context = RuntimeClipContext;

    fn new_context(&self) -> RuntimeClipContext {
        let mut c = RuntimeClipContext::empty(self.joints.div_ceil(WIDE), self.joints);
        c.restore(&self.start);
        c
    }

    fn duration(&self) -> f32 {
        self.duration
    }

    fn skeleton_id(&self) -> Option<SkeletonId> {
        Some(self.skeleton)
    }

    fn sample_soa(
        &self,
        context: &mut RuntimeClipContext,
        time: f32,
        policy: TimePolicy,
        out: &mut SoaPose,
    ) -> Result<f32, ClipError> {
        if !time.is_finite() {
            return Err(ClipError::NonFiniteTime(time));
        }
        if out.len() != self.joints {
            return Err(ClipError::JointCount { clip: self.name.clone(), expected: self.joints, got: out.len() });
        }
        self.check_context(context)?;
        let t = policy.apply(time, self.duration);
        if t < context.time {
            context.restore(&self.start);
        }
        load_keys(&self.channels, context, t);
        let st = &self.start;
        let group = |g: usize| {
            (
                if st.fixed[0][g] { &st.translation[g] } else { &context.translation[g] },
                if st.fixed[1][g] { &st.rotation[g] } else { &context.rotation[g] },
                if st.fixed[2][g] { &st.scale[g] } else { &context.scale[g] },
            )
        };
        interpolate(group, t, out.groups_mut());
        Ok(t)
    }
}

/// Walks every channel's cursor to `t` (not before the context's time), decoding the
/// keys that enter.
#[inline]
fn load_keys(channels: &[Channel; 3], context: &mut RuntimeClipContext, t: f32) {
    context.time = t;
    let [ct, cr, cs] = channels;
    advance(ct, &mut context.cursor[0], &mut context.translation, t, decode_vec);
    advance(cs, &mut context.cursor[2], &mut context.scale, t, decode_vec);
    let rotation = &mut context.rotation;
    let mut cursor = context.cursor[1];
    while let Some(key) = cr.keys.get(cursor) {
        let track = (key.track & TRACK_MASK) as usize;
        let lane = &mut rotation[track / WIDE];
        let l = track % WIDE;
        if lane.t1[l] > t {
            break;
        }
        let mut q = if cr.is_wide[track] {
            cr.wide[wide_index(key)]
        } else {
            decode_rotation((key.track >> 14) as u8, key.value)
        };
        // Hemisphere fix against the key it follows, so nlerp takes the short way.
        let dot: f32 = (0..4).map(|c| q[c] * lane.v1[c][l]).sum();
        if dot < 0.0 {
            q = q.map(|x| -x);
        }
        lane.push(l, key.time, q);
        cursor += 1;
    }
    context.cursor[1] = cursor;
}
