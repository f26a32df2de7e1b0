//! The runtime-clip compiler: a [`Clip`] turned into a [`RuntimeClip`] for playback
//! ([`crate::clip::runtime`] holds the format and the per-frame sampling).
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
//!   cursor kept in a per-instance [`RuntimeClipContext`](crate::clip::RuntimeClipContext) and decodes each key once, when it
//!   enters. Jumping forward walks the cursor further; jumping backward restarts from the
//!   first key. Any time sequence gives the same result as a fresh context, bit for bit.
//! - **Structure of arrays.** The context keeps the two active keys of every track decoded
//!   in groups of [`LANES`](crate::pose::LANES) joints, so a frame's interpolation runs four joints per
//!   instruction and writes a [`SoaPose`](crate::pose::SoaPose) directly ([`crate::clip::SoaSampler`]).
//!
//! Channels the source clip does not animate are filled from the skeleton's rest pose
//! (two keys), so sampling writes every joint.
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

use crate::clip::runtime::{Channel, INV_SQRT2, Key, Kind, MAX_JOINTS, decode_rotation};
use crate::clip::track::{TINY, flush_tiny};
use crate::clip::{Clip, ClipError, Interpolation, JointTracks, RuntimeClip, SoaSampler, TimePolicy, Track};
use crate::pose::{Pose, PoseError, Skeleton, SkeletonId};
use crate::skin::skinning::{NormalMode, SkinningInput, SkinningOutput, linear_blend};
use crate::skin::{Mesh, Skin, SkinningError, palette};
use anim_math::{Mat4, Vec3};
use nalgebra::Quaternion;

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
    /// The skin or the radii belong to another skeleton.
    #[error(transparent)]
    Skeleton(#[from] PoseError),
}

/// How far each joint's error reaches at the skin: the error model of [`RuntimeClip`]'s
/// keyframe reduction (see the [module docs](self)).
#[derive(Clone, Debug, PartialEq)]
pub struct JointRadii {
    radius: Vec<f32>,
    parent_scale: Vec<f32>,
    skeleton: SkeletonId,
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
    /// A skin made for another skeleton, or a singular inverse bind matrix.
    pub fn from_skin(skeleton: &Skeleton, skin: &Skin, meshes: &[&Mesh]) -> Result<Self, RuntimeClipError> {
        skin.check_skeleton(skeleton)?;
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
        Self { radius, parent_scale, skeleton: skeleton.id() }
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
        if radii.skeleton != skeleton.id() && radii.len() == n {
            return Err(PoseError::SkeletonMismatch { what: "joint radii", joints: n }.into());
        }
        if radii.len() != n {
            return Err(RuntimeClipError::RadiiMismatch { got: radii.len(), expected: n });
        }
        clip.check_joints(n)?;
        let duration = clip.duration();
        let mut by_joint: Vec<Option<&JointTracks>> = vec![None; n];
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
        Ok(Self::from_channels(clip.name().to_owned(), duration, skeleton.id(), n, tolerance_m, channels))
    }
}

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
        // Tiny components are stored as zero (see `track::TINY`), and a range narrower
        // than that decodes to its (flushed) minimum.
        let lo = lo.map(flush_tiny);
        let step = [0, 1, 2].map(|c| if hi[c] - lo[c] < TINY { 0.0 } else { (hi[c] - lo[c]) / 65535.0 });
        Storage::Narrow { min: lo, step }
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
            (Storage::Wide, _) => wide_value(kind, v),
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

/// What a float track stores for `v`: rotations normalized, tiny components zero (see
/// `track::TINY`).
fn wide_value(kind: Kind, v: &[f32; 4]) -> [f32; 4] {
    let v = if kind == Kind::Rotation {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.map(|x| x / n)
    } else {
        *v
    };
    v.map(flush_tiny)
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
                channel.wide.push(wide_value(kind, &v));
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
) -> Result<f32, SkinningError> {
    let n = skeleton.len();
    let mut model = vec![Mat4::identity(); n];
    let mut palette = vec![Mat4::identity(); skin.len()];
    let mut exact: Vec<Vec<Vec3>> = meshes.iter().map(|m| vec![Vec3::zeros(); m.vertex_count()]).collect();
    let mut approx = exact.clone();
    let mut pose = skeleton.rest_pose().clone();
    let mut ctx = runtime.new_context();
    let mut worst = 0.0f32;
    let mut skin_into = |pose: &Pose, out: &mut [Vec<Vec3>]| -> Result<(), SkinningError> {
        pose.local_to_model(skeleton, &mut model).map_err(|e| SkinningError::Layout(e.to_string()))?;
        palette::skinning_matrices(&model, skin, &mut palette).map_err(|e| SkinningError::Layout(e.to_string()))?;
        for (mesh, o) in meshes.iter().zip(out.iter_mut()) {
            let Some(influences) = &mesh.influences else { continue };
            let input = SkinningInput { influences, positions: &mesh.positions, normals: None };
            linear_blend(&input, &palette, NormalMode::Direct, &mut SkinningOutput { positions: o, normals: None })?;
        }
        Ok(())
    };
    for &t in times {
        pose.locals_mut().copy_from_slice(skeleton.rest_pose().locals());
        clip.sample(t, TimePolicy::Clamp, &mut pose).map_err(|e| SkinningError::Layout(e.to_string()))?;
        skin_into(&pose, &mut exact)?;
        runtime
            .sample_pose(&mut ctx, t, TimePolicy::Clamp, &mut pose)
            .map_err(|e| SkinningError::Layout(e.to_string()))?;
        skin_into(&pose, &mut approx)?;
        for (e, a) in exact.iter().zip(&approx) {
            for (p, q) in e.iter().zip(a) {
                worst = worst.max((p - q).norm());
            }
        }
    }
    Ok(worst)
}
