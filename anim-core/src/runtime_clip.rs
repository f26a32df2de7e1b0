//! Runtime clips: a [`Clip`] compiled for playback.
//!
//! A [`RuntimeClip`] is built once from any clip (STEP, LINEAR and CUBICSPLINE tracks, any
//! subset of joints) and then only played:
//!
//! - **Linear keys only.** Translation and scale are lerped, rotations nlerped (after a
//!   hemisphere fix made when a key is loaded). STEP tracks become pairs of keys at each
//!   jump (a vanishing interval), CUBICSPLINE tracks (and LINEAR rotations, whose slerp
//!   differs from nlerp) are sampled densely and then reduced.
//! - **Keyframe reduction to a tolerance at the skin**, given in metres (glTF's unit:
//!   `0.001` is one millimetre). A key is dropped when the skinned vertices stay within the
//!   tolerance without it. Each joint gets a *radius*, the farthest its error reaches
//!   ([`JointRadii`]): a rotation error θ moves a vertex by at most `radius·θ`, a relative
//!   scale error Δs by `radius·Δs`, a translation error by its length (times the parent's
//!   scale), all grown by the largest animated scale above the rest scale on the chain.
//!   Errors add down a chain, so joint `j` gets `tolerance / D(j)`, where `D(j)` is
//!   the most moving joints on any root-to-leaf chain through `j`: the sum over any chain
//!   stays below the tolerance. Within a joint the budget is split evenly over the channels
//!   that move; channels that hold one value are stored exactly. First and last keys are
//!   always kept, so looping clips stay continuous.
//! - **Quantized keys.** A rotation key stores the smallest three components of the unit
//!   quaternion (sign chosen so the dropped, largest one is positive) as 16-bit values,
//!   plus the 2-bit index of the dropped component; translation and scale keys store three
//!   16-bit values relative to the track's range (per track minimum and extent). The
//!   quantized values are what reduction measures, so quantization error is inside the
//!   budget. A track that cannot meet its budget at 16 bits (large models at sub-millimetre
//!   tolerances) is stored as 32-bit floats instead, keys still 12 bytes (the value slot
//!   then indexes a side table).
//! - **Keys in the order forward playback needs them.** Key `k` of a track is needed once
//!   the playhead passes key `k − 1`; keys are sorted by that time, so sampling walks a
//!   cursor kept in a per-instance [`RuntimeClipContext`] and decodes each key once, when it
//!   enters. Jumping forward walks the cursor further; jumping backward restarts from the
//!   first key. Any time sequence gives the same result as a fresh context, bit for bit.
//! - **Structure of arrays.** The context keeps the two active keys of every track decoded
//!   in groups of [`LANES`] joints, so a frame's interpolation runs four joints per
//!   instruction and writes a [`SoaPose`] directly ([`SoaSampler`]).
//!
//! Channels the source clip does not animate are filled from the skeleton's rest pose
//! (two keys), so sampling writes every joint.
//!
//! ```
//! use anim_core::runtime_clip::{JointRadii, RuntimeClip};
//! use anim_core::soa::{SoaPose, SoaSampler};
//! use anim_core::{Clip, Interpolation, JointDesc, JointTracks, Skeleton, Track};
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
//! runtime.sample_soa(&mut context, 0.25, &mut pose).unwrap();
//! assert!((pose.get(0).unwrap().translation.x - 0.25).abs() < 1e-4);
//! ```

use crate::soa::{LANES, SoaPose, SoaSampler};
use crate::{Clip, ClipError, Interpolation, Mesh, Pose, Skeleton, Skin, TimePolicy, Track};
use anim_math::{Mat4, Vec3};
use nalgebra::Quaternion;

/// Most joints a runtime clip animates (rotation keys keep the track index in 14 bits).
pub const MAX_JOINTS: usize = 1 << 14;

/// Smallest radius used for a joint (metres): joints with no vertex or child below them
/// still get a finite rotation and scale budget.
pub const MIN_RADIUS: f32 = 0.01;

/// Why a runtime clip could not be compiled.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum RuntimeClipError {
    /// The tolerance is not a positive finite number of metres.
    #[error("tolerance {0} m is not positive and finite")]
    Tolerance(f32),
    /// The skeleton has more joints than a runtime clip can index.
    #[error("{count} joints is more than the {max} a runtime clip supports")]
    TooManyJoints {
        /// Joints in the skeleton.
        count: usize,
        /// The limit ([`MAX_JOINTS`]).
        max: usize,
    },
    /// The radii were computed for a skeleton of another size.
    #[error("joint radii are for {got} joints, the skeleton has {expected}")]
    RadiiMismatch {
        /// Joints the radii cover.
        got: usize,
        /// Joints in the skeleton.
        expected: usize,
    },
    /// A skin's inverse bind matrix cannot be inverted.
    #[error("skin joint {index}: inverse bind matrix is singular")]
    SingularBind {
        /// Index in the skin's joint list.
        index: usize,
    },
    /// The clip does not fit the skeleton.
    #[error(transparent)]
    Clip(#[from] ClipError),
}

/// How far each joint's error reaches at the skin: the error model of [`RuntimeClip`]'s
/// keyframe reduction (see the [module docs](self)).
#[derive(Clone, Debug, PartialEq)]
pub struct JointRadii {
    radius: Vec<f32>,
    parent_scale: Vec<f32>,
}

impl JointRadii {
    /// Radii from the skeleton alone: the farthest descendant joint (in the rest pose), at
    /// least [`MIN_RADIUS`]. Use it when no mesh is at hand; the skin's extent beyond the
    /// last joints is then not accounted for.
    pub fn from_skeleton(skeleton: &Skeleton) -> Self {
        Self::build(skeleton, vec![0.0; skeleton.len()])
    }

    /// Radii from the vertices a skin moves: for each joint, the farthest bind-pose vertex
    /// influenced (with non-zero weight) by the joint or a descendant, measured from the
    /// joint's bind position, and at least the farthest descendant joint.
    ///
    /// # Errors
    /// A singular inverse bind matrix.
    pub fn from_skin(skeleton: &Skeleton, skin: &Skin, meshes: &[&Mesh]) -> Result<Self, RuntimeClipError> {
        let mut own = vec![0.0f32; skeleton.len()];
        let mut bind_pos = Vec::with_capacity(skin.len());
        for (index, ib) in skin.inverse_bind().iter().enumerate() {
            let m = ib.try_inverse().ok_or(RuntimeClipError::SingularBind { index })?;
            bind_pos.push(Vec3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)]));
        }
        for mesh in meshes {
            let Some(inf) = &mesh.influences else { continue };
            let per = inf.per_vertex();
            for (v, p) in mesh.positions.iter().enumerate() {
                for slot in 0..per {
                    let w = inf.weights()[v * per + slot];
                    let s = inf.joints()[v * per + slot] as usize;
                    if w > 0.0 && s < skin.len() {
                        let j = skin.joints()[s];
                        own[j] = own[j].max((p - bind_pos[s]).norm());
                    }
                }
            }
        }
        Ok(Self::build(skeleton, own))
    }

    fn build(skeleton: &Skeleton, own: Vec<f32>) -> Self {
        let n = skeleton.len();
        let mut model = vec![Mat4::identity(); n];
        skeleton.rest_pose().local_to_model(skeleton, &mut model).expect("the rest pose has the skeleton's length");
        let pos = |j: usize| Vec3::new(model[j][(0, 3)], model[j][(1, 3)], model[j][(2, 3)]);
        let mut radius = own;
        for j in (0..n).rev() {
            if let Some(p) = skeleton.parent(j) {
                let reach = radius[j] + (pos(j) - pos(p)).norm();
                radius[p] = radius[p].max(reach);
            }
        }
        let parent_scale = (0..n)
            .map(|j| match skeleton.parent(j) {
                Some(p) => (0..3).map(|c| model[p].fixed_view::<3, 1>(0, c).norm()).fold(0.0f32, f32::max),
                None => 1.0,
            })
            .collect();
        radius.iter_mut().for_each(|r| *r = r.max(MIN_RADIUS));
        Self { radius, parent_scale }
    }

    /// The radius of `joint` in metres (model-space units).
    pub fn radius(&self, joint: usize) -> Option<f32> {
        self.radius.get(joint).copied()
    }

    /// Number of joints covered.
    pub fn len(&self) -> usize {
        self.radius.len()
    }

    /// True when no joint is covered.
    pub fn is_empty(&self) -> bool {
        self.radius.is_empty()
    }
}

/// One stored key: 12 bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Key {
    time: f32,
    /// Track index; for rotations the top two bits hold the dropped component.
    track: u16,
    /// Three 16-bit values, or (wide tracks) an index into the side table in the first two.
    value: [u16; 3],
}

const TRACK_MASK: u16 = (MAX_JOINTS - 1) as u16;

/// What a channel animates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Translation,
    Rotation,
    Scale,
}

/// The keys of one kind of channel (all joints' translations, say) in playback order.
#[derive(Clone, Debug, PartialEq)]
struct Channel {
    keys: Vec<Key>,
    /// Per track: range minimum and step (extent / 65535) for 16-bit vectors.
    min: Vec<[f32; 3]>,
    step: Vec<[f32; 3]>,
    /// Per track: stored as floats in `wide`.
    is_wide: Vec<bool>,
    wide: Vec<[f32; 4]>,
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
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeClip {
    name: String,
    duration: f32,
    joints: usize,
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
}

impl Start {
    fn byte_size(&self) -> usize {
        (self.translation.len() + self.scale.len()) * size_of::<Interp<3>>()
            + self.rotation.len() * size_of::<Interp<4>>()
    }
}

/// The two active keys of [`LANES`] tracks, decoded: `v0` at `t0`, `v1` at `t1`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
struct Interp<const N: usize> {
    t0: [f32; LANES],
    t1: [f32; LANES],
    inv: [f32; LANES],
    v0: [[f32; LANES]; N],
    v1: [[f32; LANES]; N],
}

impl<const N: usize> Interp<N> {
    fn reset(identity: [f32; N]) -> Self {
        let lanes = identity.map(|c| [c; LANES]);
        Self { t0: [0.0; LANES], t1: [f32::NEG_INFINITY; LANES], inv: [0.0; LANES], v0: lanes, v1: lanes }
    }

    /// Shifts lane `l`'s next key to previous and loads `value` at `time` as the next.
    #[inline]
    fn push(&mut self, l: usize, time: f32, value: [f32; N]) {
        let t0 = self.t1[l];
        self.t0[l] = t0;
        self.t1[l] = time;
        self.inv[l] = if time > t0 { 1.0 / (time - t0) } else { 0.0 };
        for (c, v) in value.iter().enumerate() {
            self.v0[c][l] = self.v1[c][l];
            self.v1[c][l] = *v;
        }
    }

    /// Interpolation weights of the four lanes at `t`.
    // Lane-indexed loops over several arrays at once are what vectorizes here.
    #[allow(clippy::needless_range_loop)]
    #[inline(always)]
    fn alpha(&self, t: f32) -> [f32; LANES] {
        let mut a = [0.0; LANES];
        for l in 0..LANES {
            let x = ((t - self.t0[l]) * self.inv[l]).clamp(0.0, 1.0);
            a[l] = if t >= self.t1[l] { 1.0 } else { x };
        }
        a
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
        }
    }

    /// Back to time 0: a copy of the clip's start state (no key is decoded again).
    fn restore(&mut self, start: &Start) {
        self.time = 0.0;
        self.cursor = start.cursor;
        self.translation.copy_from_slice(&start.translation);
        self.rotation.copy_from_slice(&start.rotation);
        self.scale.copy_from_slice(&start.scale);
    }

    /// Heap bytes held by the context.
    pub fn byte_size(&self) -> usize {
        (self.translation.len() + self.scale.len()) * size_of::<Interp<3>>()
            + self.rotation.len() * size_of::<Interp<4>>()
            + size_of_val(self.scratch.groups())
    }
}

const INV_SQRT2: f32 = std::f32::consts::FRAC_1_SQRT_2;

/// Smallest-three encoding of a unit quaternion `[x, y, z, w]`: the dropped (largest)
/// component's index and the other three, each in `[-1/√2, 1/√2]`, as 16-bit values.
pub fn encode_rotation(q: [f32; 4]) -> (u8, [u16; 3]) {
    let mut largest = 0;
    for c in 1..4 {
        if q[c].abs() > q[largest].abs() {
            largest = c;
        }
    }
    let sign = if q[largest] < 0.0 { -1.0 } else { 1.0 };
    let mut out = [0u16; 3];
    let mut k = 0;
    for (c, v) in q.iter().enumerate() {
        if c != largest {
            let u = ((v * sign / INV_SQRT2) * 0.5 + 0.5).clamp(0.0, 1.0);
            out[k] = (u * 65535.0).round() as u16;
            k += 1;
        }
    }
    (largest as u8, out)
}

/// Decodes [`encode_rotation`]'s output into a unit quaternion `[x, y, z, w]` whose
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
    /// Compiles `clip` for `skeleton`, dropping keys while the skinned error (as `radii`
    /// predicts it) stays within `tolerance_m` metres (`0.001` = 1 mm).
    ///
    /// # Errors
    /// A tolerance that is not positive and finite, radii for another skeleton, a clip
    /// that animates a joint the skeleton lacks, or more than [`MAX_JOINTS`] joints.
    pub fn compile(
        clip: &Clip,
        skeleton: &Skeleton,
        radii: &JointRadii,
        tolerance_m: f32,
    ) -> Result<Self, RuntimeClipError> {
        if !(tolerance_m.is_finite() && tolerance_m > 0.0) {
            return Err(RuntimeClipError::Tolerance(tolerance_m));
        }
        let n = skeleton.len();
        if n > MAX_JOINTS {
            return Err(RuntimeClipError::TooManyJoints { count: n, max: MAX_JOINTS });
        }
        if radii.len() != n {
            return Err(RuntimeClipError::RadiiMismatch { got: radii.len(), expected: n });
        }
        clip.check_joints(n)?;
        let duration = clip.duration();
        let mut by_joint: Vec<Option<&crate::JointTracks>> = vec![None; n];
        for jt in clip.joint_tracks() {
            by_joint[jt.joint] = Some(jt);
        }
        let rest = skeleton.rest_pose().locals();
        // Which channels move: only those share the error budget.
        let moving: Vec<[bool; 3]> = by_joint
            .iter()
            .map(|jt| {
                jt.map_or([false; 3], |jt| {
                    [
                        jt.translation.as_ref().is_some_and(|t| t.values().iter().any(|v| v != &t.values()[0])),
                        jt.rotation.as_ref().is_some_and(|t| t.values().iter().any(|v| v != &t.values()[0])),
                        jt.scale.as_ref().is_some_and(|t| t.values().iter().any(|v| v != &t.values()[0])),
                    ]
                })
            })
            .collect();
        // Errors add down a chain of moving joints: joint j gets tolerance / (the most
        // moving joints on any root-to-leaf chain through j).
        let mut depth = vec![0u32; n];
        for j in 0..n {
            let own = u32::from(moving[j].iter().any(|m| *m));
            depth[j] = skeleton.parent(j).map_or(0, |p| depth[p]) + own;
        }
        let mut chain = depth.clone();
        for j in (0..n).rev() {
            if let Some(p) = skeleton.parent(j) {
                chain[p] = chain[p].max(chain[j]);
            }
        }
        // Radii are measured in the rest pose; animated scale above the rest scale
        // stretches everything below a joint, so errors there reach farther.
        let mut growth = vec![1.0f32; n];
        for j in 0..n {
            let rest_scale = rest[j].scale.amax().max(1e-6);
            let own = by_joint[j].and_then(|t| t.scale.as_ref()).map_or(1.0, |t| {
                (0..t.times().len()).map(|k| t.key_value(k).amax() / rest_scale).fold(1.0f32, f32::max)
            });
            growth[j] = skeleton.parent(j).map_or(1.0, |p| growth[p]) * own;
        }
        let kinds = [Kind::Translation, Kind::Rotation, Kind::Scale];
        let channels = kinds.map(|kind| {
            let mut tracks = Vec::with_capacity(n);
            for j in 0..n {
                let moving_channels = moving[j].iter().filter(|m| **m).count().max(1);
                let joint_budget = tolerance_m / chain[j].max(1) as f32 / moving_channels as f32;
                // A channel that does not move gets no budget: it is stored exactly.
                let budget = if moving[j][kind as usize] { joint_budget } else { 0.0 };
                let jt = by_joint[j];
                let source = match kind {
                    Kind::Translation => Source::from_vec(jt.and_then(|t| t.translation.as_ref()), rest[j].translation),
                    Kind::Rotation => Source::from_rot(jt.and_then(|t| t.rotation.as_ref()), &rest[j].rotation),
                    Kind::Scale => Source::from_vec(jt.and_then(|t| t.scale.as_ref()), rest[j].scale),
                };
                let parent_growth = skeleton.parent(j).map_or(1.0, |p| growth[p]);
                let factor = match kind {
                    Kind::Translation => radii.parent_scale[j] * parent_growth,
                    Kind::Rotation | Kind::Scale => radii.radius[j] * growth[j],
                };
                tracks.push(compile_track(&source, &Metric { kind, factor, budget }, duration));
            }
            assemble(kind, tracks)
        });
        // Playback state at time 0, the same keys a fresh context would load there.
        let mut context = RuntimeClipContext::empty(n.div_ceil(LANES), 0);
        load_keys(&channels, &mut context, 0.0);
        let start = Start {
            cursor: context.cursor,
            translation: context.translation,
            rotation: context.rotation,
            scale: context.scale,
        };
        Ok(Self { name: clip.name().to_owned(), duration, joints: n, tolerance: tolerance_m, channels, start })
    }

    /// Name of the source clip.
    pub fn name(&self) -> &str {
        &self.name
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
            return Err(ClipError::JointOutOfRange { clip: self.name.clone(), joint: self.joints, count: pose.len() });
        }
        let t = policy.apply(time, self.duration);
        let mut scratch = std::mem::replace(&mut context.scratch, SoaPose::identity(0));
        let r = self.sample_soa(context, t, &mut scratch);
        context.scratch = scratch;
        r?;
        context.scratch.to_pose(pose).expect("scratch pose sized for the clip in new_context");
        Ok(t)
    }

    fn check_context(&self, context: &RuntimeClipContext) -> Result<(), ClipError> {
        let groups = self.joints.div_ceil(LANES);
        if context.translation.len() != groups || context.rotation.len() != groups || context.scale.len() != groups {
            return Err(ClipError::CacheMismatch {
                clip: self.name.clone(),
                got: context.translation.len() * LANES,
                expected: groups * LANES,
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
        let lane = &mut cache[track / LANES];
        let l = track % LANES;
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
        let mut c = RuntimeClipContext::empty(self.joints.div_ceil(LANES), self.joints);
        c.restore(&self.start);
        c
    }

    fn duration(&self) -> f32 {
        self.duration
    }

    fn sample_soa(&self, context: &mut RuntimeClipContext, time: f32, out: &mut SoaPose) -> Result<(), ClipError> {
        if !time.is_finite() {
            return Err(ClipError::NonFiniteTime(time));
        }
        if out.len() < self.joints {
            return Err(ClipError::JointOutOfRange {
                clip: self.name.clone(),
                joint: self.joints - 1,
                count: out.len(),
            });
        }
        self.check_context(context)?;
        let t = time.clamp(0.0, self.duration);
        if t < context.time {
            context.restore(&self.start);
        }
        load_keys(&self.channels, context, t);
        interpolate(context, t, out.groups_mut());
        Ok(())
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
        let lane = &mut rotation[track / LANES];
        let l = track % LANES;
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

/// The per-frame part: lerp and nlerp of every group's active keys.
// Lane-indexed loops over several arrays at once are what vectorizes here.
#[allow(clippy::needless_range_loop)]
#[inline]
fn interpolate(context: &RuntimeClipContext, t: f32, out: &mut [crate::soa::SoaTransform]) {
    let groups = context.translation.iter().zip(&context.rotation).zip(&context.scale);
    for (((tr, ro), sc), o) in groups.zip(out.iter_mut()) {
        interpolate_group(tr, ro, sc, t, o);
    }
}

/// One lane group of [`interpolate`]. Kept out of line: inlined, the compiler vectorizes
/// the loop over groups instead of the lanes (four groups at a time, gathering lanes),
/// which measured slower than this per-group body, whose every operation is one
/// four-lane instruction.
#[allow(clippy::needless_range_loop)]
#[inline(never)]
fn interpolate_group(tr: &Interp<3>, ro: &Interp<4>, sc: &Interp<3>, t: f32, o: &mut crate::soa::SoaTransform) {
    let a = tr.alpha(t);
    for c in 0..3 {
        for l in 0..LANES {
            o.translation[c][l] = tr.v0[c][l] * (1.0 - a[l]) + tr.v1[c][l] * a[l];
        }
    }
    let a = sc.alpha(t);
    for c in 0..3 {
        for l in 0..LANES {
            o.scale[c][l] = sc.v0[c][l] * (1.0 - a[l]) + sc.v1[c][l] * a[l];
        }
    }
    let a = ro.alpha(t);
    let mut q = [[0.0f32; LANES]; 4];
    let mut n2 = [0.0f32; LANES];
    for c in 0..4 {
        for l in 0..LANES {
            q[c][l] = ro.v0[c][l] * (1.0 - a[l]) + ro.v1[c][l] * a[l];
            n2[l] += q[c][l] * q[c][l];
        }
    }
    let mut inv = [0.0f32; LANES];
    for l in 0..LANES {
        inv[l] = 1.0 / n2[l].sqrt();
    }
    for c in 0..4 {
        for l in 0..LANES {
            o.rotation[c][l] = q[c][l] * inv[l];
        }
    }
}

// ---------------------------------------------------------------------------------------
// Compilation.

/// A channel's exact source: a track, or a constant (rest) value.
enum Source<'a> {
    Vec(Option<&'a Track<Vec3>>, Vec3),
    Rot(Option<&'a Track<Quaternion<f32>>>, [f32; 4]),
}

impl<'a> Source<'a> {
    fn from_vec(track: Option<&'a Track<Vec3>>, rest: Vec3) -> Self {
        Source::Vec(track, rest)
    }

    fn from_rot(track: Option<&'a Track<Quaternion<f32>>>, rest: &anim_math::Quat) -> Self {
        let c = rest.coords;
        Source::Rot(track, [c[0], c[1], c[2], c[3]])
    }

    /// The exact value at `t`.
    fn sample(&self, t: f32) -> [f32; 4] {
        match self {
            Source::Vec(Some(tr), _) => {
                let v = tr.sample(t);
                [v.x, v.y, v.z, 0.0]
            }
            Source::Vec(None, r) => [r.x, r.y, r.z, 0.0],
            Source::Rot(Some(tr), _) => {
                let c = tr.sample(t).coords;
                [c[0], c[1], c[2], c[3]]
            }
            Source::Rot(None, r) => *r,
        }
    }

    /// Samples `(a, b)` at `pieces` even steps (pushing the inner ones), each bisected
    /// further while its midpoint strays from the chord by more than a quarter of the budget
    /// (at most 8 levels), so the candidates can meet the budget.
    fn pieces(&self, a: f32, b: f32, pieces: usize, metric: &Metric, out: &mut Vec<(f32, [f32; 4])>) {
        let mut prev = (a, self.sample(a));
        for i in 1..=pieces {
            let t = if i == pieces { b } else { a + (b - a) * i as f32 / pieces as f32 };
            let next = (t, self.sample(t));
            self.refine(prev, next, metric, 8, out);
            if i < pieces {
                out.push(next);
            }
            prev = next;
        }
    }

    fn refine(
        &self,
        p: (f32, [f32; 4]),
        q: (f32, [f32; 4]),
        metric: &Metric,
        depth: u32,
        out: &mut Vec<(f32, [f32; 4])>,
    ) {
        if depth == 0 || metric.budget <= 0.0 {
            return;
        }
        let m = 0.5 * (p.0 + q.0);
        let exact = self.sample(m);
        if metric.error(&lerp(metric.kind, &p.1, &q.1, 0.5), &exact) <= 0.25 * metric.budget {
            return;
        }
        self.refine(p, (m, exact), metric, depth - 1, out);
        out.push((m, exact));
        self.refine((m, exact), q, metric, depth - 1, out);
    }

    /// Candidate linear keys `(time, value)` covering `[0, duration]`, before reduction.
    fn candidates(&self, duration: f32, metric: &Metric) -> Vec<(f32, [f32; 4])> {
        let mut out = Vec::new();
        let (times, interpolation, dense_rot) = match self {
            Source::Vec(Some(tr), _) => (tr.times(), tr.interpolation(), false),
            Source::Rot(Some(tr), _) => (tr.times(), tr.interpolation(), true),
            _ => {
                let v = self.sample(0.0);
                return vec![(0.0, v), (duration, v)];
            }
        };
        let value_at_key = |k: usize| self.sample(times[k]);
        if times[0] > 0.0 {
            out.push((0.0, value_at_key(0)));
        }
        for k in 0..times.len() {
            if k > 0 {
                let (a, b) = (times[k - 1], times[k]);
                match interpolation {
                    Interpolation::Step => out.push((b, value_at_key(k - 1))),
                    Interpolation::Linear if dense_rot => {
                        let (p, q) = (value_at_key(k - 1), value_at_key(k));
                        let dot = (0..4).map(|c| p[c] * q[c]).sum::<f32>().abs().min(1.0);
                        // Pieces of at most 2° to start with, refined where needed.
                        let angle = 2.0 * dot.acos();
                        let pieces = (angle / 2f32.to_radians()).ceil().max(1.0) as usize;
                        self.pieces(a, b, pieces, metric, &mut out);
                    }
                    Interpolation::CubicSpline => {
                        let pieces = ((b - a) * 240.0).ceil().max(4.0) as usize;
                        self.pieces(a, b, pieces, metric, &mut out);
                    }
                    Interpolation::Linear => {}
                }
            }
            out.push((times[k], value_at_key(k)));
        }
        let last = *out.last().expect("a track has at least one key");
        if last.0 < duration {
            out.push((duration, last.1));
        }
        if out.len() == 1 {
            out.push((duration, last.1));
        }
        out
    }
}

/// How a channel's error is measured at the skin, and its budget (metres).
struct Metric {
    kind: Kind,
    factor: f32,
    budget: f32,
}

impl Metric {
    /// Skin error of `approx` against `exact`.
    fn error(&self, approx: &[f32; 4], exact: &[f32; 4]) -> f32 {
        match self.kind {
            Kind::Translation => {
                let d = (0..3).map(|c| (approx[c] - exact[c]).powi(2)).sum::<f32>().sqrt();
                d * self.factor
            }
            Kind::Scale => {
                let rel = (0..3).map(|c| (approx[c] - exact[c]).abs() / exact[c].abs().max(1e-6)).fold(0.0, f32::max);
                rel * self.factor
            }
            Kind::Rotation => {
                let minus = (0..4).map(|c| (approx[c] - exact[c]).powi(2)).sum::<f32>().sqrt();
                let plus = (0..4).map(|c| (approx[c] + exact[c]).powi(2)).sum::<f32>().sqrt();
                let chord = minus.min(plus);
                4.0 * (chord * 0.5).min(1.0).asin() * self.factor
            }
        }
    }
}

/// How a track's values are stored.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Storage {
    /// 16-bit vectors relative to `min` with `step`; 16-bit smallest-three rotations.
    Narrow { min: [f32; 3], step: [f32; 3] },
    /// 32-bit floats.
    Wide,
}

impl Storage {
    fn for_values(kind: Kind, values: &[(f32, [f32; 4])]) -> Self {
        if kind == Kind::Rotation {
            return Storage::Narrow { min: [0.0; 3], step: [0.0; 3] };
        }
        let mut lo = [f32::INFINITY; 3];
        let mut hi = [f32::NEG_INFINITY; 3];
        for (_, v) in values {
            for c in 0..3 {
                lo[c] = lo[c].min(v[c]);
                hi[c] = hi[c].max(v[c]);
            }
        }
        Storage::Narrow { min: lo, step: [0, 1, 2].map(|c| (hi[c] - lo[c]) / 65535.0) }
    }

    /// The stored form of `v` (16-bit codes, or the floats).
    fn encode(&self, kind: Kind, v: &[f32; 4]) -> (u8, [u16; 3]) {
        match (self, kind) {
            (Storage::Wide, _) => (0, [0; 3]),
            (Storage::Narrow { .. }, Kind::Rotation) => encode_rotation(*v),
            (Storage::Narrow { min, step }, _) => (
                0,
                [0, 1, 2].map(|c| {
                    if step[c] > 0.0 { ((v[c] - min[c]) / step[c]).round().clamp(0.0, 65535.0) as u16 } else { 0 }
                }),
            ),
        }
    }

    /// What the runtime decodes for `v`.
    fn round_trip(&self, kind: Kind, v: &[f32; 4]) -> [f32; 4] {
        match (self, kind) {
            (Storage::Wide, _) => *v,
            (Storage::Narrow { .. }, Kind::Rotation) => {
                let (largest, code) = encode_rotation(*v);
                decode_rotation(largest, code)
            }
            (Storage::Narrow { min, step }, _) => {
                let (_, code) = self.encode(kind, v);
                let d = [0, 1, 2].map(|c| min[c] + f32::from(code[c]) * step[c]);
                [d[0], d[1], d[2], 0.0]
            }
        }
    }
}

/// A reduced track, ready to be stored.
struct Compiled {
    storage: Storage,
    keys: Vec<(f32, [f32; 4])>,
}

/// Linear (nlerp for rotations) interpolation between decoded keys, as the runtime does.
fn lerp(kind: Kind, a: &[f32; 4], b: &[f32; 4], s: f32) -> [f32; 4] {
    let mut b = *b;
    if kind == Kind::Rotation && (0..4).map(|c| a[c] * b[c]).sum::<f32>() < 0.0 {
        b = b.map(|x| -x);
    }
    let mut r = [0, 1, 2, 3].map(|c| a[c] * (1.0 - s) + b[c] * s);
    if kind == Kind::Rotation {
        let n = r.iter().map(|x| x * x).sum::<f32>().sqrt();
        r = r.map(|x| x / n);
    }
    r
}

fn compile_track(source: &Source, metric: &Metric, duration: f32) -> Compiled {
    let candidates = source.candidates(duration, metric);
    // Check points: every candidate time and the midpoints between them, with exact values.
    let mut checks: Vec<(f32, [f32; 4])> = Vec::with_capacity(candidates.len() * 2);
    for (i, (t, _)) in candidates.iter().enumerate() {
        if i > 0 {
            let p = candidates[i - 1].0;
            if *t > p {
                let m = 0.5 * (p + t);
                checks.push((m, source.sample(m)));
            }
        }
        if checks.last().is_none_or(|c| c.0 < *t) {
            checks.push((*t, source.sample(*t)));
        }
    }
    let narrow = Storage::for_values(metric.kind, &candidates);
    let (keys, err) = reduce(&candidates, &checks, metric, &narrow);
    if err <= metric.budget {
        return Compiled { storage: narrow, keys };
    }
    let (keys, _) = reduce(&candidates, &checks, metric, &Storage::Wide);
    Compiled { storage: Storage::Wide, keys }
}

/// Greedy reduction: from each kept key, the farthest next candidate whose segment keeps
/// every check point within budget. Returns the kept keys and the largest error seen.
fn reduce(
    candidates: &[(f32, [f32; 4])],
    checks: &[(f32, [f32; 4])],
    metric: &Metric,
    storage: &Storage,
) -> (Vec<(f32, [f32; 4])>, f32) {
    let kind = metric.kind;
    let decoded: Vec<[f32; 4]> = candidates.iter().map(|(_, v)| storage.round_trip(kind, v)).collect();
    // Largest error over the check points in [t_i, t_j) of the segment i → j.
    let segment_error = |i: usize, j: usize| -> f32 {
        let (ti, tj) = (candidates[i].0, candidates[j].0);
        if tj <= ti {
            return 0.0;
        }
        let start = checks.partition_point(|c| c.0 < ti);
        let mut worst = 0.0f32;
        for (t, exact) in checks[start..].iter().take_while(|c| c.0 < tj) {
            let v = lerp(kind, &decoded[i], &decoded[j], (t - ti) / (tj - ti));
            worst = worst.max(metric.error(&v, exact));
        }
        worst
    };
    let m = candidates.len();
    let mut kept = vec![0usize];
    let mut worst = 0.0f32;
    let mut i = 0;
    while i + 1 < m {
        let mut best = i + 1;
        let mut best_err = segment_error(i, i + 1);
        let mut j = i + 2;
        while j < m {
            let e = segment_error(i, j);
            if e > metric.budget {
                break;
            }
            best = j;
            best_err = e;
            j += 1;
        }
        worst = worst.max(best_err);
        kept.push(best);
        i = best;
    }
    // The last key holds from its time to the end.
    let (tl, exact) = checks.last().expect("at least one check point");
    let _ = tl;
    worst = worst.max(metric.error(&decoded[m - 1], exact));
    (kept.iter().map(|&k| candidates[k]).collect(), worst)
}

/// Sorts every track's keys by the time forward playback needs them and encodes them.
fn assemble(kind: Kind, tracks: Vec<Compiled>) -> Channel {
    let n = tracks.len();
    let mut order: Vec<(f32, usize, usize)> = Vec::new();
    for (track, c) in tracks.iter().enumerate() {
        for k in 0..c.keys.len() {
            let needed = if k == 0 { f32::NEG_INFINITY } else { c.keys[k - 1].0 };
            order.push((needed, track, k));
        }
    }
    // Stable by (needed time, track, key): a track's keys keep their order.
    order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut channel = Channel {
        keys: Vec::with_capacity(order.len()),
        min: Vec::with_capacity(n),
        step: Vec::with_capacity(n),
        is_wide: Vec::with_capacity(n),
        wide: Vec::new(),
    };
    if kind == Kind::Rotation {
        // Rotations need no range header.
        channel.min = Vec::new();
        channel.step = Vec::new();
    }
    for c in &tracks {
        match c.storage {
            Storage::Narrow { min, step } if kind != Kind::Rotation => {
                channel.min.push(min);
                channel.step.push(step);
            }
            Storage::Wide if kind != Kind::Rotation => {
                channel.min.push([0.0; 3]);
                channel.step.push([0.0; 3]);
            }
            _ => {}
        }
        channel.is_wide.push(c.storage == Storage::Wide);
    }
    for (_, track, k) in order {
        let c = &tracks[track];
        let (time, v) = c.keys[k];
        let key = match c.storage {
            Storage::Wide => {
                let index = channel.wide.len();
                let value = if kind == Kind::Rotation {
                    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                    v.map(|x| x / n)
                } else {
                    v
                };
                channel.wide.push(value);
                Key { time, track: track as u16, value: [index as u16, (index >> 16) as u16, 0] }
            }
            Storage::Narrow { .. } => {
                let (largest, value) = c.storage.encode(kind, &v);
                Key { time, track: track as u16 | (u16::from(largest) << 14), value }
            }
        };
        channel.keys.push(key);
    }
    channel
}

/// The largest distance between skinned vertices (linear blend, positions) posed by exact
/// sampling of `clip` and by `runtime`, over `times` (seconds, clamped): what
/// [`RuntimeClip::compile`]'s tolerance bounds. Unanimated channels come from the rest
/// pose on both sides. For reports and tools; allocates its buffers.
///
/// # Errors
/// The clip does not fit the skeleton, or a mesh does not fit the skin.
pub fn skin_deviation(
    clip: &Clip,
    runtime: &RuntimeClip,
    skeleton: &Skeleton,
    skin: &Skin,
    meshes: &[&Mesh],
    times: &[f32],
) -> Result<f32, crate::SkinningError> {
    use crate::skinning::{NormalMode, SkinningInput, SkinningOutput, linear_blend};
    let n = skeleton.len();
    let mut model = vec![Mat4::identity(); n];
    let mut palette = vec![Mat4::identity(); skin.len()];
    let mut exact: Vec<Vec<Vec3>> = meshes.iter().map(|m| vec![Vec3::zeros(); m.vertex_count()]).collect();
    let mut approx = exact.clone();
    let mut pose = skeleton.rest_pose().clone();
    let mut ctx = runtime.new_context();
    let mut worst = 0.0f32;
    let mut skin_into = |pose: &Pose, out: &mut [Vec<Vec3>]| -> Result<(), crate::SkinningError> {
        pose.local_to_model(skeleton, &mut model).map_err(|e| crate::SkinningError::Layout(e.to_string()))?;
        crate::palette::skinning_matrices(&model, skin, &mut palette)
            .map_err(|e| crate::SkinningError::Layout(e.to_string()))?;
        for (mesh, o) in meshes.iter().zip(out.iter_mut()) {
            let Some(influences) = &mesh.influences else { continue };
            let input = SkinningInput { influences, positions: &mesh.positions, normals: None };
            linear_blend(&input, &palette, NormalMode::Direct, &mut SkinningOutput { positions: o, normals: None })?;
        }
        Ok(())
    };
    for &t in times {
        pose.locals_mut().copy_from_slice(skeleton.rest_pose().locals());
        clip.sample(t, TimePolicy::Clamp, &mut pose).map_err(|e| crate::SkinningError::Layout(e.to_string()))?;
        skin_into(&pose, &mut exact)?;
        runtime
            .sample_pose(&mut ctx, t, TimePolicy::Clamp, &mut pose)
            .map_err(|e| crate::SkinningError::Layout(e.to_string()))?;
        skin_into(&pose, &mut approx)?;
        for (e, a) in exact.iter().zip(&approx) {
            for (p, q) in e.iter().zip(a) {
                worst = worst.max((p - q).norm());
            }
        }
    }
    Ok(worst)
}
