//! IK chains: local transforms under a parent-world (root) transform, and joint constraints.

use crate::error::IkError;
use anim_core::pose::{Pose, Skeleton};
use anim_math::simd::F4;
use anim_math::{EPSILON, Quat, Transform, Vec3, quat};
use nalgebra::Unit;

/// A limit on one chain joint's local rotation, applied inside every solver iteration.
///
/// Angles are radians. Constraints assume uniform (or no) scale along the chain.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Constraint {
    /// No limit.
    #[default]
    Free,
    /// Ball and socket: the joint's bone (the direction to its child) stays within
    /// `max_angle` of a reference direction in the parent's frame. With `reference: None`
    /// the reference is the **parent's bone direction** (the direction from the parent to
    /// this joint), as in the book; give a direction (parent frame) for a chain's first
    /// joint or for a socket that points elsewhere.
    BallSocket {
        /// Largest angle, in `[0, π]`, between the bone and the reference.
        max_angle: f32,
        /// Reference direction in the parent frame, or `None` for the parent's bone.
        reference: Option<Vec3>,
    },
    /// Hinge: the local rotation is `rotation(axis, θ) · reference`, a turn about `axis`
    /// (parent frame) away from the `reference` rotation (usually the rest rotation), with
    /// `θ` limited to `[min, max]` when `limits` is given.
    Hinge {
        /// Hinge axis in the parent frame.
        axis: Unit<Vec3>,
        /// Local rotation at `θ = 0`.
        reference: Quat,
        /// Optional `(min, max)` range of `θ`, with `-π ≤ min ≤ max ≤ π`.
        limits: Option<(f32, f32)>,
    },
}

impl Constraint {
    /// A ball-and-socket limit around the parent's bone direction.
    pub fn ball(max_angle: f32) -> Self {
        Constraint::BallSocket { max_angle, reference: None }
    }

    /// A hinge about `axis` (parent frame), zero at `reference`, optionally limited.
    ///
    /// # Errors
    /// A zero or non-finite axis, or limits that are not finite and ordered.
    pub fn hinge(axis: Vec3, reference: Quat, limits: Option<(f32, f32)>) -> Result<Self, IkError> {
        crate::error::check_finite_vec("hinge axis", &axis)?;
        let axis =
            Unit::try_new(axis, EPSILON).ok_or(IkError::InvalidSetting { what: "hinge axis length", value: 0.0 })?;
        if let Some((lo, hi)) = limits
            && !(lo.is_finite() && hi.is_finite() && lo <= hi)
        {
            return Err(IkError::InvalidSetting { what: "hinge limits (min > max or not finite)", value: lo });
        }
        Ok(Constraint::Hinge { axis, reference, limits })
    }

    /// Projects `rotation` (a joint's local rotation) onto the allowed set. `bone` is the
    /// joint's bone direction in its own frame (towards its child) and `parent_bone` the
    /// parent's bone direction in the parent frame (towards this joint); either may be
    /// zero, in which case a ball constraint without a reference does nothing.
    #[must_use]
    pub fn apply(&self, rotation: Quat, bone: &Vec3, parent_bone: &Vec3) -> Quat {
        match *self {
            Constraint::Free => rotation,
            Constraint::BallSocket { max_angle, reference } => {
                let reference = reference.unwrap_or(*parent_bone);
                let (lr, lb) = (reference.norm(), bone.norm());
                if lr < EPSILON || lb < EPSILON {
                    return rotation;
                }
                let r = reference / lr;
                let d = rotation * (bone / lb);
                let angle = quat::angle_between(&r, &d);
                if angle <= max_angle {
                    return rotation;
                }
                let c = r.cross(&d);
                let axis = if c.norm() < 1e-6 { quat::any_orthogonal(&r) } else { c.normalize() };
                let limited = Quat::from_axis_angle(&Unit::new_unchecked(axis), max_angle.max(0.0)) * r;
                renormalize(quat::from_to(&d, &limited) * rotation)
            }
            Constraint::Hinge { axis, reference, limits } => {
                let delta = rotation * reference.inverse();
                let q = delta.quaternion();
                let along = q.imag().dot(&axis);
                // Twist of `delta` about the axis: 2·atan2(v·axis, w), in (-π, π].
                let mut theta = 2.0 * along.atan2(q.w);
                if theta > std::f32::consts::PI {
                    theta -= 2.0 * std::f32::consts::PI;
                } else if theta <= -std::f32::consts::PI {
                    theta += 2.0 * std::f32::consts::PI;
                }
                if !theta.is_finite() {
                    theta = 0.0;
                }
                if let Some((lo, hi)) = limits {
                    theta = theta.clamp(lo, hi);
                }
                renormalize(Quat::from_axis_angle(&axis, theta) * reference)
            }
        }
    }

    /// Checks the settings of a constraint built by hand.
    pub(crate) fn validate(&self) -> Result<(), IkError> {
        match *self {
            Constraint::Free => Ok(()),
            Constraint::BallSocket { max_angle, reference } => {
                if !max_angle.is_finite() || max_angle < 0.0 {
                    return Err(IkError::InvalidSetting { what: "ball-socket max angle", value: max_angle });
                }
                if let Some(r) = reference {
                    crate::error::check_finite_vec("ball-socket reference", &r)?;
                }
                Ok(())
            }
            Constraint::Hinge { axis, reference, limits } => {
                Constraint::hinge(axis.into_inner(), reference, limits).map(|_| ())
            }
        }
    }
}

/// Renormalizes a quaternion that drifted, falling back to the identity if it collapsed.
#[inline]
pub(crate) fn renormalize(q: Quat) -> Quat {
    let c = q.into_inner();
    let n = c.norm();
    if n.is_finite() && n > EPSILON { Quat::new_unchecked(c * (1.0 / n)) } else { Quat::identity() }
}

/// [`renormalize`] for a product of rotations that is unit up to rounding, as every
/// closed-form solver writes, held in a 4-lane register (`(x, y, z, w)`): with
/// `|q|² = 1 + e`, `|e| ≤ 1e-4`, one Newton step for `1/√(1 + e)` about 1, `1 − e/2`,
/// leaves `q` unit to `3e²/8 ≤ 4e-9`, with no square root or division at the end of the
/// solve's dependency chain. Anything further off (a drifted input rotation, a collapsed
/// or non-finite one) takes [`renormalize`].
#[inline(always)]
pub(crate) fn renormalize_near_unit4(q: F4) -> F4 {
    let e = q.dot(q).x() - 1.0;
    if e.abs() <= 1e-4 { q.mul(F4::splat(1.0 - 0.5 * e)) } else { F4::quat(&renormalize(q.to_quat())) }
}

/// A chain of joints, each the child of the previous: local transforms plus the world
/// transform of the first joint's parent (the "root" or offset).
///
/// A chain is read from a [`Pose`] by skeleton joint indices ([`IkChain::from_pose`],
/// [`IkChain::read_pose`]), solved ([`crate::CcdSolver`], [`crate::FabrikSolver`]) and
/// written back ([`IkChain::write_pose`]). Reading and writing allocate nothing once the
/// chain exists. The rotations present when the chain was last read are remembered as the
/// chain's *start* rotations; FABRIK turns each joint from its start rotation.
#[derive(Clone, Debug)]
pub struct IkChain {
    joints: Vec<usize>,
    root: Transform,
    locals: Vec<Transform>,
    start: Vec<Quat>,
    constraints: Vec<Constraint>,
    worlds: Vec<Transform>,
}

impl IkChain {
    /// A chain from local transforms (each the child of the previous) under `root`, with
    /// no skeleton joints attached ([`IkChain::write_pose`] then writes nothing).
    ///
    /// # Errors
    /// No joints, or a non-finite transform.
    pub fn from_transforms(root: Transform, locals: Vec<Transform>) -> Result<Self, IkError> {
        if locals.is_empty() {
            return Err(IkError::EmptyChain);
        }
        if !root.is_finite() {
            return Err(IkError::NonFinite { what: "root transform" });
        }
        if !locals.iter().all(Transform::is_finite) {
            return Err(IkError::NonFinite { what: "joint transform" });
        }
        let n = locals.len();
        let mut chain = Self {
            joints: Vec::new(),
            root,
            start: locals.iter().map(|t| t.rotation).collect(),
            locals,
            constraints: vec![Constraint::Free; n],
            worlds: vec![Transform::IDENTITY; n],
        };
        chain.update_worlds(0);
        Ok(chain)
    }

    /// A chain over skeleton `joints` (each the parent of the next), read from `pose`.
    /// `model_to_world` places the skeleton in the world (identity for model space); the
    /// chain's root becomes the world transform of `joints[0]`'s parent.
    ///
    /// # Errors
    /// No joints, a joint out of range, consecutive joints that are not parent and child,
    /// or a pose that does not match the skeleton.
    pub fn from_pose(
        skeleton: &Skeleton,
        pose: &Pose,
        joints: &[usize],
        model_to_world: &Transform,
    ) -> Result<Self, IkError> {
        if joints.is_empty() {
            return Err(IkError::EmptyChain);
        }
        let mut chain = Self {
            joints: joints.to_vec(),
            root: Transform::IDENTITY,
            locals: vec![Transform::IDENTITY; joints.len()],
            start: vec![Quat::identity(); joints.len()],
            constraints: vec![Constraint::Free; joints.len()],
            worlds: vec![Transform::IDENTITY; joints.len()],
        };
        for (i, &j) in joints.iter().enumerate() {
            if j >= skeleton.len() {
                return Err(IkError::JointOutOfRange { joint: j, count: skeleton.len() });
            }
            if i > 0 && skeleton.parent(j) != Some(joints[i - 1]) {
                return Err(IkError::NotAChain { parent: joints[i - 1], child: j });
            }
        }
        chain.read_pose(skeleton, pose, model_to_world)?;
        Ok(chain)
    }

    /// Re-reads the chain's local transforms and root from `pose` (no allocation). The
    /// read rotations become the start rotations.
    ///
    /// # Errors
    /// A pose that does not match the skeleton, or non-finite transforms.
    pub fn read_pose(&mut self, skeleton: &Skeleton, pose: &Pose, model_to_world: &Transform) -> Result<(), IkError> {
        pose.check_skeleton(skeleton.id(), skeleton.len())?;
        let Some(&first) = self.joints.first() else {
            return Err(IkError::EmptyChain);
        };
        if let Some(&bad) = self.joints.iter().find(|&&j| j >= skeleton.len()) {
            return Err(IkError::JointOutOfRange { joint: bad, count: skeleton.len() });
        }
        let parent = match skeleton.parent(first) {
            Some(p) => pose.global(skeleton, p).expect("pose length and joint index were checked"),
            None => Transform::IDENTITY,
        };
        let root = model_to_world.combine(&parent);
        if !root.is_finite() {
            return Err(IkError::NonFinite { what: "root transform" });
        }
        self.root = root;
        for (i, &j) in self.joints.iter().enumerate() {
            let t = pose.locals()[j];
            if !t.is_finite() {
                return Err(IkError::NonFinite { what: "joint transform" });
            }
            self.locals[i] = t;
            self.start[i] = t.rotation;
        }
        self.update_worlds(0);
        Ok(())
    }

    /// Writes the chain's local transforms back into `pose` at its skeleton joints.
    ///
    /// # Errors
    /// A joint past the end of `pose`.
    pub fn write_pose(&self, pose: &mut Pose) -> Result<(), IkError> {
        let count = pose.len();
        for (&j, t) in self.joints.iter().zip(&self.locals) {
            let slot = pose.locals_mut().get_mut(j).ok_or(IkError::JointOutOfRange { joint: j, count })?;
            *slot = *t;
        }
        Ok(())
    }

    /// Number of joints.
    pub fn len(&self) -> usize {
        self.locals.len()
    }

    /// Always false: a chain has at least one joint.
    pub fn is_empty(&self) -> bool {
        self.locals.is_empty()
    }

    /// Skeleton indices of the chain's joints (empty for a chain built from transforms).
    pub fn joints(&self) -> &[usize] {
        &self.joints
    }

    /// World transform of the first joint's parent.
    pub fn root(&self) -> &Transform {
        &self.root
    }

    /// Replaces the root transform.
    ///
    /// # Errors
    /// A non-finite transform.
    pub fn set_root(&mut self, root: Transform) -> Result<(), IkError> {
        if !root.is_finite() {
            return Err(IkError::NonFinite { what: "root transform" });
        }
        self.root = root;
        self.update_worlds(0);
        Ok(())
    }

    /// The local transforms.
    pub fn locals(&self) -> &[Transform] {
        &self.locals
    }

    /// Sets one local transform, which also becomes that joint's start rotation.
    ///
    /// # Errors
    /// An index past the end or a non-finite transform.
    pub fn set_local(&mut self, index: usize, t: Transform) -> Result<(), IkError> {
        if index >= self.len() {
            return Err(IkError::JointOutOfRange { joint: index, count: self.len() });
        }
        if !t.is_finite() {
            return Err(IkError::NonFinite { what: "joint transform" });
        }
        self.locals[index] = t;
        self.start[index] = t.rotation;
        self.update_worlds(index);
        Ok(())
    }

    /// World transforms of every joint, as of the last change.
    pub fn worlds(&self) -> &[Transform] {
        &self.worlds
    }

    /// World position of the last joint (the end effector).
    pub fn end_position(&self) -> Vec3 {
        self.worlds[self.worlds.len() - 1].translation
    }

    /// The constraints, one per joint.
    pub fn constraints(&self) -> &[Constraint] {
        &self.constraints
    }

    /// Sets the constraint of chain joint `index` (the last joint's is never used: it
    /// does not move anything).
    ///
    /// # Errors
    /// An index past the end, or invalid settings.
    pub fn set_constraint(&mut self, index: usize, c: Constraint) -> Result<(), IkError> {
        if index >= self.len() {
            return Err(IkError::ConstraintOutOfRange { index, len: self.len() });
        }
        c.validate()?;
        self.constraints[index] = c;
        Ok(())
    }

    /// True when any joint has a constraint.
    pub fn is_constrained(&self) -> bool {
        self.constraints.iter().any(|c| !matches!(c, Constraint::Free))
    }

    /// World rotation of joint `i`'s parent.
    #[inline]
    pub(crate) fn parent_world(&self, i: usize) -> &Transform {
        if i == 0 { &self.root } else { &self.worlds[i - 1] }
    }

    /// Joint `i`'s bone (towards its child) in its own frame, scale applied; zero for the last.
    #[inline]
    pub(crate) fn bone(&self, i: usize) -> Vec3 {
        match self.locals.get(i + 1) {
            Some(child) => self.locals[i].scale.component_mul(&child.translation),
            None => Vec3::zeros(),
        }
    }

    /// Recomputes world transforms from joint `from` on.
    #[inline]
    pub(crate) fn update_worlds(&mut self, from: usize) {
        for i in from..self.locals.len() {
            self.worlds[i] = self.parent_world(i).combine(&self.locals[i]);
        }
    }

    /// Recomputes the world transform of joint `i` only.
    #[inline]
    pub(crate) fn update_world(&mut self, i: usize) {
        self.worlds[i] = self.parent_world(i).combine(&self.locals[i]);
    }

    /// Turns joint `i` by the world-space rotation `delta` (about the joint), keeping the
    /// result normalized. World transforms are not updated.
    #[inline]
    pub(crate) fn rotate_world(&mut self, i: usize, delta: &Quat) {
        let p = self.parent_world(i).rotation;
        let r = p.inverse() * delta * p * self.locals[i].rotation;
        self.locals[i].rotation = renormalize(r);
    }

    /// Applies joint `i`'s constraint to its local rotation. World transforms are not updated.
    #[inline]
    pub(crate) fn constrain(&mut self, i: usize) {
        if i + 1 >= self.locals.len() {
            return;
        }
        let c = self.constraints[i];
        if matches!(c, Constraint::Free) {
            return;
        }
        let parent_bone = self.locals[i].translation;
        let bone = self.bone(i);
        self.locals[i].rotation = c.apply(self.locals[i].rotation, &bone, &parent_bone);
    }

    /// Applies every constraint, parents first, and updates the world transforms.
    pub fn apply_constraints(&mut self) {
        for i in 0..self.len() {
            self.constrain(i);
        }
        self.update_worlds(0);
    }

    pub(crate) fn start_rotation(&self, i: usize) -> Quat {
        self.start[i]
    }

    pub(crate) fn set_rotation(&mut self, i: usize, r: Quat) {
        self.locals[i].rotation = renormalize(r);
    }
}
