//! A character's map from the humanoid profile's roles to its skeleton's joints, and the
//! checks that make it usable: every joint exists and plays one role, the required roles
//! are there, each role lies below the one it hangs from, the legs hang from the hips, and
//! left is left.

use crate::profile::{ROLE_COUNT, Role, Side};
use anim_core::pose::Skeleton;
use anim_math::Vec3;
use std::fmt;
use thiserror::Error;

/// A place in the map: a single-joint role or a position in the spine chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    /// A single-joint role.
    Role(Role),
    /// Joint `i` of the spine chain, counted from the hips.
    Spine(usize),
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Slot::Role(r) => f.write_str(r.name()),
            Slot::Spine(i) => write!(f, "spine[{i}]"),
        }
    }
}

/// Roles mapped to skeleton joints (skeleton indices).
///
/// The spine chain holds the joints strictly between the hips and the chest, from the
/// hips up; it may be empty. Build one by hand, with
/// [`auto_map`](crate::auto::auto_map), or from a map file
/// ([`parse_map_file`](crate::file::parse_map_file)), then [`HumanoidMap::validate`] it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HumanoidMap {
    joints: [Option<usize>; ROLE_COUNT],
    spine: Vec<usize>,
}

impl HumanoidMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The joint playing `role`.
    #[inline]
    pub fn get(&self, role: Role) -> Option<usize> {
        self.joints[role.index()]
    }

    /// Sets (or with `None` clears) the joint playing `role`.
    pub fn set(&mut self, role: Role, joint: Option<usize>) {
        self.joints[role.index()] = joint;
    }

    /// The spine chain, from the hips up (the hips and the chest excluded).
    pub fn spine(&self) -> &[usize] {
        &self.spine
    }

    /// Replaces the spine chain.
    pub fn set_spine(&mut self, spine: Vec<usize>) {
        self.spine = spine;
    }

    /// Every mapped slot with its joint: the roles in [`Role::ALL`] order, then the spine.
    pub fn slots(&self) -> impl Iterator<Item = (Slot, usize)> + '_ {
        Role::ALL
            .into_iter()
            .filter_map(|r| self.get(r).map(|j| (Slot::Role(r), j)))
            .chain(self.spine.iter().enumerate().map(|(i, &j)| (Slot::Spine(i), j)))
    }

    /// The required roles that have no joint.
    pub fn missing(&self) -> Vec<Role> {
        Role::ALL.into_iter().filter(|r| r.is_required() && self.get(*r).is_none()).collect()
    }

    /// The nearest mapped role above `role` in the profile (the chest when a rig has no
    /// shoulder, for an upper arm), `None` for the hips.
    pub fn mapped_parent(&self, role: Role) -> Option<Role> {
        let mut p = role.parent();
        while let Some(r) = p {
            if self.get(r).is_some() {
                return Some(r);
            }
            p = r.parent();
        }
        None
    }

    /// The hips-to-chest chain: hips, the spine joints, chest (as far as mapped).
    pub fn torso_chain(&self) -> Vec<usize> {
        self.get(Role::Hips).into_iter().chain(self.spine.iter().copied()).chain(self.get(Role::Chest)).collect()
    }

    /// Checks the map against `skeleton`: joints in range and used once, the required
    /// roles present, each role strictly below its [`HumanoidMap::mapped_parent`]'s joint,
    /// the spine a chain from the hips to the chest, the upper legs hanging from the hips
    /// (or beside them, from the hips' parent, as CesiumMan's do) and not from the spine.
    /// Sides are checked by [`HumanoidMap::validate_sides`], which needs a pose.
    ///
    /// # Errors
    /// The first problem found, naming the slot at fault.
    pub fn validate(&self, skeleton: &Skeleton) -> Result<(), MapError> {
        let n = skeleton.len();
        let mut used: Vec<Option<Slot>> = vec![None; n];
        for (slot, joint) in self.slots() {
            if joint >= n {
                return Err(MapError::JointOutOfRange { slot, joint, count: n });
            }
            if let Some(first) = used[joint].replace(slot) {
                return Err(MapError::JointTwice { slot, first, joint: joint_name(skeleton, joint) });
            }
        }
        if let Some(&role) = self.missing().first() {
            return Err(MapError::MissingRole { role });
        }
        let below = |slot: Slot, joint: usize, above: Slot, over: usize| -> Result<(), MapError> {
            if joint != over && skeleton.is_in_hierarchy(over, joint) {
                Ok(())
            } else {
                Err(MapError::NotBelow {
                    slot,
                    joint: joint_name(skeleton, joint),
                    above,
                    above_joint: joint_name(skeleton, over),
                })
            }
        };
        let hips = self.get(Role::Hips).expect("required roles were checked above");
        // The torso: hips, spine…, chest, each below the previous one.
        let mut prev = (Slot::Role(Role::Hips), hips);
        for (i, &j) in self.spine.iter().enumerate() {
            below(Slot::Spine(i), j, prev.0, prev.1)?;
            prev = (Slot::Spine(i), j);
        }
        let chest = self.get(Role::Chest).expect("required roles were checked above");
        below(Slot::Role(Role::Chest), chest, prev.0, prev.1)?;
        let spine_root = self.spine.first().copied().unwrap_or(chest);
        for role in Role::ALL {
            let Some(joint) = self.get(role) else { continue };
            if let Role::UpperLeg(_) = role {
                // Below the hips but not up the spine, or beside the hips under their parent.
                let under_hips = joint != hips && skeleton.is_in_hierarchy(hips, joint);
                let beside = skeleton
                    .parent(hips)
                    .is_some_and(|p| skeleton.is_in_hierarchy(p, joint) && !skeleton.is_in_hierarchy(hips, joint));
                if !(under_hips || beside) || skeleton.is_in_hierarchy(spine_root, joint) {
                    return Err(MapError::LegOutsideHips {
                        role,
                        joint: joint_name(skeleton, joint),
                        hips: joint_name(skeleton, hips),
                    });
                }
                continue;
            }
            if matches!(role, Role::Hips | Role::Chest) {
                continue;
            }
            if let Some(parent) = self.mapped_parent(role) {
                let over = self.get(parent).expect("mapped_parent returns a mapped role");
                below(Slot::Role(role), joint, Slot::Role(parent), over)?;
            }
        }
        Ok(())
    }

    /// Checks left and right against the body in model-space joint positions `model`
    /// (one per joint, e.g. of the rest or reference pose, Y up): the left upper leg and
    /// upper arm must lie on the character's left of the right ones, where the
    /// character faces `forward` and left is `up × forward`.
    ///
    /// # Errors
    /// [`MapError::SideSwapped`] naming the left role whose joint is on the right.
    pub fn validate_sides(&self, skeleton: &Skeleton, model: &[Vec3], forward: &Vec3) -> Result<(), MapError> {
        let left_axis = Vec3::y().cross(forward);
        for (l, r) in [
            (Role::UpperLeg(Side::Left), Role::UpperLeg(Side::Right)),
            (Role::UpperArm(Side::Left), Role::UpperArm(Side::Right)),
        ] {
            let (Some(jl), Some(jr)) = (self.get(l), self.get(r)) else { continue };
            let (Some(pl), Some(pr)) = (model.get(jl), model.get(jr)) else { continue };
            if (pl - pr).dot(&left_axis) <= 0.0 {
                return Err(MapError::SideSwapped {
                    role: l,
                    joint: joint_name(skeleton, jl),
                    other: joint_name(skeleton, jr),
                });
            }
        }
        Ok(())
    }
}

impl HumanoidMap {
    /// [`HumanoidMap::validate`], then [`HumanoidMap::validate_sides`] on the rest pose,
    /// the character facing from its feet to its toes (`+Z` without toes).
    ///
    /// # Errors
    /// The first problem found.
    pub fn validate_with_rest(&self, skeleton: &Skeleton) -> Result<(), MapError> {
        self.validate(skeleton)?;
        let mut rest = vec![anim_math::Transform::IDENTITY; skeleton.len()];
        skeleton.rest_pose().globals(skeleton, &mut rest).expect("a skeleton's rest pose fits it");
        let positions: Vec<Vec3> = rest.iter().map(|t| t.translation).collect();
        self.validate_sides(skeleton, &positions, &facing(self, &positions))
    }
}

/// The horizontal part of `v`, unit (zero when `v` is vertical).
pub(crate) fn horizontal(v: &Vec3) -> Vec3 {
    let h = Vec3::new(v.x, 0.0, v.z);
    let n = h.norm();
    if n > 0.0 { h / n } else { Vec3::zeros() }
}

/// The facing direction from the feet to the toes (both sides) in model-space positions,
/// `+Z` (glTF's front) without toes.
pub(crate) fn facing(map: &HumanoidMap, model: &[Vec3]) -> Vec3 {
    let mut sum = Vec3::zeros();
    for s in Side::BOTH {
        if let (Some(f), Some(t)) = (map.get(Role::Foot(s)), map.get(Role::Toes(s)))
            && let (Some(pf), Some(pt)) = (model.get(f), model.get(t))
        {
            sum += horizontal(&(pt - pf));
        }
    }
    let f = horizontal(&sum);
    if f.norm() > 0.5 { f } else { Vec3::z() }
}

/// The name of a joint for messages (`"#12"` when it has none or is out of range).
pub(crate) fn joint_name(skeleton: &Skeleton, joint: usize) -> String {
    match skeleton.name(joint) {
        Some(n) if !n.is_empty() => n.to_owned(),
        _ => format!("#{joint}"),
    }
}

/// Why a [`HumanoidMap`] does not fit a skeleton.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum MapError {
    /// A slot names a joint index the skeleton does not have.
    #[error("{slot} is joint {joint}, but the skeleton has only {count} joints")]
    JointOutOfRange {
        /// The slot.
        slot: Slot,
        /// The joint index.
        joint: usize,
        /// The skeleton's joint count.
        count: usize,
    },
    /// One joint plays two roles.
    #[error("joint {joint:?} is mapped twice: to {first} and to {slot}")]
    JointTwice {
        /// The second slot naming it.
        slot: Slot,
        /// The first one.
        first: Slot,
        /// The joint's name.
        joint: String,
    },
    /// A required role has no joint.
    #[error("the required role {role} has no joint")]
    MissingRole {
        /// The role.
        role: Role,
    },
    /// A role's joint is not below the joint of the role it hangs from.
    #[error("{slot} ({joint:?}) must lie below {above} ({above_joint:?}) in the hierarchy")]
    NotBelow {
        /// The slot at fault.
        slot: Slot,
        /// Its joint.
        joint: String,
        /// The slot it must hang from.
        above: Slot,
        /// That slot's joint.
        above_joint: String,
    },
    /// An upper leg that hangs neither from the hips nor beside them (from the hips'
    /// parent), or hangs from the spine.
    #[error("{role} ({joint:?}) is outside the hips' subtree (hips {hips:?})")]
    LegOutsideHips {
        /// The upper-leg role.
        role: Role,
        /// Its joint.
        joint: String,
        /// The hips' joint.
        hips: String,
    },
    /// Left and right are swapped: the left role's joint lies on the character's right.
    #[error("{role} ({joint:?}) lies on the character's right of {other:?}: left and right are swapped")]
    SideSwapped {
        /// The left role.
        role: Role,
        /// Its joint.
        joint: String,
        /// The right role's joint.
        other: String,
    },
}

impl MapError {
    /// The slot the error is about.
    pub fn slot(&self) -> Slot {
        match self {
            MapError::JointOutOfRange { slot, .. }
            | MapError::JointTwice { slot, .. }
            | MapError::NotBelow { slot, .. } => *slot,
            MapError::MissingRole { role }
            | MapError::LegOutsideHips { role, .. }
            | MapError::SideSwapped { role, .. } => Slot::Role(*role),
        }
    }
}
