//! Trimming a skeleton to the joints a character needs, and carrying clips, skins and
//! poses over to it.
//!
//! [`Skeleton::extract`] keeps the joints a mask selects **and all their ancestors** (a
//! kept joint's model matrix depends on every joint above it, so the mask is closed
//! upwards before anything is dropped). The kept joints stay in their relative order, which
//! is still parents-first and depth-first, so the new skeleton's subtrees are contiguous as
//! [`Skeleton`] requires. Names, rest pose, bind pose and inverse bind matrices are
//! carried over unchanged: the dropped joints are leaves or whole subtrees, so no kept
//! joint's model matrix changes.
//!
//! The returned [`JointMap`] maps indices between the two skeletons and remaps what refers
//! to joints: [`JointMap::clip`] (tracks of dropped joints are dropped, the rest
//! renumbered), [`JointMap::skin`] (every skin joint must be kept) and [`JointMap::pose`].
//!
//! ```
//! use anim_core::pose::{JointDesc, Skeleton};
//! use anim_math::Transform;
//!
//! let id = Transform::IDENTITY;
//! let full = Skeleton::new(vec![
//!     JointDesc::new("root", None, id),
//!     JointDesc::new("hips", Some(0), id),
//!     JointDesc::new("camera", Some(0), id),
//!     JointDesc::new("leg", Some(1), id),
//! ])
//! .unwrap();
//! // Keep the leg: its ancestors hips and root come along, the camera goes.
//! let keep: Vec<bool> = full.names().iter().map(|n| n == "leg").collect();
//! let (trimmed, map) = full.extract(&keep).unwrap();
//! assert_eq!(trimmed.names(), ["root", "hips", "leg"]);
//! assert_eq!(map.new_index(full.find("camera").unwrap()), None);
//! assert_eq!(map.old_index(2), full.find("leg"));
//! ```

use crate::LengthMismatch;
use crate::clip::{Clip, ClipError, Interpolation, JointTracks, ScalarCurve, Track, WeightTrack};
use crate::pose::{JointDesc, Pose, PoseError, Skeleton, SkeletonError};
use crate::skin::Skin;
use thiserror::Error;

/// Name of the scalar curve [`JointMap::clip`] adds when dropping tracks would otherwise
/// shorten the clip's time line: two keys (value 0) at the original clip's first and last
/// key times, so the remapped clip keeps its start and duration and loops the same way.
pub const TIME_SPAN_CURVE: &str = "anim.trim.time_span";

/// Why trimming was refused.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum TrimError {
    /// The skin was made for another skeleton than the one this map trims.
    #[error(transparent)]
    Mismatch(PoseError),
    /// A mask or pose does not have the source skeleton's joint count.
    #[error(transparent)]
    WrongLength(#[from] LengthMismatch),
    /// Building the trimmed skeleton failed.
    #[error(transparent)]
    Skeleton(#[from] SkeletonError),
    /// A skin is bound to a joint that was dropped.
    #[error("skin joint {index} is joint {joint} ({name:?}), which the trimmed skeleton does not keep")]
    SkinJointDropped {
        /// Index in the skin's joint list.
        index: usize,
        /// Its joint in the source skeleton.
        joint: usize,
        /// The joint's name.
        name: String,
    },
    /// A skin or clip names a joint the source skeleton does not have.
    #[error("{what} names joint {joint}, but the source skeleton has {count} joints")]
    JointOutOfRange {
        /// What referred to it ("skin joint 3", "clip \"walk\" track", …).
        what: String,
        /// The joint index.
        joint: usize,
        /// The source skeleton's joint count.
        count: usize,
    },
    /// Rebuilding a clip failed.
    #[error(transparent)]
    Clip(#[from] ClipError),
}

/// How joint indices of a source skeleton map to those of a skeleton extracted from it
/// ([`Skeleton::extract`]), both ways.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JointMap {
    to_new: Vec<Option<usize>>,
    to_old: Vec<usize>,
    names: Vec<String>,
}

impl JointMap {
    /// Joint count of the source skeleton.
    pub fn old_len(&self) -> usize {
        self.to_new.len()
    }

    /// Joint count of the trimmed skeleton.
    pub fn new_len(&self) -> usize {
        self.to_old.len()
    }

    /// The trimmed skeleton's index of source joint `old`, or `None` if it was dropped (or
    /// does not exist).
    pub fn new_index(&self, old: usize) -> Option<usize> {
        self.to_new.get(old).copied().flatten()
    }

    /// The source skeleton's index of trimmed joint `new`.
    pub fn old_index(&self, new: usize) -> Option<usize> {
        self.to_old.get(new).copied()
    }

    /// For each trimmed joint, its source index (ascending).
    pub fn kept(&self) -> &[usize] {
        &self.to_old
    }

    /// A clip over the trimmed skeleton: tracks (and morph weight tracks) of dropped
    /// joints are dropped, the others renumbered; curves, events and root motion are kept.
    /// The clip keeps its time line: when the dropped tracks held its first or last key, a
    /// [`TIME_SPAN_CURVE`] curve is added so its start and duration do not change.
    ///
    /// # Errors
    /// A track names a joint the source skeleton does not have.
    pub fn clip(&self, clip: &Clip) -> Result<Clip, TrimError> {
        let mut joints = Vec::with_capacity(clip.joint_tracks().len());
        for jt in clip.joint_tracks() {
            let new = self.lookup(jt.joint, || format!("clip {:?} track", clip.name()))?;
            if let Some(new) = new {
                joints.push(JointTracks { joint: new, ..jt.clone() });
            }
        }
        let mut weights = Vec::new();
        for w in clip.weight_tracks() {
            if let Some(new) = self.lookup(w.target, || format!("clip {:?} weight track", clip.name()))? {
                let mut w: WeightTrack = w.clone();
                w.target = new;
                weights.push(w);
            }
        }
        let mut out = Clip::new(clip.name(), joints.clone(), clip.curves().to_vec())?;
        if !weights.is_empty() {
            out = out.with_weight_tracks(weights.clone())?;
        }
        if out.duration() != clip.duration() || out.start_time() != clip.start_time() {
            let span = if clip.duration() > clip.start_time() {
                Track::new(Interpolation::Step, vec![clip.start_time(), clip.duration()], vec![0.0, 0.0])
            } else {
                Track::new(Interpolation::Step, vec![clip.start_time()], vec![0.0])
            }
            .map_err(|source| ClipError::Curve {
                clip: clip.name().to_owned(),
                curve: TIME_SPAN_CURVE.into(),
                source,
            })?;
            let mut curves = clip.curves().to_vec();
            curves.push(ScalarCurve { name: TIME_SPAN_CURVE.into(), track: span });
            out = Clip::new(clip.name(), joints, curves)?;
            if !weights.is_empty() {
                out = out.with_weight_tracks(weights)?;
            }
        }
        if let Some(motion) = clip.root_motion() {
            out = out.with_root_motion(motion.clone());
        }
        if !clip.events().is_empty() {
            out.set_events(clip.events().to_vec()).expect("the events fitted the source clip, whose time line is kept");
        }
        Ok(out)
    }

    /// A skin over the trimmed skeleton `trimmed` (the one this map came with): same joint
    /// order and inverse bind matrices, joints renumbered.
    ///
    /// # Errors
    /// A skin joint was dropped or does not exist.
    pub fn skin(&self, skin: &Skin, trimmed: &Skeleton) -> Result<Skin, TrimError> {
        if skin.skeleton_len() != self.old_len() {
            let joints = skin.skeleton_len();
            return Err(TrimError::Mismatch(PoseError::SkeletonMismatch { what: "skin", joints }));
        }
        let mut joints = Vec::with_capacity(skin.len());
        for (index, &joint) in skin.joints().iter().enumerate() {
            match self.lookup(joint, || format!("skin joint {index}"))? {
                Some(new) => joints.push(new),
                None => {
                    return Err(TrimError::SkinJointDropped { index, joint, name: self.names[joint].clone() });
                }
            }
        }
        Skin::new(joints, skin.inverse_bind().to_vec(), trimmed).map_err(|e| match e {
            PoseError::WrongLength(l) => TrimError::WrongLength(l),
            PoseError::JointOutOfRange { index, joint, count } => {
                TrimError::JointOutOfRange { what: format!("skin joint {index}"), joint, count }
            }
            e @ PoseError::SkeletonMismatch { .. } => TrimError::Mismatch(e),
        })
    }

    /// The kept joints of a source-skeleton pose, in trimmed order, written into `out`
    /// (which keeps its allocation).
    ///
    /// # Errors
    /// `pose` or `out` has the wrong length.
    pub fn pose_into(&self, pose: &Pose, out: &mut Pose) -> Result<(), TrimError> {
        LengthMismatch::check("pose", pose.len(), self.old_len())?;
        LengthMismatch::check("trimmed pose", out.len(), self.new_len())?;
        for (o, &old) in out.locals_mut().iter_mut().zip(&self.to_old) {
            *o = pose.locals()[old];
        }
        Ok(())
    }

    /// [`JointMap::pose_into`] into a new pose.
    ///
    /// # Errors
    /// `pose` has the wrong length.
    pub fn pose(&self, pose: &Pose) -> Result<Pose, TrimError> {
        let mut out = Pose::identity(self.new_len());
        self.pose_into(pose, &mut out)?;
        Ok(out)
    }

    fn lookup(&self, old: usize, what: impl FnOnce() -> String) -> Result<Option<usize>, TrimError> {
        match self.to_new.get(old) {
            Some(n) => Ok(*n),
            None => Err(TrimError::JointOutOfRange { what: what(), joint: old, count: self.old_len() }),
        }
    }
}

impl Skeleton {
    /// The skeleton of the joints `keep` selects and all their ancestors (see the
    /// [`crate::offline::trim`] module), and the map between the two.
    ///
    /// # Errors
    /// `keep` does not have one entry per joint.
    pub fn extract(&self, keep: &[bool]) -> Result<(Skeleton, JointMap), TrimError> {
        LengthMismatch::check("keep mask", keep.len(), self.len())?;
        let mut kept = keep.to_vec();
        // Children come after parents: walking backwards closes the mask upwards.
        for i in (0..self.len()).rev() {
            if kept[i]
                && let Some(p) = self.parent(i)
            {
                kept[p] = true;
            }
        }
        let to_old: Vec<usize> = (0..self.len()).filter(|&i| kept[i]).collect();
        let mut to_new = vec![None; self.len()];
        for (new, &old) in to_old.iter().enumerate() {
            to_new[old] = Some(new);
        }
        let joints = to_old
            .iter()
            .map(|&old| {
                let parent = self.parent(old).map(|p| to_new[p].expect("ancestors of kept joints are kept"));
                JointDesc::new(self.names()[old].clone(), parent, self.rest_pose().locals()[old])
            })
            .collect();
        let skeleton = Skeleton::new(joints)?;
        // A parents-first, depth-first order filtered to an ancestor-closed set is still
        // one, so Skeleton::new keeps the given order.
        debug_assert!((0..to_old.len()).all(|i| skeleton.from_source_index(i) == Some(i)));
        let subset = |pose: &Pose| Pose::from_locals(to_old.iter().map(|&o| pose.locals()[o]).collect());
        let skeleton = skeleton
            .with_bind_pose(subset(self.bind_pose()))?
            .with_inverse_bind(to_old.iter().map(|&o| self.inverse_bind()[o]).collect())?;
        let names = self.names().to_vec();
        Ok((skeleton, JointMap { to_new, to_old, names }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clip::{Interpolation, TimePolicy};
    use anim_math::{Mat4, Quat, Transform, Vec3};

    /// root(0) ─ a(1) ─ b(2)
    ///         └ c(3) ─ d(4)
    /// e(5), a second root.
    fn full() -> Skeleton {
        let t = |x: f32| {
            Transform::new(Vec3::new(x, 1.0, 0.0), Quat::from_euler_angles(0.1 * x, 0.2, 0.0), Vec3::new(1.0, 2.0, 1.0))
        };
        Skeleton::new(vec![
            JointDesc::new("root", None, t(0.0)),
            JointDesc::new("a", Some(0), t(1.0)),
            JointDesc::new("b", Some(1), t(2.0)),
            JointDesc::new("c", Some(0), t(3.0)),
            JointDesc::new("d", Some(3), t(4.0)),
            JointDesc::new("e", None, t(5.0)),
        ])
        .unwrap()
    }

    fn mask(s: &Skeleton, names: &[&str]) -> Vec<bool> {
        s.names().iter().map(|n| names.contains(&n.as_str())).collect()
    }

    #[test]
    fn closes_the_mask_upwards_and_keeps_model_matrices() {
        let s = full();
        let (t, map) = s.extract(&mask(&s, &["b", "e"])).unwrap();
        assert_eq!(t.names(), ["root", "a", "b", "e"]);
        assert_eq!(t.parents(), [None, Some(0), Some(1), None]);
        assert_eq!(map.kept(), [0, 1, 2, 5]);
        assert_eq!(map.new_index(3), None);
        assert_eq!(map.new_index(5), Some(3));
        assert_eq!(map.old_index(3), Some(5));
        assert_eq!(map.new_index(99), None);
        let mut m_full = vec![Mat4::zeros(); s.len()];
        s.rest_pose().local_to_model(&s, &mut m_full).unwrap();
        let mut m_trim = vec![Mat4::zeros(); t.len()];
        t.rest_pose().local_to_model(&t, &mut m_trim).unwrap();
        for (new, &old) in map.kept().iter().enumerate() {
            assert!((m_trim[new] - m_full[old]).abs().max() < 1e-6);
            assert_eq!(t.inverse_bind()[new], s.inverse_bind()[old]);
        }
        assert!(matches!(s.extract(&[true]), Err(TrimError::WrongLength(_))));
    }

    fn track(times: &[f32], x: f32) -> Track<Vec3> {
        Track::new(Interpolation::Linear, times.to_vec(), times.iter().map(|&t| Vec3::new(x, t, 0.0)).collect())
            .unwrap()
    }

    #[test]
    fn clip_drops_and_renumbers_tracks_and_keeps_its_time_line() {
        let s = full();
        let (t, map) = s.extract(&mask(&s, &["d"])).unwrap();
        assert_eq!(t.names(), ["root", "c", "d"]);
        // b (dropped) holds the clip's last key; d is kept.
        let clip = Clip::new(
            "walk",
            vec![
                JointTracks { translation: Some(track(&[0.0, 2.0], 7.0)), ..JointTracks::new(2) },
                JointTracks { translation: Some(track(&[0.0, 1.0], 9.0)), ..JointTracks::new(4) },
            ],
            vec![],
        )
        .unwrap();
        let trimmed = map.clip(&clip).unwrap();
        assert_eq!(trimmed.joint_tracks().len(), 1);
        assert_eq!(trimmed.joint_tracks()[0].joint, 2);
        assert_eq!(trimmed.duration(), 2.0);
        assert_eq!(trimmed.curves().last().unwrap().name, TIME_SPAN_CURVE);
        // Sampled the same, wrapped at the same duration.
        let mut full_pose = s.rest_pose().clone();
        clip.sample(2.5, TimePolicy::Wrap, &mut full_pose).unwrap();
        let mut trim_pose = t.rest_pose().clone();
        trimmed.sample(2.5, TimePolicy::Wrap, &mut trim_pose).unwrap();
        assert_eq!(map.pose(&full_pose).unwrap(), trim_pose);
        // No span curve when nothing that set the time line was dropped.
        let (_, keep_all) = s.extract(&[true; 6]).unwrap();
        assert!(keep_all.clip(&clip).unwrap().curves().is_empty());
        // A track naming a joint that does not exist is an error.
        let bad = Clip::new("bad", vec![JointTracks::new(6)], vec![]).unwrap();
        assert!(matches!(map.clip(&bad), Err(TrimError::JointOutOfRange { joint: 6, .. })));
    }

    #[test]
    fn skin_is_renumbered_and_a_dropped_joint_is_an_error() {
        let s = full();
        let (t, map) = s.extract(&mask(&s, &["b", "d"])).unwrap();
        let skin = Skin::new(vec![4, 2], vec![Mat4::identity(), Mat4::new_scaling(2.0)], &s).unwrap();
        let ts = map.skin(&skin, &t).unwrap();
        assert_eq!(ts.joints(), [t.find("d").unwrap(), t.find("b").unwrap()]);
        assert_eq!(ts.inverse_bind()[1], Mat4::new_scaling(2.0));
        let with_e = Skin::new(vec![5], vec![Mat4::identity()], &s).unwrap();
        assert!(matches!(map.skin(&with_e, &t), Err(TrimError::SkinJointDropped { index: 0, joint: 5, .. })));
    }
}
