//! Automatic mapping: joint names read (the crate's `names` module), placed by the hierarchy.
//!
//! 1. Every joint's name gives a class (hips, torso, neck, head, shoulder, upper arm, …,
//!    or a generic `arm` / `leg` / torso joint) and a side.
//! 2. The chest is where the body branches: the lowest common ancestor of the two arms
//!    (their shoulders, else upper arms) and the neck (else the head), whatever it is
//!    called. The hips are the joint named so (`hips`, `pelvis`), else the highest torso
//!    joint above the chest; the spine chain is what lies between them.
//! 3. Each limb is one path down the hierarchy: the candidates of a side are taken in
//!    depth order, each below the previous one. A specific name (`forearm`) pins its role;
//!    generic ones (`leg_joint_L_1`, `_2`, …, or Mixamo's `LeftLeg` between `LeftUpLeg`
//!    and `LeftFoot`) fill the roles left between the pins in order, optional roles
//!    (shoulder, toes) given up first when there are fewer joints than roles. A second
//!    joint of one role (Rigify's `DEF-forearm.L.001`) is a twist segment, not mapped.
//! 4. Without a `head` name, the last of two or more neck joints is the head (CesiumMan's
//!    `Skeleton_neck_joint_2`).
//!
//! What could not be mapped is reported ([`AutoMap::unmapped`]); the result is checked by
//! [`HumanoidMap::validate`] when a rig is built from it.

use crate::map::HumanoidMap;
use crate::names::{Class, read};
use crate::profile::{Role, Side};
use anim_core::pose::Skeleton;

/// What automatic mapping found.
#[derive(Clone, Debug, PartialEq)]
pub struct AutoMap {
    /// The map.
    pub map: HumanoidMap,
    /// Roles it could not map (required or optional), in [`Role::ALL`] order.
    pub unmapped: Vec<Role>,
    /// Joints that looked like a role but were left out, with the reason.
    pub notes: Vec<String>,
}

impl AutoMap {
    /// True when every required role was mapped.
    pub fn is_complete(&self) -> bool {
        self.unmapped.iter().all(|r| !r.is_required())
    }
}

/// Maps a skeleton's joints to the humanoid roles by their names and the hierarchy (see
/// the module docs).
pub fn auto_map(skeleton: &Skeleton) -> AutoMap {
    let n = skeleton.len();
    let readings: Vec<_> = (0..n).map(|j| read(skeleton.name(j).unwrap_or(""))).collect();
    let mut depth = vec![0usize; n];
    for j in 0..n {
        if let Some(p) = skeleton.parent(j) {
            depth[j] = depth[p] + 1;
        }
    }
    let mut map = HumanoidMap::new();
    let mut notes = Vec::new();
    let of = |class: Class, side: Option<Side>| -> Vec<usize> {
        (0..n).filter(|&j| readings[j].class == class && readings[j].side == side).collect()
    };
    let first = |v: &[usize]| v.iter().copied().min_by_key(|&j| (depth[j], j));

    // Limbs first: the chest is found from the arms.
    for side in Side::BOTH {
        let arm_classes = [Class::Shoulder, Class::UpperArm, Class::LowerArm, Class::Hand];
        let roles = [Role::Shoulder(side), Role::UpperArm(side), Role::LowerArm(side), Role::Hand(side)];
        limb(skeleton, &readings, &depth, side, &arm_classes, Class::Arm, &roles, 0, &mut map, &mut notes);
        let leg_classes = [Class::UpperLeg, Class::LowerLeg, Class::Foot, Class::Toes];
        let roles = [Role::UpperLeg(side), Role::LowerLeg(side), Role::Foot(side), Role::Toes(side)];
        limb(skeleton, &readings, &depth, side, &leg_classes, Class::Leg, &roles, 3, &mut map, &mut notes);
    }

    // Head and neck.
    let necks = of(Class::Neck, None);
    let mut head = first(&of(Class::Head, None));
    let mut neck = first(&necks);
    if head.is_none() {
        // The deepest neck joint on the first one's path is the head.
        if let Some(n0) = neck {
            let deepest = necks
                .iter()
                .copied()
                .filter(|&j| j != n0 && skeleton.is_in_hierarchy(n0, j))
                .max_by_key(|&j| (depth[j], j));
            if deepest.is_some() {
                head = deepest;
            }
        }
    }
    if let (Some(nk), Some(h)) = (neck, head)
        && (nk == h || !skeleton.is_in_hierarchy(nk, h))
    {
        notes.push(format!("neck {:?} is not above the head; not mapped", name(skeleton, nk)));
        neck = None;
    }
    map.set(Role::Head, head);
    map.set(Role::Neck, neck);

    // The chest: where the arms and the neck meet.
    let arm_root = |s: Side| map.get(Role::Shoulder(s)).or(map.get(Role::UpperArm(s)));
    let top = neck.or(head);
    let chest = match (arm_root(Side::Left), arm_root(Side::Right), top) {
        (Some(l), Some(r), Some(t)) => lowest_common_ancestor(skeleton, &[l, r, t]),
        (Some(l), Some(r), None) => lowest_common_ancestor(skeleton, &[l, r]),
        _ => first(&of(Class::Chest, None)),
    };
    let chest = chest.filter(|c| Some(*c) != top);
    map.set(Role::Chest, chest);

    // The hips: named so, else the highest torso joint above the chest.
    let hips = first(&of(Class::Hips, None))
        .filter(|&h| chest.is_none_or(|c| c != h && skeleton.is_in_hierarchy(h, c)))
        .or_else(|| {
            let c = chest?;
            of(Class::Torso, None)
                .into_iter()
                .filter(|&t| t != c && skeleton.is_in_hierarchy(t, c))
                .min_by_key(|&t| (depth[t], t))
        });
    map.set(Role::Hips, hips);
    if let (Some(h), Some(c)) = (hips, chest) {
        let mut spine = Vec::new();
        let mut j = skeleton.parent(c);
        while let Some(k) = j {
            if k == h {
                break;
            }
            spine.push(k);
            j = skeleton.parent(k);
        }
        spine.reverse();
        map.set_spine(spine);
    }
    let unmapped = Role::ALL.into_iter().filter(|r| map.get(*r).is_none()).collect();
    AutoMap { map, unmapped, notes }
}

fn name(skeleton: &Skeleton, j: usize) -> &str {
    skeleton.name(j).unwrap_or("")
}

/// The lowest joint that has every joint of `joints` in its subtree.
fn lowest_common_ancestor(skeleton: &Skeleton, joints: &[usize]) -> Option<usize> {
    let mut a = Some(*joints.first()?);
    while let Some(c) = a {
        if joints.iter().all(|&j| skeleton.is_in_hierarchy(c, j)) {
            return Some(c);
        }
        a = skeleton.parent(c);
    }
    None
}

/// Maps one limb of one side (see the module docs, step 3). `roles` are in chain order
/// with their specific `classes`; `optional` is the index of the role given up first
/// (the shoulder at the front of an arm, the toes at the end of a leg).
#[allow(clippy::too_many_arguments)]
fn limb(
    skeleton: &Skeleton,
    readings: &[crate::names::Reading],
    depth: &[usize],
    side: Side,
    classes: &[Class; 4],
    generic: Class,
    roles: &[Role; 4],
    optional: usize,
    map: &mut HumanoidMap,
    notes: &mut Vec<String>,
) {
    let mut candidates: Vec<usize> = (0..skeleton.len())
        .filter(|&j| {
            readings[j].side == Some(side) && (readings[j].class == generic || classes.contains(&readings[j].class))
        })
        .collect();
    candidates.sort_by_key(|&j| (depth[j], j));
    // One path down: each accepted joint lies below the previous one.
    let mut path: Vec<(usize, Option<usize>)> = Vec::new(); // (joint, pinned role index)
    let mut pinned_seen = [false; 4];
    for j in candidates {
        if let Some(&(last, _)) = path.last()
            && !skeleton.is_in_hierarchy(last, j)
        {
            notes.push(format!("{:?} is not below {:?}; not mapped", name(skeleton, j), name(skeleton, last)));
            continue;
        }
        let pin = classes.iter().position(|c| *c == readings[j].class);
        if let Some(k) = pin {
            let behind = path.iter().filter_map(|p| p.1).any(|q| q >= k);
            if pinned_seen[k] || behind {
                // A second joint of a role (a twist segment), or one out of order.
                continue;
            }
            pinned_seen[k] = true;
        }
        path.push((j, pin));
    }
    // Generic joints fill the roles between the pins.
    let mut next_free = 0usize;
    let mut i = 0;
    while i < path.len() {
        if let Some(k) = path[i].1 {
            map.set(roles[k], Some(path[i].0));
            next_free = k + 1;
            i += 1;
            continue;
        }
        let gap_end = path[i..].iter().position(|p| p.1.is_some()).map_or(path.len(), |o| i + o);
        let limit = path[gap_end..].iter().find_map(|p| p.1).unwrap_or(4);
        let mut available: Vec<usize> = (next_free..limit).collect();
        let generics = gap_end - i;
        if generics < available.len()
            && let Some(pos) = available.iter().position(|&k| k == optional)
        {
            available.remove(pos);
        }
        for (&(joint, _), &k) in path[i..gap_end].iter().zip(&available) {
            map.set(roles[k], Some(joint));
        }
        for &(joint, _) in path[i..gap_end].iter().skip(available.len()) {
            notes.push(format!("{:?}: no role left on its limb; not mapped", name(skeleton, joint)));
        }
        next_free = limit;
        i = gap_end;
    }
}
