//! The per-frame job: a source pose in, the target pose out, nothing allocated.
//!
//! 1. The source's model-space transforms (one forward pass over the joints the job reads).
//! 2. One forward pass over the target joints, parents first: rotations from
//!    `Δ = Q_s · R_s⁻¹` and the target references, or straight from the source's local
//!    rotations (the fast path); translations from the rest pose, the scaled hips, or the
//!    hips' frame ([`crate::retarget`]).
//! 3. Contacts: for every limb with a weight `w > 0`, the end joint's goal is the scaled
//!    source position `g = P_t + K ⊙ (p_s − P_s)`, blended from where the retargeted pose
//!    put it, `fk + w · (g − fk)`; the two-bone solve of `anim-ik` reaches it, with the
//!    pole (knee forward, elbow back) turned with the retargeted upper joint, and the end
//!    joint (the foot) keeps its retargeted model-space rotation.

use crate::error::RetargetError;
use crate::retarget::{Limb, Retargeter, RotationSource, TranslationSource};
use anim_core::pose::Pose;
use anim_ik::{TwoBoneJoints, two_bone_corrections};
use anim_math::{Quat, Transform, Vec3, quat};

/// What one frame of the job did at its contacts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameReport {
    /// Per limb (left foot, right foot, left hand, right hand): the distance from the end
    /// joint to the scaled source position, in target model units (0 for limbs without
    /// IK).
    pub contact_error: [f32; 4],
    /// Per limb: the end joint's model-space position after the job.
    pub end_position: [Vec3; 4],
}

/// The per-frame job's buffers (sized once for a [`Retargeter`]).
#[derive(Clone, Debug)]
pub struct RetargetJob {
    source_model: Vec<Slot>,
    target_model: Vec<Slot>,
    report: FrameReport,
}

/// A model-space transform as the job keeps it: translation, rotation and scale each in a
/// 16-byte aligned slot of its own. Each part is stored with one 16-byte store and read
/// back, a joint or two later, by loads that lie inside that store. A `Transform` (40
/// bytes, its rotation at offset 12) is copied in pieces the compiler chooses, which do
/// not match the pieces it was stored in; every such load then waits for the stores to
/// retire (a store-forwarding stall), and those stalls were most of the job's time.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))]
struct Slot {
    translation: [f32; 4],
    rotation: [f32; 4],
    scale: [f32; 4],
}

impl Slot {
    const IDENTITY: Slot = Slot { translation: [0.0; 4], rotation: [0.0, 0.0, 0.0, 1.0], scale: [1.0, 1.0, 1.0, 0.0] };

    #[inline(always)]
    fn new(t: &Transform) -> Self {
        let (v, q, c) = (&t.translation, t.rotation.coords, &t.scale);
        let mut slot = Slot::IDENTITY;
        put(&mut slot.translation, [v.x, v.y, v.z, 0.0]);
        put(&mut slot.rotation, [q.x, q.y, q.z, q.w]);
        put(&mut slot.scale, [c.x, c.y, c.z, 0.0]);
        slot
    }

    #[inline(always)]
    fn translation(&self) -> Vec3 {
        let v = take(&self.translation);
        Vec3::new(v[0], v[1], v[2])
    }

    #[inline(always)]
    fn rotation(&self) -> Quat {
        Quat::new_unchecked(nalgebra::Quaternion::from(nalgebra::Vector4::from(take(&self.rotation))))
    }

    #[inline(always)]
    fn get(&self) -> Transform {
        let c = take(&self.scale);
        Transform { translation: self.translation(), rotation: self.rotation(), scale: Vec3::new(c[0], c[1], c[2]) }
    }
}

/// One 16-byte load of a slot part (volatile on x86-64, so that the compiler can neither
/// split it into loads of other sizes nor merge it with its neighbours: see [`Slot`]).
/// `part` is always a field of a `Slot`, which is what makes it 16-byte aligned.
#[inline(always)]
fn take(part: &[f32; 4]) -> [f32; 4] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__m128;
        // SAFETY: `part` is a valid, 16-byte aligned `[f32; 4]` (every part of the
        // `align(16)` `Slot` starts at a multiple of 16), the layout of an `__m128`.
        unsafe { std::mem::transmute::<__m128, [f32; 4]>(std::ptr::read_volatile(part.as_ptr().cast::<__m128>())) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        *part
    }
}

/// One 16-byte store of a slot part (see [`take`]).
#[inline(always)]
fn put(part: &mut [f32; 4], value: [f32; 4]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__m128;
        // SAFETY: as in `take`.
        unsafe {
            std::ptr::write_volatile(part.as_mut_ptr().cast::<__m128>(), std::mem::transmute::<[f32; 4], __m128>(value))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        *part = value;
    }
}

impl RetargetJob {
    /// Buffers for `retargeter`'s skeletons.
    pub fn new(retargeter: &Retargeter) -> Self {
        Self {
            source_model: vec![Slot::IDENTITY; retargeter.source.len()],
            target_model: vec![Slot::IDENTITY; retargeter.target.len()],
            report: FrameReport::default(),
        }
    }

    /// Retargets `source` (a pose of the retargeter's source skeleton) into `out` (a pose
    /// of its target skeleton; every joint is written). `contacts` are the blend weights of
    /// the contact IK per limb (left foot, right foot, left hand, right hand), each in
    /// `[0, 1]`: 0 leaves the retargeted pose, 1 puts the end joint on the scaled source
    /// position. Allocates nothing.
    ///
    /// # Errors
    /// Poses of other skeletons, buffers made for another retargeter, weights outside
    /// `[0, 1]`, or a non-finite pose.
    pub fn run(
        &mut self,
        rt: &Retargeter,
        source: &Pose,
        contacts: &[f32; 4],
        out: &mut Pose,
    ) -> Result<&FrameReport, RetargetError> {
        for (index, &value) in contacts.iter().enumerate() {
            if !(0.0..=1.0).contains(&value) {
                return Err(RetargetError::Contact { index, value });
            }
        }
        if self.source_model.len() != rt.source.len() || self.target_model.len() != rt.target.len() {
            return Err(
                anim_core::pose::PoseError::SkeletonMismatch { what: "retarget job", joints: rt.target.len() }.into()
            );
        }
        source.check_skeleton(rt.source.id(), rt.source.len())?;
        out.check_skeleton(rt.target.id(), rt.target.len())?;
        let source_locals = source.locals();
        for (s, parent) in rt.source.parents().iter().enumerate() {
            if rt.source_needed[s] {
                self.source_model[s] = Slot::new(&match parent {
                    Some(p) => self.source_model[*p].get().combine(&source_locals[s]),
                    None => source_locals[s],
                });
            }
        }
        let inverse_reference = &rt.source_inverse_reference;
        let delta = |model: &[Slot], r: RotationSource| delta(model, inverse_reference, r);
        // The hips' model transform first: carried joints may come before them.
        let hips = &rt.joints[rt.target_hips];
        let hips_rotation =
            delta(&self.source_model, hips.rotation).map_or(hips.reference, |d| renormalize(d * hips.reference));
        let hips_position = rt.target_hips_reference
            + rt.scale.component_mul(&(self.source_model[rt.source_hips].translation() - rt.source_hips_reference));
        let hips_frame = Transform::new(hips_position, hips_rotation, Vec3::repeat(1.0));
        let locals = out.locals_mut();
        for (j, plan) in rt.joints.iter().enumerate() {
            if !plan.needed {
                // At rest, and nothing driven below: no model transform to compute.
                locals[j] = plan.rest;
                continue;
            }
            if let Some((s, a, b)) = plan.fast {
                // `A · L_s · B`: no model transform read or written (crate::retarget).
                locals[j] = Transform { rotation: renormalize(a * source_locals[s].rotation * b), ..plan.rest };
                continue;
            }
            let parent = plan.parent.map_or(Transform::IDENTITY, |p| self.target_model[p].get());
            let mut local = plan.rest;
            // A driven joint's model rotation is set, normalized, and its local follows
            // from it: the model rotations never inherit their parents' rounding (which,
            // `inverse` being the conjugate, would double at every level).
            let mut rotation = None;
            if let Some(d) = delta(&self.source_model, plan.rotation) {
                let q = renormalize(d * plan.reference);
                local.rotation = parent.rotation.inverse() * q;
                rotation = Some(q);
            }
            if !rt.settings.keep_bone_lengths
                && let RotationSource::Joint(s) = plan.rotation
            {
                // The source joint's own change of translation and scale (settings docs).
                let (now, rest) = (&source.locals()[s], &rt.source.rest_pose().locals()[s]);
                let moved = now.translation - rest.translation;
                let source_parent = rt.source.parent(s).map_or(Transform::IDENTITY, |p| self.source_model[p].get());
                let model = source_parent.transform_vector(&moved) * rt.leg_ratio();
                local.translation += parent.inverse().transform_vector(&model);
                local.scale.component_mul_assign(&ratio(&now.scale, &rest.scale));
            }
            match plan.translation {
                TranslationSource::Rest => {}
                TranslationSource::Hips => {
                    local.translation = parent.inverse().transform_point(&hips_position);
                    local.rotation = parent.rotation.inverse() * hips_rotation;
                    rotation = Some(hips_rotation);
                }
                TranslationSource::Carried(offset) => {
                    local.translation = parent.inverse().transform_point(&hips_frame.transform_point(&offset));
                }
            }
            locals[j] = local;
            self.target_model[j] = Slot::new(&match rotation {
                // `combine` with the rotation already known.
                Some(q) => Transform {
                    translation: parent.transform_point(&local.translation),
                    rotation: q,
                    scale: parent.scale.component_mul(&local.scale),
                },
                None => parent.combine(&local),
            });
        }
        self.report = FrameReport::default();
        for (i, limb) in rt.limbs.iter().enumerate() {
            let Some(limb) = limb else { continue };
            let goal = limb.target_reference
                + rt.scale.component_mul(&(self.source_model[limb.source_end].translation() - limb.source_reference));
            if contacts[i] > 0.0 {
                self.place(rt, limb, &goal, contacts[i], locals)?;
            }
            if let Some((toes, source_toes)) = limb.toes {
                // The floor, or as deep as the source's own toes go below it (scaled).
                let floor = (self.source_model[source_toes].translation[1] * rt.scale.y).min(0.0);
                self.keep_toes_up(rt, limb.end, toes, floor, locals);
            }
            let end = self.target_model[limb.end].translation();
            self.report.end_position[i] = end;
            self.report.contact_error[i] = (end - goal).norm();
        }
        Ok(&self.report)
    }

    /// The report of the last [`RetargetJob::run`].
    pub fn report(&self) -> &FrameReport {
        &self.report
    }

    /// Target joint `joint`'s model-space transform after the last [`RetargetJob::run`]
    /// (`None` past the target skeleton), for the joints the job reads them of: the hips
    /// and joints they carry, the limbs placed by IK, joints not on the fast path
    /// ([`crate::retarget`]), and their ancestors. The other joints (the arms and head of a
    /// 1:1 mapping, the fingers of a target whose source has none) are skipped and hold
    /// what they held before (the identity at first); use [`Pose::globals`] on the output
    /// pose for all of them.
    pub fn target_model(&self, joint: usize) -> Option<Transform> {
        self.target_model.get(joint).map(Slot::get)
    }

    /// Source joint `joint`'s model-space transform read by the last [`RetargetJob::run`]
    /// (`None` past the source skeleton; the joints the job does not read hold what they
    /// held before).
    pub fn source_model(&self, joint: usize) -> Option<Transform> {
        self.source_model.get(joint).map(Slot::get)
    }

    /// Pitches the foot about the ankle so the toe joint is not below `floor` when the
    /// ankle is above it (a target foot longer, for its leg, than the source's would
    /// otherwise dig its toes in when the heel rises).
    fn keep_toes_up(&mut self, rt: &Retargeter, foot: usize, toes: usize, floor: f32, locals: &mut [Transform]) {
        let (a, t) = (self.target_model[foot].translation(), self.target_model[toes].translation());
        if t.y >= floor || a.y <= floor {
            return;
        }
        let v = t - a;
        let length = v.norm();
        let axis = v.cross(&Vec3::y());
        if length <= 0.0 || axis.norm() <= 1e-6 * length {
            return;
        }
        let (now, want) = ((v.y / length).clamp(-1.0, 1.0).asin(), ((floor - a.y) / length).clamp(-1.0, 1.0).asin());
        let turn = Quat::from_axis_angle(&nalgebra::Unit::new_normalize(axis), want - now);
        let parent = rt.joints[foot].parent.map_or(Transform::IDENTITY, |p| self.target_model[p].get());
        locals[foot].rotation = renormalize(parent.rotation.inverse() * (turn * self.target_model[foot].rotation()));
        for j in rt.target.subtree(foot) {
            let parent = rt.joints[j].parent.map_or(Transform::IDENTITY, |p| self.target_model[p].get());
            self.target_model[j] = Slot::new(&parent.combine(&locals[j]));
        }
    }

    /// Two-bone IK of one limb towards `fk + w · (goal − fk)`, the end joint keeping its
    /// model rotation; the limb's model transforms are brought up to date.
    fn place(
        &mut self,
        rt: &Retargeter,
        limb: &Limb,
        goal: &Vec3,
        weight: f32,
        locals: &mut [Transform],
    ) -> Result<(), RetargetError> {
        let m = &self.target_model;
        let fk = m[limb.end].translation();
        let target = fk + (goal - fk) * weight;
        if (target - fk).norm() <= 1e-6 * limb.length {
            return Ok(());
        }
        let joints = TwoBoneJoints {
            upper: m[limb.upper].translation(),
            middle: m[limb.middle].translation(),
            end: fk,
            upper_rotation: m[limb.upper].rotation(),
            middle_rotation: m[limb.middle].rotation(),
        };
        // The pole: where the retargeted knee (elbow) points off the hip-ankle line; for a
        // straight limb, the bend direction turned with the upper joint.
        let (a, b) = (joints.upper, joints.middle);
        let axis = fk - a;
        let off = (b - a) - axis * ((b - a).dot(&axis) / axis.norm_squared().max(f32::MIN_POSITIVE));
        let pole = if off.norm() > 1e-3 * limb.length { off } else { joints.upper_rotation * limb.pole };
        let c = two_bone_corrections(&joints, &target, Some(&pole))?;
        let end_rotation = m[limb.end].rotation();
        locals[limb.upper].rotation = renormalize(locals[limb.upper].rotation * c.upper);
        locals[limb.middle].rotation = renormalize(locals[limb.middle].rotation * c.middle);
        for j in rt.target.subtree(limb.upper) {
            let parent = rt.joints[j].parent.map_or(Transform::IDENTITY, |p| self.target_model[p].get());
            if j == limb.end {
                locals[j].rotation = renormalize(parent.rotation.inverse() * end_rotation);
            }
            self.target_model[j] = Slot::new(&parent.combine(&locals[j]));
        }
        Ok(())
    }
}

/// A driven joint's change of model rotation since the reference, `Q_s · R_s⁻¹`, from the
/// source's model transforms (`None` for a joint at rest).
#[inline(always)]
fn delta(model: &[Slot], inverse_reference: &[Quat], r: RotationSource) -> Option<Quat> {
    let d = |s: usize| model[s].rotation() * inverse_reference[s];
    match r {
        RotationSource::Rest => None,
        RotationSource::Joint(s) => Some(d(s)),
        RotationSource::Lerp(a, b, t) => Some(quat::nlerp(&d(a), &d(b), t)),
    }
}

/// `a / b` per component, 1 where `b` is 0.
fn ratio(a: &Vec3, b: &Vec3) -> Vec3 {
    a.zip_map(b, |x, y| if y != 0.0 { x / y } else { 1.0 })
}

fn renormalize(q: Quat) -> Quat {
    Quat::new_normalize(q.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auto::auto_map;
    use crate::retarget::RetargetSettings;
    use crate::rig::{HumanoidRig, Reference};
    use anim_core::clip::TimePolicy;

    /// The fast path (local rotations straight from the source's, model transforms only
    /// where read) against the general model-space computation of every joint
    /// ([`Retargeter::general`]): every frame (30 Hz) of every mannequin clip, onto the
    /// mannequin itself and the three shared humanoids, without and with both feet placed
    /// by IK. The two differ only by rounding: locals within 2e-6 rad and 1e-6 (relative)
    /// in translation, the contact report within 1e-6.
    #[test]
    fn fast_path_matches_general() {
        let assets = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/assets");
        let man = anim_gltf::mannequin_model();
        let rig = |m: &anim_gltf::Model| {
            HumanoidRig::new(&m.skeleton, auto_map(&m.skeleton).map, Reference::Bind(&m.skins[0].skin)).expect("rig")
        };
        let source = rig(&man);
        let targets = [
            man.clone(),
            anim_gltf::load(format!("{assets}/CesiumMan/CesiumMan.glb")).expect("CesiumMan"),
            anim_gltf::load(format!("{assets}/RiggedFigure/RiggedFigure.glb")).expect("RiggedFigure"),
            anim_gltf::load(format!("{assets}/Woman/Woman.gltf")).expect("Woman"),
        ];
        let (mut worst_angle, mut worst_move, mut fast_joints) = (0.0f32, 0.0f32, 0);
        for target in &targets {
            let rt = Retargeter::new(&source, &rig(target), RetargetSettings::default()).expect("retargeter");
            let general = rt.general();
            fast_joints += rt.joints.iter().filter(|j| j.fast.is_some()).count();
            let (mut job, mut reference) = (RetargetJob::new(&rt), RetargetJob::new(&general));
            let (mut a, mut b) = (target.skeleton.rest_pose().clone(), target.skeleton.rest_pose().clone());
            let mut pose = man.skeleton.rest_pose().clone();
            for clip in &man.clips {
                for f in 0..=(clip.duration() * 30.0).round() as usize {
                    clip.sample(f as f32 / 30.0, TimePolicy::Clamp, &mut pose).expect("sample");
                    for contacts in [[0.0; 4], [1.0, 1.0, 0.0, 0.0]] {
                        let ra = *job.run(&rt, &pose, &contacts, &mut a).expect("fast");
                        let rb = *reference.run(&general, &pose, &contacts, &mut b).expect("general");
                        for (x, y) in a.locals().iter().zip(b.locals()) {
                            worst_angle = worst_angle.max(x.rotation.angle_to(&y.rotation));
                            let size = y.translation.norm().max(1e-3);
                            worst_move = worst_move.max((x.translation - y.translation).norm() / size);
                        }
                        for i in 0..4 {
                            assert!((ra.contact_error[i] - rb.contact_error[i]).abs() <= 1e-6);
                            assert!((ra.end_position[i] - rb.end_position[i]).norm() <= 1e-6);
                        }
                    }
                }
            }
        }
        println!("fast joints {fast_joints}, worst {worst_angle} rad, {worst_move} relative");
        assert!(fast_joints >= 4 * 8, "the arms and head of every target take the fast path");
        assert!(worst_angle <= 2e-6 && worst_move <= 1e-6, "{worst_angle} rad, {worst_move}");
    }

    /// The model transforms the job keeps (in its own layout) are the output pose's:
    /// every joint the job computes one for (not on the fast path, driven or carried),
    /// against `Pose::global` of the pose it wrote, with and without the feet placed, and
    /// the source's against the source pose's; past the skeletons, `None`.
    #[test]
    fn model_transforms_match_the_poses() {
        let assets = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/assets");
        let man = anim_gltf::mannequin_model();
        let woman = anim_gltf::load(format!("{assets}/Woman/Woman.gltf")).expect("Woman");
        let rig = |m: &anim_gltf::Model| {
            HumanoidRig::new(&m.skeleton, auto_map(&m.skeleton).map, Reference::Bind(&m.skins[0].skin)).expect("rig")
        };
        let rt = Retargeter::new(&rig(&man), &rig(&woman), RetargetSettings::default()).expect("retargeter");
        let mut job = RetargetJob::new(&rt);
        let mut out = woman.skeleton.rest_pose().clone();
        let mut pose = man.skeleton.rest_pose().clone();
        let (mut target_globals, mut source_globals) =
            (vec![Transform::IDENTITY; woman.skeleton.len()], vec![Transform::IDENTITY; man.skeleton.len()]);
        let mut checked = 0;
        for f in 0..20 {
            man.clips[0].sample(f as f32 * 0.05, TimePolicy::Wrap, &mut pose).expect("sample");
            for contacts in [[0.0; 4], [1.0, 1.0, 0.0, 0.0]] {
                job.run(&rt, &pose, &contacts, &mut out).expect("run");
                // Composed parents first, as the job does: with the Woman's scales (not
                // uniform, by 1e-4) composing in another order moves her toes by 4e-5.
                out.globals(&woman.skeleton, &mut target_globals).expect("globals");
                pose.globals(&man.skeleton, &mut source_globals).expect("globals");
                for (j, plan) in rt.joints.iter().enumerate() {
                    if !plan.needed || plan.fast.is_some() {
                        continue;
                    }
                    let (got, want) = (job.target_model(j).expect("a target joint"), target_globals[j]);
                    let size = want.translation.norm().max(1.0);
                    assert!((got.translation - want.translation).norm() <= 1e-5 * size, "target joint {j}");
                    assert!(2.0 * (got.rotation.inverse() * want.rotation).imag().norm() <= 1e-5, "target joint {j}");
                    assert!((got.scale - want.scale).norm() <= 1e-5, "target joint {j}");
                    checked += 1;
                }
                for s in [rt.source_hips, rt.limbs[0].as_ref().expect("left leg").source_end] {
                    let (got, want) = (job.source_model(s).expect("a source joint"), source_globals[s]);
                    assert!((got.translation - want.translation).norm() <= 1e-5 * want.translation.norm().max(1.0));
                }
            }
        }
        assert!(checked > 20 * 2 * 10, "{checked}");
        assert_eq!(job.target_model(woman.skeleton.len()), None);
        assert_eq!(job.source_model(man.skeleton.len()), None);
    }
}
