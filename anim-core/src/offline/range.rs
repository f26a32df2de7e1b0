//! The documented numeric range of the runtime, and the conservative check that keeps a
//! model inside it ([`check_model_range`]).
//!
//! # The range
//!
//! Every translation and position a model can produce (a local translation, a joint's
//! model-space translation, an inverse bind matrix's translation, a palette matrix's
//! translation, a bind-pose or skinned vertex position) has a Euclidean length of at most
//! [`MAX_DISTANCE`] = 10¹⁸, and every linear part (a local scale, a joint's model-space
//! 3×3 part, an inverse bind matrix's or palette matrix's 3×3 part) a norm of at most
//! [`MAX_LINEAR`] = 10⁸ (spectral norm, bounded above by the largest absolute scale
//! component or the Frobenius norm).
//!
//! # Why these limits make every later product finite
//!
//! `f32` holds magnitudes up to about 3.4·10³⁸. Inside the range:
//!
//! - **Squared lengths** of positions (bounds, normalization, distance tests) are at most
//!   3·(10¹⁸)² = 3·10³⁶.
//! - **Palette** `model · inverse_bind`: checked itself against both limits (below), so a
//!   palette entry is at most 10⁸ (linear) and 10¹⁸ (translation).
//! - **Skinned positions**: `Σ wᵢ·(Aᵢ·p + tᵢ)` with normalized weights is at most
//!   `max(‖Aᵢ‖·|p| + |tᵢ|)`, which is checked to stay within [`MAX_DISTANCE`]; the sums on
//!   the way are at most 10⁸·10¹⁸·3 = 3·10²⁶.
//! - **Normals**: the cofactor (normal) matrix of a linear part `A` has entries of at most
//!   2·‖A‖² = 2·10¹⁶; a transformed unit normal has components of at most 6·10¹⁶ and a
//!   squared length of at most 1.1·10³⁴, so normalizing it is finite (the CPU paths also
//!   rescale when needed; the GPU shaders rely on this bound).
//! - **Dual quaternions** of a rigid transform: the dual part `½·t·r` has components of at
//!   most `√3/2·|t|`, and the translation read back from it partial sums of at most `2·|t|`:
//!   below 10¹⁹. The bind-space scale `Rᵀ·A` has the norm of `A`.
//! - **Crowd atlas baking** stores palette entries (matrices or dual quaternions with
//!   scale) as they are: finite as above; half-float atlases check their own ±65504 limit.
//!
//! Scales below the range (tiny or zero) only underflow to zero, which every path handles
//! as a degenerate but finite transform, so there is no lower limit.
//!
//! # The bound analysis
//!
//! Per joint `j` the check takes the largest local translation length `tⱼ` and the largest
//! absolute scale component `sⱼ` over the rest pose, the bind pose and every key of every
//! clip (rotations have norm one and do not count). A cubic-spline segment between keys
//! with values `v₀`, `v₁`, out-tangent `m₀`, in-tangent `m₁` and duration `Δ` is bounded by
//! `max(|v₀|, |v₁|) + 4/27·Δ·(|m₀| + |m₁|)`: the Hermite basis functions `h₀₀`, `h₀₁` are a
//! convex pair on `[0, 1]` and `|h₁₀|`, `|h₁₁|` peak at 4/27. Linear and step segments stay
//! within their keys. Sampling any clip, or blending sampled poses convexly, therefore
//! gives local values within `tⱼ` and `sⱼ`. Down the hierarchy (parents first) the
//! model-space bounds are `Sⱼ = S_parent·sⱼ` and `Tⱼ = T_parent + S_parent·tⱼ`, each
//! checked against the limits before going on. Additive layers and root motion add to a
//! pose and are not covered.
//!
//! All of this is computed in `f64` on values of at most `f32::MAX` times a limit, so the
//! check itself cannot overflow.

use crate::clip::{Clip, Interpolation, Track};
use crate::pose::Skeleton;
use crate::skin::Skin;
use anim_math::{Mat4, Transform, Vec3};

/// The longest translation or position (Euclidean length) anywhere in a model; see the
/// [module docs](self).
pub const MAX_DISTANCE: f32 = 1e18;

/// The largest norm of a linear part (scale, model-space or palette 3×3) anywhere in a
/// model; see the [module docs](self).
pub const MAX_LINEAR: f32 = 1e8;

/// Which part of a transform left the range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Quantity {
    /// A translation or position length ([`MAX_DISTANCE`]).
    Translation,
    /// A scale or linear-part norm ([`MAX_LINEAR`]).
    Scale,
}

impl Quantity {
    /// `"translation"` or `"scale"`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Translation => "translation",
            Self::Scale => "scale",
        }
    }

    /// The limit of this quantity.
    #[must_use]
    pub fn limit(self) -> f32 {
        match self {
            Self::Translation => MAX_DISTANCE,
            Self::Scale => MAX_LINEAR,
        }
    }
}

impl std::fmt::Display for Quantity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a joint's largest local value of a [`Quantity`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// The skeleton's rest pose.
    Rest,
    /// The skeleton's bind pose.
    Bind,
    /// The keys of clip `clip` (index into the clips given to [`check_model_range`]).
    Clip {
        /// Clip index.
        clip: usize,
    },
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Rest => f.write_str("rest pose"),
            Self::Bind => f.write_str("bind pose"),
            Self::Clip { clip } => write!(f, "clip {clip}"),
        }
    }
}

/// A model part that could leave the documented range, named so that an importer can
/// point at the element of its file.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RangeError {
    /// A joint's model-space transform could exceed a limit. `origin` holds the joint's own
    /// largest local value of `quantity`: its ancestors were within the range.
    #[error(
        "joint {joint} ({name:?}): model-space {quantity} could reach {bound:e} (limit {limit:e}) from its {origin} {quantity}"
    )]
    Joint {
        /// Skeleton index of the joint.
        joint: usize,
        /// Its name.
        name: String,
        /// What left the range.
        quantity: Quantity,
        /// Where the joint's largest local value of `quantity` comes from.
        origin: Origin,
        /// The bound reached.
        bound: f64,
        /// The limit it exceeds.
        limit: f32,
    },
    /// An inverse bind matrix, or the palette matrix it gives with its joint, could exceed
    /// a limit.
    #[error("skin {skin}, joint {index}: {what} {quantity} could reach {bound:e} (limit {limit:e})")]
    InverseBind {
        /// Index of the skin in the skins given.
        skin: usize,
        /// Index of the joint in the skin (and of its inverse bind matrix).
        index: usize,
        /// `"inverse bind matrix"` or `"palette matrix"`.
        what: &'static str,
        /// What left the range.
        quantity: Quantity,
        /// The bound reached.
        bound: f64,
        /// The limit it exceeds.
        limit: f32,
    },
    /// A mesh's positions, or where skinning or its joint can take them, could exceed
    /// [`MAX_DISTANCE`].
    #[error("mesh {mesh}: {what} could reach {bound:e} (limit {limit:e})")]
    Mesh {
        /// Index of the mesh in the meshes given.
        mesh: usize,
        /// `"bind-pose position"` or `"transformed position"` (an importer may also report
        /// `"morphed position"` or `"morphed normal"`).
        what: &'static str,
        /// The bound reached.
        bound: f64,
        /// The limit it exceeds.
        limit: f32,
    },
}

/// A mesh as the range check sees it: its positions and what moves them.
#[derive(Clone, Copy, Debug)]
pub struct MeshRange<'a> {
    /// Bind-pose positions.
    pub positions: &'a [Vec3],
    /// The skin (index into the skins given) for a skinned mesh, `None` for a static one.
    pub skin: Option<usize>,
    /// The joint a static mesh is attached to (its model matrix moves the mesh).
    pub joint: usize,
}

/// Per joint, the largest local translation length and absolute scale component, with
/// where each comes from.
#[derive(Clone, Copy, Debug)]
struct Local {
    t: (f64, Origin),
    s: (f64, Origin),
}

fn raise(slot: &mut (f64, Origin), value: f64, origin: Origin) {
    if value > slot.0 {
        *slot = (value, origin);
    }
}

fn len(v: &Vec3) -> f64 {
    let [x, y, z] = [f64::from(v.x), f64::from(v.y), f64::from(v.z)];
    (x * x + y * y + z * z).sqrt()
}

fn max_abs(v: &Vec3) -> f64 {
    f64::from(v.amax())
}

/// The largest `measure` a track's samples can reach (see the module docs for splines).
fn track_bound(track: &Track<Vec3>, measure: fn(&Vec3) -> f64) -> f64 {
    let (times, values) = (track.times(), track.values());
    if track.interpolation() != Interpolation::CubicSpline {
        return values.iter().map(measure).fold(0.0, f64::max);
    }
    let mut bound = values.chunks_exact(3).map(|k| measure(&k[1])).fold(0.0, f64::max);
    for (i, w) in times.windows(2).enumerate() {
        let dt = f64::from(w[1]) - f64::from(w[0]);
        let (v0, m0) = (measure(&values[3 * i + 1]), measure(&values[3 * i + 2]));
        let (v1, m1) = (measure(&values[3 * i + 4]), measure(&values[3 * i + 3]));
        bound = bound.max(v0.max(v1) + 4.0 / 27.0 * dt * (m0 + m1));
    }
    bound
}

/// Spectral-norm bound (Frobenius norm) of a 4×4 matrix's linear part, and the length of
/// its translation.
fn matrix_bounds(m: &Mat4) -> (f64, f64) {
    let lin = (0..3).flat_map(|c| (0..3).map(move |r| (r, c))).map(|(r, c)| f64::from(m[(r, c)]).powi(2)).sum::<f64>();
    (lin.sqrt(), len(&Vec3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)])))
}

fn over(bound: f64, quantity: Quantity) -> bool {
    // A NaN bound (impossible for finite input) fails too.
    bound.is_nan() || bound > f64::from(quantity.limit())
}

/// Checks conservatively that nothing computed from `skeleton`, `clips`, `skins` and
/// `meshes` can leave the documented range (see the [module docs](self) for the range,
/// why it suffices and how the bounds are derived): rest and bind poses, every key of every
/// clip, model-space transforms down the hierarchy, inverse bind and palette matrices, and
/// bind-pose and transformed mesh positions. Linear in the size of its input.
///
/// # Errors
/// The first part found that could exceed a limit: a joint (with the origin of its largest
/// local value), a skin's inverse bind or palette matrix, or a mesh.
pub fn check_model_range(
    skeleton: &Skeleton,
    clips: &[Clip],
    skins: &[&Skin],
    meshes: &[MeshRange],
) -> Result<(), RangeError> {
    let n = skeleton.len();
    let mut local = vec![Local { t: (0.0, Origin::Rest), s: (0.0, Origin::Rest) }; n];
    for (origin, pose) in [(Origin::Rest, skeleton.rest_pose()), (Origin::Bind, skeleton.bind_pose())] {
        for (l, t) in local.iter_mut().zip(pose.locals()) {
            let t: &Transform = t;
            raise(&mut l.t, len(&t.translation), origin);
            raise(&mut l.s, max_abs(&t.scale), origin);
        }
    }
    for (c, clip) in clips.iter().enumerate() {
        for jt in clip.joint_tracks() {
            let Some(l) = local.get_mut(jt.joint) else { continue };
            if let Some(t) = &jt.translation {
                raise(&mut l.t, track_bound(t, len), Origin::Clip { clip: c });
            }
            if let Some(s) = &jt.scale {
                raise(&mut l.s, track_bound(s, max_abs), Origin::Clip { clip: c });
            }
        }
    }
    // Model-space bounds, parents first (the skeleton orders joints so).
    let mut model = vec![(0.0f64, 0.0f64); n];
    for j in 0..n {
        let (ps, pt) = skeleton.parent(j).map_or((1.0, 0.0), |p| model[p]);
        let l = local[j];
        let s = ps * l.s.0;
        let t = pt + ps * l.t.0;
        let joint_err = |quantity: Quantity, bound: f64, origin: Origin| RangeError::Joint {
            joint: j,
            name: skeleton.name(j).unwrap_or_default().to_owned(),
            quantity,
            origin,
            bound,
            limit: quantity.limit(),
        };
        if over(s, Quantity::Scale) {
            return Err(joint_err(Quantity::Scale, s, l.s.1));
        }
        if over(t, Quantity::Translation) {
            return Err(joint_err(Quantity::Translation, t, l.t.1));
        }
        model[j] = (s, t);
    }
    // Palette bounds per skin joint.
    let mut palettes = Vec::with_capacity(skins.len());
    for (k, skin) in skins.iter().enumerate() {
        let mut worst = (0.0f64, 0.0f64);
        for (i, (&j, ibm)) in skin.joints().iter().zip(skin.inverse_bind()).enumerate() {
            let err = |what, quantity: Quantity, bound| RangeError::InverseBind {
                skin: k,
                index: i,
                what,
                quantity,
                bound,
                limit: quantity.limit(),
            };
            let (bs, bt) = matrix_bounds(ibm);
            if over(bs, Quantity::Scale) {
                return Err(err("inverse bind matrix", Quantity::Scale, bs));
            }
            if over(bt, Quantity::Translation) {
                return Err(err("inverse bind matrix", Quantity::Translation, bt));
            }
            let (ms, mt) = model.get(j).copied().unwrap_or((1.0, 0.0));
            let (s, t) = (ms * bs, mt + ms * bt);
            if over(s, Quantity::Scale) {
                return Err(err("palette matrix", Quantity::Scale, s));
            }
            if over(t, Quantity::Translation) {
                return Err(err("palette matrix", Quantity::Translation, t));
            }
            worst = (worst.0.max(s), worst.1.max(t));
        }
        palettes.push(worst);
    }
    for (m, mesh) in meshes.iter().enumerate() {
        let p = mesh.positions.iter().map(len).fold(0.0, f64::max);
        let err = |what, bound| RangeError::Mesh { mesh: m, what, bound, limit: MAX_DISTANCE };
        if over(p, Quantity::Translation) {
            return Err(err("bind-pose position", p));
        }
        let (s, t) = match mesh.skin {
            Some(k) => palettes.get(k).copied().unwrap_or((1.0, 0.0)),
            None => model.get(mesh.joint).copied().unwrap_or((1.0, 0.0)),
        };
        let moved = s * p + t;
        if over(moved, Quantity::Translation) {
            return Err(err("transformed position", moved));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clip::JointTracks;
    use crate::pose::JointDesc;
    use anim_math::Quat;

    fn chain(locals: &[Transform]) -> Skeleton {
        let joints =
            locals.iter().enumerate().map(|(i, t)| JointDesc::new(format!("j{i}"), i.checked_sub(1), *t)).collect();
        Skeleton::new(joints).unwrap()
    }

    /// Two joints each within the range on their own overflow the translation limit
    /// together; the second joint is named, with its rest pose as the origin.
    #[test]
    fn hierarchy_sums_translations() {
        let t = Transform::from_translation(Vec3::new(6e17, 0.0, 0.0));
        assert_eq!(check_model_range(&chain(&[t]), &[], &[], &[]), Ok(()));
        let e = check_model_range(&chain(&[t, t]), &[], &[], &[]).unwrap_err();
        assert!(
            matches!(e, RangeError::Joint { joint: 1, quantity: Quantity::Translation, origin: Origin::Rest, .. }),
            "{e}"
        );
    }

    /// Scales multiply down a chain: 1e3 and 1e3 pass, a third 1e3 does not; a parent's
    /// scale multiplies its child's translation.
    #[test]
    fn hierarchy_multiplies_scales() {
        let s = Transform::new(Vec3::zeros(), Quat::identity(), Vec3::repeat(-1e3));
        assert_eq!(check_model_range(&chain(&[s, s]), &[], &[], &[]), Ok(()));
        let e = check_model_range(&chain(&[s, s, s]), &[], &[], &[]).unwrap_err();
        assert!(matches!(e, RangeError::Joint { joint: 2, quantity: Quantity::Scale, .. }), "{e}");
        let t = Transform::from_translation(Vec3::new(0.0, 2e15, 0.0));
        let e = check_model_range(&chain(&[s, t]), &[], &[], &[]).unwrap_err();
        assert!(matches!(e, RangeError::Joint { joint: 1, quantity: Quantity::Translation, .. }), "{e}");
    }

    /// Clip keys count, spline tangents included, and the clip is named.
    #[test]
    fn clip_keys_and_tangents() {
        let sk = chain(&[Transform::IDENTITY]);
        let clip = |interp, values: Vec<Vec3>| {
            let times = if interp == Interpolation::CubicSpline { vec![0.0, 2.0] } else { vec![0.0] };
            let mut jt = JointTracks::new(0);
            jt.translation = Some(Track::new(interp, times, values).unwrap());
            Clip::new("c", vec![jt], vec![]).unwrap()
        };
        let ok = clip(Interpolation::Linear, vec![Vec3::new(9e17, 0.0, 0.0)]);
        let big = clip(Interpolation::Linear, vec![Vec3::new(3e38, 0.0, 0.0)]);
        assert_eq!(check_model_range(&sk, std::slice::from_ref(&ok), &[], &[]), Ok(()));
        let e = check_model_range(&sk, &[ok.clone(), big], &[], &[]).unwrap_err();
        assert!(matches!(e, RangeError::Joint { joint: 0, origin: Origin::Clip { clip: 1 }, .. }), "{e}");
        // Values 5e17, tangents 1e18 over Δ = 2: 5e17 + 4/27·2·2e18 ≈ 1.09e18 > 1e18.
        let (v, m) = (Vec3::new(5e17, 0.0, 0.0), Vec3::new(1e18, 0.0, 0.0));
        let spline = clip(Interpolation::CubicSpline, vec![m, v, m, m, v, m]);
        assert!(check_model_range(&sk, &[spline], &[], &[]).is_err());
        let calm =
            clip(Interpolation::CubicSpline, vec![Vec3::zeros(), v, Vec3::zeros(), Vec3::zeros(), v, Vec3::zeros()]);
        assert_eq!(check_model_range(&sk, &[calm], &[], &[]), Ok(()));
    }

    /// Inverse bind matrices, the palettes they make, and mesh positions are checked.
    #[test]
    fn inverse_binds_and_meshes() {
        let sk = chain(&[Transform::new(Vec3::zeros(), Quat::identity(), Vec3::repeat(1e4))]);
        let ibm = |s: f32, t: f32| Mat4::new_translation(&Vec3::new(t, 0.0, 0.0)) * Mat4::new_scaling(s);
        let skin = |m| Skin::new(vec![0], vec![m], &sk).unwrap();
        let fine = skin(ibm(1e-4, 0.0));
        assert_eq!(check_model_range(&sk, &[], &[&fine], &[]), Ok(()));
        let e = check_model_range(&sk, &[], &[&fine, &skin(ibm(1e5, 0.0))], &[]).unwrap_err();
        assert!(matches!(e, RangeError::InverseBind { skin: 1, index: 0, what: "palette matrix", .. }), "{e}");
        let e = check_model_range(&sk, &[], &[&skin(ibm(1.0, 2e18))], &[]).unwrap_err();
        assert!(matches!(e, RangeError::InverseBind { what: "inverse bind matrix", .. }), "{e}");
        let p = [Vec3::new(1e15, 0.0, 0.0)];
        let static_mesh = MeshRange { positions: &p, skin: None, joint: 0 };
        // 1e4 · 1e15 = 1e19: beyond the limit for the static mesh on the scaled joint…
        let e = check_model_range(&sk, &[], &[], &[static_mesh]).unwrap_err();
        assert!(matches!(e, RangeError::Mesh { mesh: 0, what: "transformed position", .. }), "{e}");
        // …but fine skinned through the palette that undoes the scale.
        let skinned = MeshRange { positions: &p, skin: Some(0), joint: 0 };
        assert_eq!(check_model_range(&sk, &[], &[&fine], &[skinned]), Ok(()));
    }
}
