//! The skeleton: joint names, parents (stored parents-first), rest pose and inverse binds.

use super::id::SkeletonId;
use super::locals::Pose;
use crate::length::LengthMismatch;
use anim_math::{Mat4, Transform};
use std::collections::HashMap;
use thiserror::Error;

/// One joint as a source (a file, a generator) describes it, in any order.
#[derive(Clone, Debug)]
pub struct JointDesc {
    /// Joint name (may be empty; names need not be unique).
    pub name: String,
    /// Index of the parent in the same source list, or `None` for a root.
    pub parent: Option<usize>,
    /// Local rest transform (the pose the joints have with no animation applied).
    pub rest: Transform,
}

impl JointDesc {
    /// Convenience constructor.
    pub fn new(name: impl Into<String>, parent: Option<usize>, rest: Transform) -> Self {
        Self { name: name.into(), parent, rest }
    }
}

/// The joint hierarchy shared by every instance of a character.
///
/// Joints are stored **parents before children** (depth-first, roots and siblings in
/// source order), so local-to-model is one forward loop and a subtree is a contiguous
/// range. [`Skeleton::source_index`] maps back to the order the joints were given in.
///
/// It holds the book's three per-joint data sets: the **rest pose** (the local transforms
/// with no animation), the **bind pose** (the pose the mesh was bound in; defaults to the
/// rest pose) and the **inverse bind matrices** (the inverse model-space bind transforms;
/// derived from the bind pose unless an importer supplies them).
///
/// ```
/// use anim_core::pose::{JointDesc, Skeleton};
/// use anim_math::{Transform, Vec3};
///
/// // Joints in any order: the child first here. Stored parents-first.
/// let up = |y: f32| Transform::from_translation(Vec3::new(0.0, y, 0.0));
/// let skeleton = Skeleton::new(vec![
///     JointDesc::new("spine", Some(1), up(0.5)),
///     JointDesc::new("hips", None, up(1.0)),
/// ])?;
/// assert_eq!(skeleton.names(), ["hips", "spine"]);
/// assert_eq!(skeleton.parent(1), Some(0));
/// assert_eq!(skeleton.find("spine"), Some(1));
/// assert_eq!(skeleton.source_index(1), Some(0)); // where "spine" was given
/// # Ok::<(), anim_core::pose::SkeletonError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Skeleton {
    names: Vec<String>,
    parents: Vec<Option<usize>>,
    rest_pose: Pose,
    bind_pose: Pose,
    inverse_bind: Vec<Mat4>,
    source_index: Vec<usize>,
    from_source: Vec<usize>,
    subtree_end: Vec<usize>,
    by_name: HashMap<String, usize>,
    id: SkeletonId,
}

impl Skeleton {
    /// The largest joint count supported (joint indices in meshes are `u16`).
    pub const MAX_JOINTS: usize = u16::MAX as usize;

    /// Builds a skeleton from joints in any order, sorting them parents-first.
    ///
    /// # Errors
    /// A parent index out of range, a cycle in the parent links, a non-finite rest
    /// transform, or more than [`Skeleton::MAX_JOINTS`] joints.
    pub fn new(joints: Vec<JointDesc>) -> Result<Self, SkeletonError> {
        let n = joints.len();
        if n > Self::MAX_JOINTS {
            return Err(SkeletonError::TooManyJoints { count: n, max: Self::MAX_JOINTS });
        }
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, j) in joints.iter().enumerate() {
            if !j.rest.is_finite() {
                return Err(SkeletonError::NonFinite { joint: i, name: j.name.clone(), what: "rest" });
            }
            match j.parent {
                Some(p) if p >= n => {
                    return Err(SkeletonError::ParentOutOfRange {
                        joint: i,
                        name: j.name.clone(),
                        parent: p,
                        count: n,
                    });
                }
                Some(p) if p == i => return Err(SkeletonError::Cycle { joint: i, name: j.name.clone() }),
                Some(p) => children[p].push(i),
                None => roots.push(i),
            }
        }
        // Depth-first pre-order from the roots: parents come first, subtrees are contiguous.
        let mut order = Vec::with_capacity(n);
        let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
        while let Some(i) = stack.pop() {
            order.push(i);
            stack.extend(children[i].iter().rev().copied());
        }
        if order.len() != n {
            // Every joint not reached from a root hangs below a cycle.
            let mut seen = vec![false; n];
            for &i in &order {
                seen[i] = true;
            }
            let joint = (0..n).find(|&i| !seen[i]).expect("fewer joints visited than exist, so one is unseen");
            return Err(SkeletonError::Cycle { joint, name: joints[joint].name.clone() });
        }
        let mut from_source = vec![0; n];
        for (dst, &src) in order.iter().enumerate() {
            from_source[src] = dst;
        }
        let parents: Vec<Option<usize>> = order.iter().map(|&src| joints[src].parent.map(|p| from_source[p])).collect();
        let names: Vec<String> = order.iter().map(|&src| joints[src].name.clone()).collect();
        let id = SkeletonId::of(&parents, &names);
        let rest = Pose::from_locals(order.iter().map(|&src| joints[src].rest).collect()).with_skeleton_id(id);
        let mut subtree_end: Vec<usize> = (1..=n).collect();
        for i in (0..n).rev() {
            if let Some(p) = parents[i] {
                subtree_end[p] = subtree_end[p].max(subtree_end[i]);
            }
        }
        let mut by_name = HashMap::with_capacity(n);
        for (i, name) in names.iter().enumerate() {
            by_name.entry(name.clone()).or_insert(i);
        }
        let mut skeleton = Skeleton {
            names,
            parents,
            bind_pose: rest.clone(),
            rest_pose: rest,
            inverse_bind: Vec::new(),
            source_index: order,
            from_source,
            subtree_end,
            by_name,
            id,
        };
        skeleton.inverse_bind = skeleton.inverse_bind_from_bind_pose();
        Ok(skeleton)
    }

    /// Replaces the bind pose (local transforms, in skeleton order) and re-derives the
    /// inverse bind matrices from it.
    ///
    /// # Errors
    /// Wrong length or a non-finite transform.
    pub fn with_bind_pose(mut self, bind: Pose) -> Result<Self, SkeletonError> {
        self.check_len("bind pose", bind.len())?;
        if let Some(i) = bind.locals().iter().position(|t| !t.is_finite()) {
            return Err(SkeletonError::NonFinite { joint: i, name: self.names[i].clone(), what: "bind" });
        }
        self.bind_pose = bind.with_skeleton_id(self.id);
        self.inverse_bind = self.inverse_bind_from_bind_pose();
        Ok(self)
    }

    /// Replaces the inverse bind matrices (skeleton order), e.g. with those a file
    /// supplies. The bind pose is left as it is.
    ///
    /// # Errors
    /// Wrong length or a non-finite matrix.
    pub fn with_inverse_bind(mut self, inverse_bind: Vec<Mat4>) -> Result<Self, SkeletonError> {
        self.check_len("inverse bind matrices", inverse_bind.len())?;
        if let Some(i) = inverse_bind.iter().position(|m| !m.iter().all(|v| v.is_finite())) {
            return Err(SkeletonError::NonFinite { joint: i, name: self.names[i].clone(), what: "inverse bind" });
        }
        self.inverse_bind = inverse_bind;
        Ok(self)
    }

    /// Replaces the rest pose (skeleton order). Bind pose and inverse binds stay.
    ///
    /// # Errors
    /// Wrong length or a non-finite transform.
    pub fn with_rest_pose(mut self, rest: Pose) -> Result<Self, SkeletonError> {
        self.check_len("rest pose", rest.len())?;
        if let Some(i) = rest.locals().iter().position(|t| !t.is_finite()) {
            return Err(SkeletonError::NonFinite { joint: i, name: self.names[i].clone(), what: "rest" });
        }
        self.rest_pose = rest.with_skeleton_id(self.id);
        Ok(self)
    }

    fn check_len(&self, what: &'static str, got: usize) -> Result<(), SkeletonError> {
        Ok(LengthMismatch::check(what, got, self.len())?)
    }

    fn inverse_bind_from_bind_pose(&self) -> Vec<Mat4> {
        let mut model = vec![Mat4::identity(); self.len()];
        self.bind_pose
            .local_to_model(self, &mut model)
            .expect("bind pose and buffer both have the skeleton's joint count");
        model.iter().map(|m| m.try_inverse().unwrap_or_else(Mat4::identity)).collect()
    }

    /// Number of joints.
    #[inline]
    pub fn len(&self) -> usize {
        self.parents.len()
    }

    /// True when there are no joints.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
    }

    /// Parent of every joint (`None` for roots); a parent index is always smaller than
    /// its child's.
    #[inline]
    pub fn parents(&self) -> &[Option<usize>] {
        &self.parents
    }

    /// Parent of one joint.
    #[inline]
    pub fn parent(&self, joint: usize) -> Option<usize> {
        self.parents.get(joint).copied().flatten()
    }

    /// Joint names, in skeleton order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Name of one joint.
    pub fn name(&self, joint: usize) -> Option<&str> {
        self.names.get(joint).map(String::as_str)
    }

    /// The first joint with this name.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The identity of this skeleton's layout (joint count, parents, names): what skins,
    /// runtime clips and poses made for it remember and are checked against.
    pub fn id(&self) -> SkeletonId {
        self.id
    }

    /// The rest pose: local transforms with no animation applied (marked with this
    /// skeleton's [`SkeletonId`], as its clones are).
    pub fn rest_pose(&self) -> &Pose {
        &self.rest_pose
    }

    /// The bind pose: local transforms the mesh was bound in.
    pub fn bind_pose(&self) -> &Pose {
        &self.bind_pose
    }

    /// Inverse model-space bind matrix of every joint.
    pub fn inverse_bind(&self) -> &[Mat4] {
        &self.inverse_bind
    }

    /// Index the joint had in the list given to [`Skeleton::new`].
    pub fn source_index(&self, joint: usize) -> Option<usize> {
        self.source_index.get(joint).copied()
    }

    /// Skeleton index of the joint that had index `source` in the source list.
    pub fn from_source_index(&self, source: usize) -> Option<usize> {
        self.from_source.get(source).copied()
    }

    /// True when `joint` is `root` or lies below it. O(1): subtrees are contiguous.
    #[inline]
    pub fn is_in_hierarchy(&self, root: usize, joint: usize) -> bool {
        root < self.len() && joint >= root && joint < self.subtree_end[root]
    }

    /// The range of joints making up the subtree under `root` (itself included). Subtrees
    /// are always contiguous: [`Skeleton::new`] sorts the joints depth-first, parents
    /// first, and partial updates ([`crate::pose::hierarchy::local_to_model_from`]) rely on it.
    pub fn subtree(&self, root: usize) -> std::ops::Range<usize> {
        if root < self.len() { root..self.subtree_end[root] } else { 0..0 }
    }
}

/// Why a [`Skeleton`] could not be built.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SkeletonError {
    /// A joint names a parent index that does not exist.
    #[error("joint {joint} ({name:?}) has parent {parent}, but there are only {count} joints")]
    ParentOutOfRange {
        /// Index of the joint in the source order.
        joint: usize,
        /// Its name.
        name: String,
        /// The parent index it names.
        parent: usize,
        /// Number of joints.
        count: usize,
    },
    /// The parent links form a cycle, so there is no root above these joints.
    #[error("joint {joint} ({name:?}) is part of a parent cycle")]
    Cycle {
        /// Index (source order) of one joint on the cycle.
        joint: usize,
        /// Its name.
        name: String,
    },
    /// A rest or bind transform has a NaN or infinite component.
    #[error("joint {joint} ({name:?}) has a non-finite {what} transform")]
    NonFinite {
        /// Index of the joint.
        joint: usize,
        /// Its name.
        name: String,
        /// Which transform: "rest", "bind" or "inverse bind".
        what: &'static str,
    },
    /// A per-joint array does not have the skeleton's joint count (`expected`).
    #[error("{0} (one per skeleton joint)")]
    WrongLength(#[from] LengthMismatch),
    /// More joints than the runtime supports (joint indices are stored as `u16`).
    #[error("{count} joints is more than the supported {max}")]
    TooManyJoints {
        /// Joint count asked for.
        count: usize,
        /// The limit.
        max: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use anim_math::Vec3;

    fn t(y: f32) -> Transform {
        Transform::from_translation(Vec3::new(0.0, y, 0.0))
    }

    #[test]
    fn sorts_children_after_parents_and_remaps() {
        // Source order lists children first (as Blender exports do).
        let s = Skeleton::new(vec![
            JointDesc::new("hand", Some(2), t(1.0)),
            JointDesc::new("foot", Some(3), t(1.0)),
            JointDesc::new("arm", Some(3), t(1.0)),
            JointDesc::new("root", None, t(0.0)),
        ])
        .unwrap();
        assert_eq!(s.name(0), Some("root"));
        for (i, p) in s.parents().iter().enumerate() {
            if let Some(p) = p {
                assert!(*p < i);
            }
        }
        let hand = s.find("hand").unwrap();
        let arm = s.find("arm").unwrap();
        assert_eq!(s.parent(hand), Some(arm));
        assert_eq!(s.source_index(hand), Some(0));
        assert_eq!(s.from_source_index(0), Some(hand));
        assert!(s.is_in_hierarchy(arm, hand));
        assert!(!s.is_in_hierarchy(arm, s.find("foot").unwrap()));
        assert!(s.is_in_hierarchy(0, hand));
        assert_eq!(s.subtree(arm).len(), 2);
    }

    #[test]
    fn rejects_cycles_and_bad_parents() {
        let e = Skeleton::new(vec![
            JointDesc::new("root", None, t(0.0)),
            JointDesc::new("a", Some(2), t(0.0)),
            JointDesc::new("b", Some(1), t(0.0)),
        ])
        .unwrap_err();
        assert!(matches!(e, SkeletonError::Cycle { .. }));
        let e = Skeleton::new(vec![JointDesc::new("a", Some(0), t(0.0))]).unwrap_err();
        assert!(matches!(e, SkeletonError::Cycle { joint: 0, .. }));
        let e = Skeleton::new(vec![JointDesc::new("a", Some(5), t(0.0))]).unwrap_err();
        assert!(matches!(e, SkeletonError::ParentOutOfRange { parent: 5, .. }));
        let mut bad = t(0.0);
        bad.translation.x = f32::NAN;
        let e = Skeleton::new(vec![JointDesc::new("a", None, bad)]).unwrap_err();
        assert!(matches!(e, SkeletonError::NonFinite { what: "rest", .. }));
    }

    #[test]
    fn inverse_bind_from_bind_pose() {
        let s = Skeleton::new(vec![JointDesc::new("r", None, t(1.0)), JointDesc::new("c", Some(0), t(2.0))]).unwrap();
        let ibm = s.inverse_bind()[1];
        let p = ibm.transform_point(&anim_math::Point3::new(0.0, 3.0, 0.0));
        assert!((p.coords - Vec3::zeros()).norm() < 1e-6);
        let e = s.clone().with_inverse_bind(vec![Mat4::identity()]).unwrap_err();
        assert!(matches!(e, SkeletonError::WrongLength(LengthMismatch { got: 1, expected: 2, .. })));
    }
}
