//! [`SkeletonId`]: which skeleton layout a skin, a runtime clip or a pose was made for.

/// The identity of a skeleton's layout: a hash of its joint count, parents and names.
///
/// Two skeletons with the same joints in the same order (the same file loaded twice, a
/// clone) have the same id; a trimmed runtime skeleton, or any other skeleton, has another.
/// [`Skin`](crate::skin::Skin)s, [`RuntimeClip`](crate::clip::RuntimeClip)s and poses
/// cloned from a skeleton's rest or bind pose remember the id of the skeleton they were
/// made for, and the jobs that combine them with a skeleton (local-to-model, palettes,
/// runtime-clip compilation, crowd jobs) check it once per call, so mixing data of two
/// skeletons is a typed error instead of a silently wrong pose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SkeletonId(u64);

impl SkeletonId {
    /// The id of the layout `parents` (skeleton order) with `names`: 64-bit FNV-1a over
    /// the joint count, each parent index and each name's length and bytes.
    pub(crate) fn of(parents: &[Option<usize>], names: &[String]) -> Self {
        const PRIME: u64 = 0x0000_0100_0000_01b3;
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |bytes: &[u8]| {
            for b in bytes {
                h ^= u64::from(*b);
                h = h.wrapping_mul(PRIME);
            }
        };
        eat(&(parents.len() as u64).to_le_bytes());
        for p in parents {
            eat(&p.map_or(u64::MAX, |p| p as u64).to_le_bytes());
        }
        for n in names {
            eat(&(n.len() as u64).to_le_bytes());
            eat(n.as_bytes());
        }
        Self(h)
    }

    /// The hash as a number (for logs and file headers).
    pub fn as_u64(self) -> u64 {
        self.0
    }
}

impl std::fmt::Display for SkeletonId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}
