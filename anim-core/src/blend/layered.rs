//! N-layer weighted blending with per-joint masks, and additive layers on top.
//!
//! For every joint `j`, each normal layer `i` contributes with weight
//! `wᵢⱼ = weightᵢ · maskᵢ[j]` (mask weight 1 without a mask; non-positive weights do not
//! contribute). With `W = Σ wᵢⱼ`:
//!
//! - translation and scale are `Σ wᵢⱼ · xᵢ / W`;
//! - the rotation is the normalized `Σ wᵢⱼ · qᵢ`, every `qᵢ` first flipped into the
//!   hemisphere of the first contributing rotation (so `q` and `−q` blend as one rotation);
//! - when `W` is below the threshold, the rest pose is blended in with the missing weight
//!   `threshold − W`, so a joint no layer covers shows its rest transform and a joint
//!   weakly covered fades towards it.
//!
//! Then every additive layer adds `weight · mask[j]` of its delta
//! ([`crate::blend::additive::add_transform_weighted`]), in order.
//!
//! # Two layers
//! Two unmasked layers with positive weights `w₀`, `w₁` (`W = w₀ + w₁` at least the
//! threshold) are the two-pose blend `mix(a, b, w₁ / W)`: a lerp is the same weighted
//! mean, and the nlerp the same normalized weighted sum (both flip `b` into `a`'s
//! hemisphere). [`blend_layers`] takes that case through [`blend_two`], one
//! [`Transform::mix`] per joint, instead of the general accumulation (the results agree
//! within rounding, 1e-6; a test checks it). The crossfade
//! ([`crate::blend::crossfade::CrossFadeController`], weights in `[0, 1]`) blends through
//! [`blend_two_into`], the in-place form of the same job.
//!
//! [`crate::blend::mix::blend`] and [`crate::blend::mix::blend_into`] stay separate: they accept any
//! finite factor and *extrapolate* outside `[0, 1]` (a layer weight below 0 or a
//! total below the threshold means something else here), and they limit the blend to a
//! subtree while leaving the other joints of the output untouched, which a layer mask of
//! zeros does not do (it fills in the rest pose). [`crate::blend::mix::blend_masked`]
//! likewise computes `mix(a, b, t · mask[j])`, which with a mask below 1 keeps `a` at
//! full weight: as layers that is `a` with weight `1 − t·m` and `b` with `t·m`, a
//! per-joint weight pair no [`Layer`] mask expresses (masks scale one layer only).
//! Nothing here allocates.
//!
//! ```
//! use anim_core::pose::{JointDesc, Pose, Skeleton};
//! use anim_core::blend::layered::{blend_layers, Layer};
//! use anim_math::{Transform, Vec3};
//!
//! let skeleton = Skeleton::new(vec![
//!     JointDesc::new("hips", None, Transform::IDENTITY),
//!     JointDesc::new("chest", Some(0), Transform::IDENTITY),
//! ]).unwrap();
//! let mut walk = skeleton.rest_pose().clone();
//! walk.locals_mut()[0].translation = Vec3::new(0.0, 1.0, 0.0);
//! walk.locals_mut()[1].translation = Vec3::new(0.0, 2.0, 0.0);
//! let mut wave = skeleton.rest_pose().clone();
//! wave.locals_mut()[1].translation = Vec3::new(0.0, 4.0, 0.0);
//! let upper_body = [0.0, 1.0];
//! let mut out = skeleton.rest_pose().clone();
//! blend_layers(&mut out, &skeleton, &[
//!     Layer::new(&walk, 1.0),
//!     Layer::new(&wave, 1.0).with_mask(&upper_body),
//! ], &[], 0.1).unwrap();
//! assert_eq!(out.locals()[0].translation, Vec3::new(0.0, 1.0, 0.0)); // walk only
//! assert_eq!(out.locals()[1].translation, Vec3::new(0.0, 3.0, 0.0)); // half and half
//! ```

use super::additive::add_transform_weighted;
use super::mix::{BlendError, check_len, check_pose};
use crate::pose::{Pose, Skeleton};
use anim_math::{Quat, Transform, Vec3};
use nalgebra::Quaternion;

/// A normal (interpolated) layer.
#[derive(Clone, Copy, Debug)]
pub struct Layer<'a> {
    /// The layer's pose.
    pub pose: &'a Pose,
    /// Layer weight.
    pub weight: f32,
    /// Optional per-joint weights (one per joint), multiplied with `weight`.
    pub mask: Option<&'a [f32]>,
}

impl<'a> Layer<'a> {
    /// A layer without a mask.
    pub fn new(pose: &'a Pose, weight: f32) -> Self {
        Self { pose, weight, mask: None }
    }

    /// Sets the per-joint mask.
    #[must_use]
    pub fn with_mask(mut self, mask: &'a [f32]) -> Self {
        self.mask = Some(mask);
        self
    }
}

/// An additive layer: `weight · mask[j]` of `pose − base` is added on top.
#[derive(Clone, Copy, Debug)]
pub struct AdditiveLayer<'a> {
    /// The additive pose.
    pub pose: &'a Pose,
    /// The reference pose the delta is taken from.
    pub base: &'a Pose,
    /// Layer weight.
    pub weight: f32,
    /// Optional per-joint weights.
    pub mask: Option<&'a [f32]>,
}

impl<'a> AdditiveLayer<'a> {
    /// An additive layer without a mask.
    pub fn new(pose: &'a Pose, base: &'a Pose, weight: f32) -> Self {
        Self { pose, base, weight, mask: None }
    }

    /// Sets the per-joint mask.
    #[must_use]
    pub fn with_mask(mut self, mask: &'a [f32]) -> Self {
        self.mask = Some(mask);
        self
    }
}

fn check_mask(mask: Option<&[f32]>, skeleton: &Skeleton) -> Result<(), BlendError> {
    if let Some(m) = mask {
        check_len("mask", m.len(), skeleton)?;
        if let Some(w) = m.iter().find(|w| !w.is_finite()) {
            return Err(BlendError::NonFiniteWeight { what: "mask weight", value: *w });
        }
    }
    Ok(())
}

fn check_weight(what: &'static str, w: f32) -> Result<(), BlendError> {
    if w.is_finite() { Ok(()) } else { Err(BlendError::NonFiniteWeight { what, value: w }) }
}

/// Running sums for one joint.
struct Accum {
    total: f32,
    translation: Vec3,
    scale: Vec3,
    rotation: Quaternion<f32>,
    first: Option<Quaternion<f32>>,
}

impl Accum {
    #[inline]
    fn new() -> Self {
        Self {
            total: 0.0,
            translation: Vec3::zeros(),
            scale: Vec3::zeros(),
            rotation: Quaternion::new(0.0, 0.0, 0.0, 0.0),
            first: None,
        }
    }

    #[inline]
    fn add(&mut self, t: &Transform, w: f32) {
        self.total += w;
        self.translation += t.translation * w;
        self.scale += t.scale * w;
        let q = *t.rotation.quaternion();
        let q = match self.first {
            Some(f) if f.dot(&q) < 0.0 => -q,
            Some(_) => q,
            None => {
                self.first = Some(q);
                q
            }
        };
        self.rotation += q * w;
    }

    #[inline]
    fn finish(&self) -> Transform {
        let inv = 1.0 / self.total;
        Transform {
            translation: self.translation * inv,
            rotation: Quat::new_normalize(self.rotation),
            scale: self.scale * inv,
        }
    }
}

/// The two-layer job: joint by joint `out = mix(a, b, t)` for `t ∈ [0, 1]` (layers `a`
/// at weight `1 − t` and `b` at `t`, no masks); see [Two layers](self#two-layers).
///
/// # Errors
/// A pose whose length differs from the skeleton's, or `t` not finite or outside `[0, 1]`.
pub fn blend_two(out: &mut Pose, a: &Pose, b: &Pose, t: f32, skeleton: &Skeleton) -> Result<(), BlendError> {
    check_pose("output pose", out, skeleton)?;
    check_pose("layer pose", a, skeleton)?;
    check_pose("layer pose", b, skeleton)?;
    check_unit(t)?;
    mix_two(out.locals_mut(), a.locals(), b.locals(), t);
    Ok(())
}

/// [`blend_two`] in place: `pose = mix(pose, b, t)`, `t ∈ [0, 1]`.
///
/// # Errors
/// As [`blend_two`].
pub fn blend_two_into(pose: &mut Pose, b: &Pose, t: f32, skeleton: &Skeleton) -> Result<(), BlendError> {
    check_pose("output pose", pose, skeleton)?;
    check_pose("layer pose", b, skeleton)?;
    check_unit(t)?;
    mix_two_into(pose.locals_mut(), b.locals(), t);
    Ok(())
}

fn check_unit(t: f32) -> Result<(), BlendError> {
    if (0.0..=1.0).contains(&t) {
        Ok(())
    } else {
        Err(BlendError::WeightOutOfRange { what: "two-layer weight", value: t })
    }
}

/// The two-layer kernel on joint slices of equal length (checked by the callers).
#[inline]
fn mix_two(out: &mut [Transform], a: &[Transform], b: &[Transform], t: f32) {
    for ((o, ta), tb) in out.iter_mut().zip(a).zip(b) {
        *o = Transform::mix(ta, tb, t);
    }
}

/// The in-place two-layer kernel (the crossfade's, whose poses all have the skeleton's
/// length by construction).
#[inline]
pub(crate) fn mix_two_into(pose: &mut [Transform], b: &[Transform], t: f32) {
    for (o, tb) in pose.iter_mut().zip(b) {
        *o = Transform::mix(o, tb, t);
    }
}

/// Blends `layers` into `out`, then applies `additive` on top; see the
/// [module docs](self). `threshold` (> 0 recommended, e.g. 0.1) is the total weight below
/// which the rest pose fills in.
///
/// # Errors
/// A pose or mask whose length differs from the skeleton's, or a non-finite weight.
pub fn blend_layers(
    out: &mut Pose,
    skeleton: &Skeleton,
    layers: &[Layer<'_>],
    additive: &[AdditiveLayer<'_>],
    threshold: f32,
) -> Result<(), BlendError> {
    check_pose("output pose", out, skeleton)?;
    check_weight("blend threshold", threshold)?;
    for l in layers {
        check_pose("layer pose", l.pose, skeleton)?;
        check_weight("layer weight", l.weight)?;
        check_mask(l.mask, skeleton)?;
    }
    for l in additive {
        check_pose("additive pose", l.pose, skeleton)?;
        check_pose("base pose", l.base, skeleton)?;
        check_weight("additive weight", l.weight)?;
        check_mask(l.mask, skeleton)?;
    }
    if let [a, b] = layers
        && a.mask.is_none()
        && b.mask.is_none()
        && a.weight > 0.0
        && b.weight > 0.0
        && a.weight + b.weight >= threshold
        && additive.is_empty()
    {
        let t = b.weight / (a.weight + b.weight);
        mix_two(out.locals_mut(), a.pose.locals(), b.pose.locals(), t.clamp(0.0, 1.0));
        return Ok(());
    }
    let rest = skeleton.rest_pose().locals();
    for (j, o) in out.locals_mut().iter_mut().enumerate() {
        let mut acc = Accum::new();
        for l in layers {
            let w = l.weight * l.mask.map_or(1.0, |m| m[j]);
            if w > 0.0 {
                acc.add(&l.pose.locals()[j], w);
            }
        }
        if acc.total < threshold {
            acc.add(&rest[j], threshold - acc.total);
        }
        let mut t = if acc.total > 0.0 { acc.finish() } else { rest[j] };
        for l in additive {
            let w = l.weight * l.mask.map_or(1.0, |m| m[j]);
            if w != 0.0 {
                t = add_transform_weighted(&t, &l.pose.locals()[j], &l.base.locals()[j], w);
            }
        }
        *o = t;
    }
    Ok(())
}
