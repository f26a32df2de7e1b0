//! The per-frame job: a source pose in, the target pose out, nothing allocated.
//!
//! 1. The source's model-space transforms (one forward pass over the joints the job reads;
//!    rotations only where no position below them is read).
//! 2. The target: the rest pose, then the fast path's local rotations `A · L_s · B`
//!    straight from the source's, then one forward pass, parents first, over the joints
//!    posed through model space: model rotations `Q_s · C` (`C = R_s⁻¹ · R_t`,
//!    [`crate::retarget`]), translations from the rest pose, the scaled hips, or the hips'
//!    frame. The retargeter decided once which joints are in which list
//!    (`crate::retarget::Program`).
//!
//! Steps 1 and 2 are quaternion products, rotations and normalizations with each
//! quaternion, vector and scale in one 4-lane register (`anim_math::simd`), compiled twice:
//! for the target's baseline and, chosen at run time, for AVX2 with fused multiply-adds.
//! Step 3 is scalar.
//! 3. Contacts: for every limb with a weight `w > 0`, the end joint's goal is the scaled
//!    source position `g = P_t + K ⊙ (p_s − P_s)`, blended from where the retargeted pose
//!    put it, `fk + w · (g − fk)`; the two-bone solve of `anim-ik` reaches it, with the
//!    pole (knee forward, elbow back) turned with the retargeted upper joint, and the end
//!    joint (the foot) keeps its retargeted model-space rotation.

use crate::error::RetargetError;
use crate::retarget::{Drive, Limb, Retargeter, TranslationSource};
use anim_core::pose::Pose;
use anim_ik::{TwoBoneJoints, two_bone_corrections};
#[cfg(target_arch = "x86_64")]
use anim_math::simd::Fused;
use anim_math::simd::{F4, Fma, Plain, Slot, normalize4};
use anim_math::{Quat, Transform, Vec3};

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
    /// Per target joint, the model rotation of a joint driven by one source joint
    /// (computed four at a time before the forward pass; `crate::retarget::Program`).
    driven: Vec<F4>,
    report: FrameReport,
}

/// Target joint `joint`'s model rotation `Q_t` from the source's model rotations (`None`
/// for a joint at rest; [`Drive`]); for one driven by one source joint, computed already
/// (`driven`).
#[inline(always)]
fn model_rotation<M: Fma>(model: &[Slot], driven: &[F4], joint: usize, drive: Drive, m: M) -> Option<F4> {
    match drive {
        Drive::Rest => None,
        // SAFETY: `joint` is a program index into a buffer of the target's length (see
        // `RetargetJob::pose`).
        Drive::Joint(..) => Some(*unsafe { at(driven, joint) }),
        Drive::Lerp(a, ca, b, cb, t) => {
            Some(F4::nlerp(ca.apply(model[a].rotation, m), cb.apply(model[b].rotation, m), t, m))
        }
    }
}

/// `slice[index]` without the bounds check.
///
/// # Safety
/// `index < slice.len()`.
#[inline(always)]
unsafe fn at<T>(slice: &[T], index: usize) -> &T {
    debug_assert!(index < slice.len());
    // SAFETY: the caller's promise.
    unsafe { slice.get_unchecked(index) }
}

/// `&mut slice[index]` without the bounds check.
///
/// # Safety
/// `index < slice.len()`.
#[inline(always)]
unsafe fn at_mut<T>(slice: &mut [T], index: usize) -> &mut T {
    debug_assert!(index < slice.len());
    // SAFETY: the caller's promise.
    unsafe { slice.get_unchecked_mut(index) }
}

/// The instruction sets the posing passes are compiled for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Isa {
    /// The target's baseline (SSE2 on x86-64), multiplies and adds.
    Baseline,
    /// AVX2 and FMA (x86-64), fused multiply-adds; the token proves the CPU has them.
    #[cfg(target_arch = "x86_64")]
    Avx2(Fused),
}

impl Isa {
    /// The best this CPU has.
    #[inline]
    pub(crate) fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        if let Some(fused) = Fused::detect() {
            return Isa::Avx2(fused);
        }
        Isa::Baseline
    }
}

impl RetargetJob {
    /// Buffers for `retargeter`'s skeletons.
    pub fn new(retargeter: &Retargeter) -> Self {
        Self {
            source_model: vec![Slot::identity(); retargeter.source.len()],
            target_model: vec![Slot::identity(); retargeter.target.len()],
            driven: vec![F4::splat(0.0); retargeter.target.len()],
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
        self.run_with(rt, source, contacts, out, Isa::detect())
    }

    /// [`RetargetJob::run`] with the posing passes compiled for `isa`.
    pub(crate) fn run_with(
        &mut self,
        rt: &Retargeter,
        source: &Pose,
        contacts: &[f32; 4],
        out: &mut Pose,
        isa: Isa,
    ) -> Result<&FrameReport, RetargetError> {
        for (index, &value) in contacts.iter().enumerate() {
            if !(0.0..=1.0).contains(&value) {
                return Err(RetargetError::Contact { index, value });
            }
        }
        if self.source_model.len() != rt.source.len()
            || self.target_model.len() != rt.target.len()
            || self.driven.len() != rt.target.len()
        {
            return Err(
                anim_core::pose::PoseError::SkeletonMismatch { what: "retarget job", joints: rt.target.len() }.into()
            );
        }
        source.check_skeleton(rt.source.id(), rt.source.len())?;
        out.check_skeleton(rt.target.id(), rt.target.len())?;
        self.pose_dispatch(rt, source, out, isa);
        let locals = out.locals_mut();
        self.report = FrameReport::default();
        for (i, limb) in rt.limbs.iter().enumerate() {
            let Some(limb) = limb else { continue };
            let source_end = self.source_model[limb.source_end].translation.to_vec3();
            let goal = limb.target_reference + rt.scale.component_mul(&(source_end - limb.source_reference));
            if contacts[i] > 0.0 {
                self.place(rt, limb, &goal, contacts[i], locals)?;
            }
            if let Some((toes, source_toes)) = limb.toes {
                // The floor, or as deep as the source's own toes go below it (scaled).
                let floor = (self.source_model[source_toes].translation.to_vec3().y * rt.scale.y).min(0.0);
                self.keep_toes_up(rt, limb.end, toes, floor, locals);
            }
            let end = self.target_model[limb.end].translation.to_vec3();
            self.report.end_position[i] = end;
            self.report.contact_error[i] = (end - goal).norm();
        }
        Ok(&self.report)
    }

    /// The posing passes ([`RetargetJob::pose`]) compiled for the instruction set `isa`
    /// names (the caller checked that the CPU has it).
    fn pose_dispatch(&mut self, rt: &Retargeter, source: &Pose, out: &mut Pose, isa: Isa) {
        match isa {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `Fused` exists only where the CPU has AVX2 and FMA.
            Isa::Avx2(fused) => unsafe { self.pose_avx2(rt, source, out, fused) },
            Isa::Baseline => self.pose(rt, source, out, Plain),
        }
    }

    /// [`RetargetJob::pose`] with AVX2 and FMA enabled: the same operations in
    /// three-operand VEX encoding (no register copies before each destructive SSE
    /// operation) and with fused multiply-adds, a third fewer instructions.
    ///
    /// # Safety
    /// The CPU must have AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn pose_avx2(&mut self, rt: &Retargeter, source: &Pose, out: &mut Pose, fused: Fused) {
        self.pose(rt, source, out, fused);
    }

    /// The source's model transforms, then every target joint: the rest pose, the fast
    /// path's rotations, and the joints posed through model space, with their model
    /// transforms (module docs, steps 1 and 2). The poses were checked against the
    /// retargeter's skeletons.
    #[inline(always)]
    fn pose<M: Fma>(&mut self, rt: &Retargeter, source: &Pose, out: &mut Pose, m: M) {
        let program = &rt.program;
        let source_locals = source.locals();
        let locals = out.locals_mut();
        // The indices in `program` are below the lengths of the skeletons they index
        // (`Program::new` builds them from the retargeter's own skeletons), and `run_with`
        // checked that both poses and the job's three buffers have those lengths: the
        // loops below index without bounds checks (`at`, `at_mut`), which were a tenth of
        // the job's instructions.
        debug_assert!(source_locals.len() == rt.source.len() && self.source_model.len() == rt.source.len());
        debug_assert!(locals.len() == rt.target.len() && self.target_model.len() == rt.target.len());
        debug_assert!(self.driven.len() == rt.target.len());
        // Every joint at rest; the steps below overwrite what moves.
        locals.copy_from_slice(rt.target.rest_pose().locals());
        let sm = &mut self.source_model;
        // The joint just computed, kept in registers: along a chain (a leg) it is the next
        // joint's parent, which then does not wait for its stores to be read back.
        let mut last = (usize::MAX, Slot::identity());
        for step in &program.source {
            // SAFETY (every `at` and `at_mut` below): a program index into a buffer or pose
            // of its skeleton's length (above).
            let local = unsafe { at(source_locals, step.joint) };
            let r = F4::quat(&local.rotation);
            let model = match step.parent {
                None => Slot { translation: F4::vec3(&local.translation), rotation: r, scale: F4::vec3(&local.scale) },
                Some(p) => {
                    // SAFETY: as above.
                    let parent = if p == last.0 { last.1 } else { *unsafe { at(sm, p) } };
                    if step.position {
                        parent.combine(F4::vec3(&local.translation), r, F4::vec3(&local.scale), m)
                    } else {
                        // Only its rotation is read; the rest is its parent's (unread).
                        Slot { rotation: parent.rotation.qmul(r, m), ..parent }
                    }
                }
            };
            // SAFETY: as above.
            *unsafe { at_mut(sm, step.joint) } = model;
            last = (step.joint, model);
        }
        // The fast path reads only the source's local rotations: here, its work can fill
        // the waits of the chain of products above and of the blocks below.
        for batch in &program.fast {
            // `A · L_s · B`: no model transform read or written (crate::retarget).
            // SAFETY: as above.
            let q = F4::transpose(batch.source.map(|s| F4::quat(&unsafe { at(source_locals, s) }.rotation)));
            let q = F4::transpose(normalize4(batch.b.apply(batch.a.apply(q, m), m), m));
            for (lane, &joint) in batch.joint.iter().enumerate() {
                // SAFETY: as above.
                q[lane].store_quat(&mut unsafe { at_mut(locals, joint) }.rotation);
            }
        }
        for batch in &program.driven {
            // SAFETY: as above.
            let q = F4::transpose(batch.source.map(|s| unsafe { at(&self.source_model, s) }.rotation));
            let q = F4::transpose(normalize4(batch.c.apply(q, m), m));
            for (lane, &joint) in batch.joint.iter().enumerate() {
                // SAFETY: as above.
                *unsafe { at_mut(&mut self.driven, joint) } = q[lane];
            }
        }
        // The hips' model transform first: carried joints may come before them.
        let hips = &rt.joints[rt.target_hips];
        let hips_rotation = model_rotation(&self.source_model, &self.driven, rt.target_hips, hips.drive, m)
            .unwrap_or_else(|| F4::quat(&hips.reference));
        let hips_position = F4::vec3(&rt.target_hips_reference).add(
            F4::vec3(&rt.scale)
                .mul(self.source_model[rt.source_hips].translation.sub(F4::vec3(&rt.source_hips_reference))),
        );
        let mut last = (usize::MAX, Slot::identity());
        for step in &program.model {
            if let Some(model) = step.fixed {
                // At rest under a root at rest: its local is the rest pose's, written above.
                // SAFETY: as above.
                *unsafe { at_mut(&mut self.target_model, step.joint) } = model;
                last = (step.joint, model);
                continue;
            }
            let parent = match step.parent {
                None => Slot::identity(),
                Some(p) if p == last.0 => last.1,
                // SAFETY: as above.
                Some(p) => *unsafe { at(&self.target_model, p) },
            };
            let (mut translation, mut scale) = (step.rest.translation, step.rest.scale);
            // A driven joint's model rotation is set, normalized, and its local follows
            // from it: the model rotations never inherit their parents' rounding (which,
            // the inverse being the conjugate, would double at every level).
            let (mut local_rotation, mut rotation) = (step.rest.rotation, None);
            if let Some(q) = model_rotation(&self.source_model, &self.driven, step.joint, step.drive, m) {
                local_rotation = parent.rotation.conj().qmul(q, m);
                rotation = Some(q);
            }
            if let Some(s) = step.own {
                // Bone lengths not kept: the source joint's own change of translation and
                // scale (settings docs).
                let (now, rest) = (&source_locals[s], &rt.source.rest_pose().locals()[s]);
                let moved = now.translation - rest.translation;
                let source_parent = rt.source.parent(s).map_or(Transform::IDENTITY, |p| self.source_model[p].get());
                let model = source_parent.transform_vector(&moved) * rt.leg_ratio();
                let along = parent.get().inverse().transform_vector(&model);
                translation = translation.add(F4::vec3(&along));
                scale = scale.mul(F4::vec3(&ratio(&now.scale, &rest.scale)));
            }
            match step.translation {
                TranslationSource::Rest => {}
                TranslationSource::Hips => {
                    translation =
                        F4::inverse_point(parent.translation, parent.rotation, parent.scale, hips_position, m);
                    local_rotation = parent.rotation.conj().qmul(hips_rotation, m);
                    rotation = Some(hips_rotation);
                }
                TranslationSource::Carried(offset) => {
                    // The offset in the hips' frame (unit scale), then into the parent's.
                    let carried = hips_rotation.rotate_add(offset, hips_position, m);
                    translation = F4::inverse_point(parent.translation, parent.rotation, parent.scale, carried, m);
                }
            }
            let model = match (rotation, step.position) {
                (Some(q), true) => parent.place(translation, q, scale, m),
                (None, true) => parent.combine(translation, local_rotation, scale, m),
                // Only its rotation is read (by the joints below it); the rest is stale.
                (Some(q), false) => Slot { rotation: q, ..parent },
                (None, false) => Slot { rotation: parent.rotation.qmul(local_rotation, m), ..parent },
            };
            // SAFETY: as above.
            *unsafe { at_mut(&mut self.target_model, step.joint) } = model;
            last = (step.joint, model);
            // SAFETY: as above.
            let local = unsafe { at_mut(locals, step.joint) };
            local_rotation.store_quat(&mut local.rotation);
            if step.translation != TranslationSource::Rest || step.own.is_some() {
                // Otherwise still the rest pose's, written above.
                translation.store_vec3(&mut local.translation);
                scale.store_vec3(&mut local.scale);
            }
        }
    }

    /// The report of the last [`RetargetJob::run`].
    pub fn report(&self) -> &FrameReport {
        &self.report
    }

    /// Target joint `joint`'s model-space transform after the last [`RetargetJob::run`]
    /// (`None` past the target skeleton), for the joints the job reads them of: the hips
    /// and joints they carry, the limbs placed by IK and their feet and toes, and their
    /// ancestors, whole; joints posed through model space only for their rotation (a
    /// spine whose chain is blended, with no position read below it), the rotation. The
    /// rest (the arms and head of a 1:1 mapping, the fingers of a target whose source has
    /// none, the translation and scale of those rotation-only joints) are skipped and
    /// hold what they held before (the identity at first); use [`Pose::globals`] on the
    /// output pose for all of them.
    pub fn target_model(&self, joint: usize) -> Option<Transform> {
        self.target_model.get(joint).map(Slot::get)
    }

    /// Source joint `joint`'s model-space transform read by the last [`RetargetJob::run`]
    /// (`None` past the source skeleton): whole for the hips, feet and toes and the
    /// joints above them, the rotation alone for the other joints the job reads; what the
    /// job does not read holds what it held before.
    pub fn source_model(&self, joint: usize) -> Option<Transform> {
        self.source_model.get(joint).map(Slot::get)
    }

    /// The model transform of target joint `j`'s parent (the identity for a root).
    fn target_parent(&self, rt: &Retargeter, j: usize) -> Slot {
        rt.joints[j].parent.map_or_else(Slot::identity, |p| self.target_model[p])
    }

    /// Pitches the foot about the ankle so the toe joint is not below `floor` when the
    /// ankle is above it (a target foot longer, for its leg, than the source's would
    /// otherwise dig its toes in when the heel rises).
    fn keep_toes_up(&mut self, rt: &Retargeter, foot: usize, toes: usize, floor: f32, locals: &mut [Transform]) {
        let (a, t) = (self.target_model[foot].translation.to_vec3(), self.target_model[toes].translation.to_vec3());
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
        let parent = self.target_parent(rt, foot).rotation.to_quat();
        let rotated = turn * self.target_model[foot].rotation.to_quat();
        locals[foot].rotation = renormalize(parent.inverse() * rotated);
        for j in rt.target.subtree(foot) {
            self.target_model[j] = self.target_parent(rt, j).combine_local(&locals[j], Plain);
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
        let fk = m[limb.end].translation.to_vec3();
        let target = fk + (goal - fk) * weight;
        if (target - fk).norm() <= 1e-6 * limb.length {
            return Ok(());
        }
        let joints = TwoBoneJoints {
            upper: m[limb.upper].translation.to_vec3(),
            middle: m[limb.middle].translation.to_vec3(),
            end: fk,
            upper_rotation: m[limb.upper].rotation.to_quat(),
            middle_rotation: m[limb.middle].rotation.to_quat(),
        };
        // The pole: where the retargeted knee (elbow) points off the hip-ankle line; for a
        // straight limb, the bend direction turned with the upper joint.
        let (a, b) = (joints.upper, joints.middle);
        let axis = fk - a;
        let off = (b - a) - axis * ((b - a).dot(&axis) / axis.norm_squared().max(f32::MIN_POSITIVE));
        let pole = if off.norm() > 1e-3 * limb.length { off } else { joints.upper_rotation * limb.pole };
        let c = two_bone_corrections(&joints, &target, Some(&pole))?;
        let end_rotation = m[limb.end].rotation.to_quat();
        locals[limb.upper].rotation = renormalize(locals[limb.upper].rotation * c.upper);
        locals[limb.middle].rotation = renormalize(locals[limb.middle].rotation * c.middle);
        for j in rt.target.subtree(limb.upper) {
            let parent = self.target_parent(rt, j);
            if j == limb.end {
                locals[j].rotation = renormalize(parent.rotation.to_quat().inverse() * end_rotation);
            }
            self.target_model[j] = parent.combine_local(&locals[j], Plain);
        }
        Ok(())
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

    const ASSETS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/assets");

    /// A model's rig, automatically mapped, its bind pose the reference.
    fn rig(m: &anim_gltf::Model) -> HumanoidRig {
        HumanoidRig::new(&m.skeleton, auto_map(&m.skeleton).map, Reference::Bind(&m.skins[0].skin)).expect("rig")
    }

    /// `f(pose, contacts)` for every frame (30 Hz) of every clip of `source`, without and
    /// with both feet placed.
    fn every_frame(source: &anim_gltf::Model, mut f: impl FnMut(&Pose, &[f32; 4])) {
        let mut pose = source.skeleton.rest_pose().clone();
        for clip in &source.clips {
            for frame in 0..=(clip.duration() * 30.0).round() as usize {
                clip.sample(frame as f32 / 30.0, TimePolicy::Clamp, &mut pose).expect("sample");
                for contacts in [[0.0; 4], [1.0, 1.0, 0.0, 0.0]] {
                    f(&pose, &contacts);
                }
            }
        }
    }

    /// The fast path (local rotations straight from the source's, model transforms only
    /// where read) against the general model-space computation of every joint
    /// ([`Retargeter::general`]): every frame (30 Hz) of every mannequin clip, onto the
    /// mannequin itself and the three shared humanoids, without and with both feet placed
    /// by IK. The two differ only by rounding: locals within 2e-6 rad and 1e-6 (relative)
    /// in translation, the contact report within 1e-6.
    #[test]
    fn fast_path_matches_general() {
        let man = anim_gltf::mannequin_model();
        let source = rig(&man);
        let targets = [
            man.clone(),
            anim_gltf::load(format!("{ASSETS}/CesiumMan/CesiumMan.glb")).expect("CesiumMan"),
            anim_gltf::load(format!("{ASSETS}/RiggedFigure/RiggedFigure.glb")).expect("RiggedFigure"),
            anim_gltf::load(format!("{ASSETS}/Woman/Woman.gltf")).expect("Woman"),
        ];
        let (mut worst_angle, mut worst_move, mut fast_joints) = (0.0f32, 0.0f32, 0);
        for target in &targets {
            let rt = Retargeter::new(&source, &rig(target), RetargetSettings::default()).expect("retargeter");
            let general = rt.general();
            fast_joints += rt.joints.iter().filter(|j| j.fast.is_some()).count();
            let (mut job, mut reference) = (RetargetJob::new(&rt), RetargetJob::new(&general));
            let (mut a, mut b) = (target.skeleton.rest_pose().clone(), target.skeleton.rest_pose().clone());
            every_frame(&man, |pose, contacts| {
                let ra = *job.run(&rt, pose, contacts, &mut a).expect("fast");
                let rb = *reference.run(&general, pose, contacts, &mut b).expect("general");
                for (x, y) in a.locals().iter().zip(b.locals()) {
                    worst_angle = worst_angle.max(x.rotation.angle_to(&y.rotation));
                    let size = y.translation.norm().max(1e-3);
                    worst_move = worst_move.max((x.translation - y.translation).norm() / size);
                }
                for i in 0..4 {
                    assert!((ra.contact_error[i] - rb.contact_error[i]).abs() <= 1e-6);
                    assert!((ra.end_position[i] - rb.end_position[i]).norm() <= 1e-6);
                }
            });
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
        let man = anim_gltf::mannequin_model();
        let woman = anim_gltf::load(format!("{ASSETS}/Woman/Woman.gltf")).expect("Woman");
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
                for (j, &kept) in rt.program.target_kept.iter().enumerate() {
                    let (got, want) = (job.target_model(j).expect("a target joint"), target_globals[j]);
                    if kept & 2 != 0 {
                        let size = want.translation.norm().max(1.0);
                        assert!((got.translation - want.translation).norm() <= 1e-5 * size, "target joint {j}");
                        assert!((got.scale - want.scale).norm() <= 1e-5, "target joint {j}");
                        checked += 1;
                    }
                    if kept & 1 != 0 {
                        assert!(
                            2.0 * (got.rotation.inverse() * want.rotation).imag().norm() <= 1e-5,
                            "target joint {j}"
                        );
                        checked += 1;
                    }
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

    /// The posing passes compiled for AVX2 and FMA (fused multiply-adds) against the
    /// baseline build (a multiply and an add): every frame (30 Hz) of every mannequin clip
    /// onto the Woman and CesiumMan, without and with both feet placed by IK. They differ
    /// by rounding only: locals within 1e-5 rad (2e-4 rad with the IK, see below) and
    /// 1e-5 relative, the reports within 1e-5 of the target's size.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn fused_and_baseline_builds_agree() {
        if !anim_testkit::kernels::require("avx2") {
            return;
        }
        let fused = Isa::Avx2(anim_math::simd::Fused::detect().expect("the CPU has AVX2 and FMA (checked)"));
        let man = anim_gltf::mannequin_model();
        let source = rig(&man);
        let (mut worst_angle, mut worst_move, mut frames) = ([0.0f32; 2], 0.0f32, 0);
        for file in ["Woman/Woman.gltf", "CesiumMan/CesiumMan.glb"] {
            let target = anim_gltf::load(format!("{ASSETS}/{file}")).expect(file);
            let rt = Retargeter::new(&source, &rig(&target), RetargetSettings::default()).expect("retargeter");
            let size = rt.target_hips_reference.norm();
            let (mut job, mut reference) = (RetargetJob::new(&rt), RetargetJob::new(&rt));
            let (mut a, mut b) = (target.skeleton.rest_pose().clone(), target.skeleton.rest_pose().clone());
            every_frame(&man, |pose, contacts| {
                let ra = *job.run_with(&rt, pose, contacts, &mut a, fused).expect("fused");
                let rb = *reference.run_with(&rt, pose, contacts, &mut b, Isa::Baseline).expect("baseline");
                let placed = usize::from(contacts[0] > 0.0);
                for (x, y) in a.locals().iter().zip(b.locals()) {
                    worst_angle[placed] = worst_angle[placed].max(x.rotation.angle_to(&y.rotation));
                    let scale = y.translation.norm().max(1e-3);
                    worst_move = worst_move.max((x.translation - y.translation).norm() / scale);
                }
                for i in 0..4 {
                    assert!((ra.end_position[i] - rb.end_position[i]).norm() <= 1e-5 * size);
                    assert!((ra.contact_error[i] - rb.contact_error[i]).abs() <= 1e-5 * size);
                }
                frames += 1;
            });
        }
        println!("{frames} frames, worst {worst_angle:?} rad (without, with IK), {worst_move} relative");
        assert!(frames > 100);
        // The IK amplifies rounding where a leg is close to straight (the law of cosines
        // near full reach): measured 4.0e-5 rad with it, 1.1e-6 without.
        assert!(
            worst_angle[0] <= 1e-5 && worst_angle[1] <= 2e-4 && worst_move <= 1e-5,
            "{worst_angle:?} rad, {worst_move}"
        );
    }
}
