//! The humanoid profile: the named roles a character's joints can play.
//!
//! Twenty single-joint roles (hips, chest, neck, head, and per side shoulder, upper arm,
//! lower arm, hand, upper leg, lower leg, foot, toes) and one chain, the spine: the joints
//! strictly between the hips and the chest, of any length (zero included).

use std::fmt;

/// Left or right, from the character's own point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The character's left.
    Left,
    /// The character's right.
    Right,
}

impl Side {
    /// Both sides, left first.
    pub const BOTH: [Side; 2] = [Side::Left, Side::Right];

    /// `"left"` or `"right"`.
    pub fn name(self) -> &'static str {
        match self {
            Side::Left => "left",
            Side::Right => "right",
        }
    }

    /// 0 for left, 1 for right.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The other side.
    pub fn other(self) -> Side {
        match self {
            Side::Left => Side::Right,
            Side::Right => Side::Left,
        }
    }
}

/// One single-joint role of the humanoid profile. The spine chain is not a `Role`: it is
/// [`HumanoidMap::spine`](crate::map::HumanoidMap::spine).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The pelvis: the root of the body, whose translation carries the character.
    Hips,
    /// The top of the spine, where the neck and the shoulders (or arms) branch off.
    Chest,
    /// The (first) neck joint.
    Neck,
    /// The head.
    Head,
    /// Clavicle.
    Shoulder(Side),
    /// Shoulder joint (upper arm bone).
    UpperArm(Side),
    /// Elbow (forearm bone).
    LowerArm(Side),
    /// Wrist (hand).
    Hand(Side),
    /// Hip joint (thigh bone).
    UpperLeg(Side),
    /// Knee (shin bone).
    LowerLeg(Side),
    /// Ankle (foot).
    Foot(Side),
    /// Ball of the foot (toes).
    Toes(Side),
}

/// Number of single-joint roles.
pub const ROLE_COUNT: usize = 20;

/// The limb roles of one side in chain order, arm then leg.
const fn side_roles(s: Side) -> [Role; 8] {
    [
        Role::Shoulder(s),
        Role::UpperArm(s),
        Role::LowerArm(s),
        Role::Hand(s),
        Role::UpperLeg(s),
        Role::LowerLeg(s),
        Role::Foot(s),
        Role::Toes(s),
    ]
}

impl Role {
    /// Every role, in [`Role::index`] order: body (hips, chest, neck, head), then the left
    /// limbs (arm, leg), then the right ones.
    pub const ALL: [Role; ROLE_COUNT] = {
        let l = side_roles(Side::Left);
        let r = side_roles(Side::Right);
        [
            Role::Hips,
            Role::Chest,
            Role::Neck,
            Role::Head,
            l[0],
            l[1],
            l[2],
            l[3],
            l[4],
            l[5],
            l[6],
            l[7],
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            r[6],
            r[7],
        ]
    };

    /// The role's position in [`Role::ALL`] (a dense index for per-role arrays).
    pub fn index(self) -> usize {
        let limb = |s: Side, k: usize| 4 + 8 * s.index() + k;
        match self {
            Role::Hips => 0,
            Role::Chest => 1,
            Role::Neck => 2,
            Role::Head => 3,
            Role::Shoulder(s) => limb(s, 0),
            Role::UpperArm(s) => limb(s, 1),
            Role::LowerArm(s) => limb(s, 2),
            Role::Hand(s) => limb(s, 3),
            Role::UpperLeg(s) => limb(s, 4),
            Role::LowerLeg(s) => limb(s, 5),
            Role::Foot(s) => limb(s, 6),
            Role::Toes(s) => limb(s, 7),
        }
    }

    /// The side of a limb role, `None` for the body roles.
    pub fn side(self) -> Option<Side> {
        match self {
            Role::Hips | Role::Chest | Role::Neck | Role::Head => None,
            Role::Shoulder(s)
            | Role::UpperArm(s)
            | Role::LowerArm(s)
            | Role::Hand(s)
            | Role::UpperLeg(s)
            | Role::LowerLeg(s)
            | Role::Foot(s)
            | Role::Toes(s) => Some(s),
        }
    }

    /// The role's name in map files: `hips`, `chest`, `neck`, `head`, and
    /// `left_shoulder`, `left_upper_arm`, `left_lower_arm`, `left_hand`, `left_upper_leg`,
    /// `left_lower_leg`, `left_foot`, `left_toes` (and the `right_` ones).
    pub fn name(self) -> &'static str {
        const NAMES: [&str; ROLE_COUNT] = [
            "hips",
            "chest",
            "neck",
            "head",
            "left_shoulder",
            "left_upper_arm",
            "left_lower_arm",
            "left_hand",
            "left_upper_leg",
            "left_lower_leg",
            "left_foot",
            "left_toes",
            "right_shoulder",
            "right_upper_arm",
            "right_lower_arm",
            "right_hand",
            "right_upper_leg",
            "right_lower_leg",
            "right_foot",
            "right_toes",
        ];
        NAMES[self.index()]
    }

    /// The role with this map-file name.
    pub fn from_name(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == name)
    }

    /// True for the roles a humanoid must have: hips, chest, head, and per side upper
    /// arm, lower arm, hand, upper leg, lower leg and foot. The neck, the shoulders and the
    /// toes are optional (CesiumMan has no clavicles; many rigs have no toe joint).
    pub fn is_required(self) -> bool {
        !matches!(self, Role::Neck | Role::Shoulder(_) | Role::Toes(_))
    }

    /// True for the leg roles (upper leg, lower leg, foot, toes).
    pub fn is_leg(self) -> bool {
        matches!(self, Role::UpperLeg(_) | Role::LowerLeg(_) | Role::Foot(_) | Role::Toes(_))
    }

    /// The role this one hangs below in the profile (the hips for the upper legs and the
    /// chest, the chest for the neck and shoulders, the previous joint of a limb), `None`
    /// for the hips. The map checks that a role's joint lies below its parent role's.
    pub fn parent(self) -> Option<Role> {
        match self {
            Role::Hips => None,
            Role::Chest | Role::UpperLeg(_) => Some(Role::Hips),
            Role::Neck | Role::Shoulder(_) => Some(Role::Chest),
            Role::Head => Some(Role::Neck),
            Role::UpperArm(s) => Some(Role::Shoulder(s)),
            Role::LowerArm(s) => Some(Role::UpperArm(s)),
            Role::Hand(s) => Some(Role::LowerArm(s)),
            Role::LowerLeg(s) => Some(Role::UpperLeg(s)),
            Role::Foot(s) => Some(Role::LowerLeg(s)),
            Role::Toes(s) => Some(Role::Foot(s)),
        }
    }

    /// The role at the far end of this role's bone (upper arm → lower arm, foot → toes,
    /// neck → head, chest → neck), `None` for the roles that end a chain (head, hand,
    /// toes) and for the hips, whose bone runs up the spine chain.
    pub fn bone_end(self) -> Option<Role> {
        match self {
            Role::Hips | Role::Head | Role::Hand(_) | Role::Toes(_) => None,
            Role::Chest => Some(Role::Neck),
            Role::Neck => Some(Role::Head),
            Role::Shoulder(s) => Some(Role::UpperArm(s)),
            Role::UpperArm(s) => Some(Role::LowerArm(s)),
            Role::LowerArm(s) => Some(Role::Hand(s)),
            Role::UpperLeg(s) => Some(Role::LowerLeg(s)),
            Role::LowerLeg(s) => Some(Role::Foot(s)),
            Role::Foot(s) => Some(Role::Toes(s)),
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_and_names_round_trip() {
        for (i, r) in Role::ALL.into_iter().enumerate() {
            assert_eq!(r.index(), i);
            assert_eq!(Role::from_name(r.name()), Some(r));
        }
        assert_eq!(Role::from_name("spine"), None);
        assert_eq!(Role::UpperLeg(Side::Right).name(), "right_upper_leg");
        assert_eq!(Role::ALL.iter().filter(|r| r.is_required()).count(), 15);
    }
}
