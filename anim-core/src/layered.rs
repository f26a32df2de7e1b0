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
//! ([`crate::additive::add_transform_weighted`]), in order.
//!
//! Two layers with weights `1 − t` and `t` (`t ∈ [0, 1]`) give exactly the two-pose
//! [`crate::blend::blend`]: its nlerp is the same normalized weighted sum.
//! Nothing here allocates.
//!
//! ```
//! use anim_core::{Skeleton, JointDesc, Pose};
//! use anim_core::layered::{blend_layers, Layer};
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

use crate::additive::add_transform_weighted;
use crate::blend::{BlendError, check_len};
use crate::{Pose, Skeleton};
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
    check_len("output pose", out.len(), skeleton)?;
    check_weight("blend threshold", threshold)?;
    for l in layers {
        check_len("layer pose", l.pose.len(), skeleton)?;
        check_weight("layer weight", l.weight)?;
        check_mask(l.mask, skeleton)?;
    }
    for l in additive {
        check_len("additive pose", l.pose.len(), skeleton)?;
        check_len("base pose", l.base.len(), skeleton)?;
        check_weight("additive weight", l.weight)?;
        check_mask(l.mask, skeleton)?;
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
