//! The retargeter: what is decided once for a pair of rigs, so that each frame is a few
//! quaternion products per joint ([`crate::job::RetargetJob`]).
//!
//! **Rotations**, per target joint, in model space relative to the reference poses (the
//! formulas of Unreal's and Godot's retargeters): with `Q_s(t)` the source joint's
//! model-space rotation and `R_s`, `R_t` the two joints' reference rotations,
//!
//! ```text
//! Δ(t) = Q_s(t) · R_s⁻¹          the source's rotation away from its reference
//! Q_t(t) = Δ(t) · R_t            the same turn, applied to the target's reference
//! local_t(t) = Q_t(parent)⁻¹ · Q_t(t)
//! ```
//!
//! A role the source lacks (CesiumMan has no clavicles) follows the nearest role above it
//! that the source has. Spine chains of different lengths meet by normalized chain length
//! (Unreal's interpolated chain mode): a target spine joint at a fraction `u` of its
//! hips-to-chest chain takes the `nlerp` of the `Δ` of the two source chain joints around
//! `u` on the source chain. With [`RetargetSettings::match_names`], joints outside the
//! profile (fingers, twist joints) that have the same name in both skeletons follow their
//! namesake; every other target joint keeps its rest pose.
//!
//! **The fast path.** Where a target joint `j` is driven by a source joint `s` whose
//! parent `s'` drives `j`'s parent, the source's model rotations cancel down to `s`'s local
//! rotation `L_s` (`Q_s(s) = Q_s(s') · L_s`):
//!
//! ```text
//! local_t(j) = (Δ(s') · R_t(p))⁻¹ · Δ(s) · R_t(j) = A · L_s · B,
//! A = R_t(p)⁻¹ · R_s(s'),   B = R_s(s)⁻¹ · R_t(j)       (both decided once)
//! ```
//!
//! so neither the source's nor the target's model transforms are needed for it (the arms,
//! neck and head of a 1:1 mapping). The job computes model transforms only where they are
//! read: the hips and the joints they carry, spine joints blended along chains of
//! different lengths, joints whose parent is not their source's parent's target, the limbs
//! the IK places, and their ancestors; and the source's only for the joints those read
//! (their sources, the hips, feet and toes). Where only a rotation is read (a blended
//! spine, and the source joints above it), only the rotation is computed.
//!
//! The job folds the two references into one constant per joint, `Q_t = Δ · R_t = Q_s · C`
//! with `C = R_s⁻¹ · R_t`; a spine blend `nlerp(Δ_a, Δ_b, t) · R_t` is likewise
//! `nlerp(Q_a · C_a, Q_b · C_b, t)`, right-multiplication by the unit `R_t` keeping norms
//! and dot products.
//!
//! **Aligned reference** ([`RetargetSettings::align_bones`]): two bind poses are rarely
//! the same pose (CesiumMan's arms hang 30° below the mannequin's T-pose). Each target
//! bone's reference rotation is first turned by the shortest arc that takes its reference
//! direction onto the source bone's (as Unreal's auto-align does), so bone directions
//! match in every frame; a bone's twist stays the target's.
//!
//! **Translations**: every target joint keeps its own rest translation (its bone lengths),
//! except the hips: `p_t(t) = P_t + K ⊙ (p_s(t) − P_s)` with `P` the hips' reference
//! positions and `K = k · (h, v, h)`, `k` the ratio of the hips' heights over the floor in
//! the two reference poses and `h`, `v` the horizontal and vertical factors of the
//! settings. Joints that hang beside the hips rather than below them (CesiumMan's upper
//! legs) move rigidly with the target's hips. Root motion is scaled by `K` too.

use crate::error::RetargetError;
use crate::map::HumanoidMap;
use crate::profile::{Role, Side};
use crate::rig::HumanoidRig;
use anim_core::pose::Skeleton;
use anim_math::simd::{F4, Plain, QConst, QConst4, Slot};
use anim_math::{Quat, Transform, Vec3, quat};

/// What can be adjusted when retargeting.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetargetSettings {
    /// Factor on the leg-length ratio for the hips' (and root motion's) horizontal
    /// travel. 1 scales strides with the legs.
    pub hips_horizontal: f32,
    /// Factor on the leg-length ratio for the hips' vertical motion.
    pub hips_vertical: f32,
    /// Turn each target bone's reference onto the source bone's direction first (module
    /// docs). On by default.
    pub align_bones: bool,
    /// Carry same-named joints outside the profile (fingers). On by default.
    pub match_names: bool,
    /// Place planted feet with two-bone IK. On by default.
    pub foot_ik: bool,
    /// Place planted hands with two-bone IK (contacts given by the caller). Off by default.
    pub hand_ik: bool,
    /// Keep the target's bone lengths: every joint but the hips takes its rest
    /// translation and scale (on by default, as a retargeted character keeps its own
    /// proportions). Off, a joint driven by a source joint also takes that joint's
    /// animated change of translation away from its rest (turned into the target's frame
    /// through the two parents' model transforms, scaled by the leg ratio) and of scale
    /// (as a ratio): what retargeting a character onto itself needs to reproduce clips
    /// that move joints (CesiumMan shrugs its shoulders by translation) or scale them
    /// (the Woman's bones scale by up to 1e-4).
    pub keep_bone_lengths: bool,
}

impl Default for RetargetSettings {
    fn default() -> Self {
        Self {
            hips_horizontal: 1.0,
            hips_vertical: 1.0,
            align_bones: true,
            match_names: true,
            foot_ik: true,
            hand_ik: false,
            keep_bone_lengths: true,
        }
    }
}

/// Where a target joint's rotation comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum RotationSource {
    /// The rest pose's local rotation.
    Rest,
    /// `Δ` of one source joint.
    Joint(usize),
    /// `nlerp(Δ_a, Δ_b, t)` of two source joints (spine chains).
    Lerp(usize, usize, f32),
}

/// [`RotationSource`] with the reference rotations folded in, as the job reads it: a
/// driven joint's model rotation is `Q_t = Q_s · C` with `C = R_s⁻¹ · R_t` decided once
/// (module docs), one product a frame instead of two. For a blend, `nlerp(Q_a · C_a, Q_b ·
/// C_b, t)` is `nlerp(Δ_a, Δ_b, t) · R_t`: right-multiplying by the unit `R_t` is linear
/// and keeps norms and dot products, so the blend, its hemisphere test and its
/// normalization all commute with it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Drive {
    /// The rest pose's local rotation.
    Rest,
    /// `Q_s · C` of one source joint (`C` prepared as a right operand).
    Joint(usize, QConst),
    /// `nlerp(Q_a · C_a, Q_b · C_b, t)`.
    Lerp(usize, QConst, usize, QConst, f32),
}

/// Where a target joint's translation comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum TranslationSource {
    /// The rest pose's local translation.
    Rest,
    /// The scaled hips translation.
    Hips,
    /// Carried rigidly by the hips: this position in the hips' (aligned) reference frame
    /// (lanes x, y, z; the job's layout).
    Carried(F4),
}

/// One target joint's plan.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TargetJoint {
    pub parent: Option<usize>,
    pub rest: Transform,
    pub rotation: RotationSource,
    /// The (aligned) reference model rotation `R_t`.
    pub reference: Quat,
    /// `rotation` with the references folded in (set last, once `reference` is final).
    pub drive: Drive,
    pub translation: TranslationSource,
    /// The job computes its model transform: it is driven or moved, lies in a limb the IK
    /// places, or has such a joint below it.
    pub needed: bool,
    /// The job computes its model transform (and reads its parent's): it lies in a limb
    /// the IK places, moves, or is not [`TargetJoint::fast`], or a joint below it needs
    /// its model transform.
    pub model: bool,
    /// A driven joint whose parent is driven by its source joint's parent, its model
    /// transform not needed: its local rotation is `A · L_s · B` from the source joint `s`'s
    /// local rotation `L_s` (module docs), `(s, A, B)`.
    pub fast: Option<(usize, Quat, Quat)>,
}

/// A two-bone limb placed at contacts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limb {
    pub upper: usize,
    pub middle: usize,
    pub end: usize,
    /// The source's end joint.
    pub source_end: usize,
    /// The toes of a leg (kept above the floor by pitching the foot), target and source.
    pub toes: Option<(usize, usize)>,
    /// Reference positions of the end joint, source and target.
    pub source_reference: Vec3,
    pub target_reference: Vec3,
    /// The bend direction (forward for knees, backward for elbows) in the upper joint's
    /// frame of the aligned reference: turned with the upper joint, it is the pole.
    pub pole: Vec3,
    /// Upper plus lower bone length (target).
    pub length: f32,
}

/// Retargeting from one humanoid rig to another, prepared once (see the module docs).
#[derive(Clone, Debug)]
pub struct Retargeter {
    pub(crate) source: Skeleton,
    pub(crate) target: Skeleton,
    /// The job's lists: the source joints whose model transforms it computes, and the
    /// target joints, by how it poses them.
    pub(crate) program: Program,
    pub(crate) joints: Vec<TargetJoint>,
    pub(crate) source_hips: usize,
    pub(crate) target_hips: usize,
    pub(crate) source_hips_reference: Vec3,
    pub(crate) target_hips_reference: Vec3,
    pub(crate) scale: Vec3,
    /// Left foot, right foot, left hand, right hand.
    pub(crate) limbs: [Option<Limb>; 4],
    pub(crate) settings: RetargetSettings,
    source_hips_height: f32,
    target_hips_height: f32,
}

impl Retargeter {
    /// Prepares retargeting from `source` to `target`.
    ///
    /// # Errors
    /// Non-finite or non-positive hips factors.
    pub fn new(source: &HumanoidRig, target: &HumanoidRig, settings: RetargetSettings) -> Result<Self, RetargetError> {
        for (what, v) in [("hips_horizontal", settings.hips_horizontal), ("hips_vertical", settings.hips_vertical)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(RetargetError::Setting { what, value: v });
            }
        }
        let (ss, ts) = (source.skeleton(), target.skeleton());
        let (sm, tm) = (source.map(), target.map());
        let (sref, tref) = (source.reference(), target.reference());
        let k = target.hips_height() / source.hips_height();
        let scale = Vec3::new(k * settings.hips_horizontal, k * settings.hips_vertical, k * settings.hips_horizontal);
        let hips = |m: &HumanoidMap| m.get(Role::Hips).expect("rigs have validated maps");
        let (source_hips, target_hips) = (hips(sm), hips(tm));

        let mut joints: Vec<TargetJoint> = (0..ts.len())
            .map(|j| TargetJoint {
                parent: ts.parent(j),
                rest: ts.rest_pose().locals()[j],
                rotation: RotationSource::Rest,
                reference: tref[j].rotation,
                drive: Drive::Rest,
                translation: TranslationSource::Rest,
                needed: false,
                model: false,
                fast: None,
            })
            .collect();
        // Roles: the source's joint of the role, or of the nearest role above it.
        for role in Role::ALL {
            let Some(tj) = tm.get(role) else { continue };
            let mut r = Some(role);
            while let Some(x) = r {
                if let Some(sj) = sm.get(x) {
                    joints[tj].rotation = RotationSource::Joint(sj);
                    break;
                }
                r = x.parent();
            }
        }
        // The spine, by normalized chain length.
        let (schain, tchain) = (sm.torso_chain(), tm.torso_chain());
        let (spoints, tpoints) = (chain_points(source, &schain), chain_points(target, &tchain));
        let (su, tu) = (chain_params(&spoints), chain_params(&tpoints));
        for (i, &tj) in tchain.iter().enumerate().skip(1).take(tchain.len().saturating_sub(2)) {
            let (a, b, t) = locate(&su, tu[i]);
            joints[tj].rotation = if t <= 0.0 {
                RotationSource::Joint(schain[a])
            } else if t >= 1.0 {
                RotationSource::Joint(schain[b])
            } else {
                RotationSource::Lerp(schain[a], schain[b], t)
            };
        }
        // Same-named joints outside the profile, below a role joint of both skeletons.
        if settings.match_names {
            let under_roles =
                |s: &Skeleton, m: &HumanoidMap, j: usize| m.slots().any(|(_, r)| r != j && s.is_in_hierarchy(r, j));
            let is_role = |m: &HumanoidMap, j: usize| m.slots().any(|(_, r)| r == j);
            for (tj, joint) in joints.iter_mut().enumerate() {
                if is_role(tm, tj) || !under_roles(ts, tm, tj) {
                    continue;
                }
                let name = ts.name(tj).unwrap_or("");
                if let Some(sj) = ss.find(name).filter(|&sj| !name.is_empty() && !is_role(sm, sj))
                    && under_roles(ss, sm, sj)
                {
                    joint.rotation = RotationSource::Joint(sj);
                }
            }
        }
        if settings.align_bones {
            align(source, target, (&spoints, &su), (&tchain, &tu), &mut joints);
        }
        // Translations: the hips, and driven joints hanging beside them.
        joints[target_hips].translation = TranslationSource::Hips;
        let hips_frame =
            Transform::new(tref[target_hips].translation, joints[target_hips].reference, Vec3::repeat(1.0));
        for role in Role::ALL {
            let Some(tj) = tm.get(role) else { continue };
            if tj == target_hips {
                continue;
            }
            let mut p = ts.parent(tj);
            let mut driven_above = false;
            while let Some(x) = p {
                if joints[x].rotation != RotationSource::Rest || x == target_hips {
                    driven_above = true;
                    break;
                }
                p = ts.parent(x);
            }
            if !driven_above {
                joints[tj].translation =
                    TranslationSource::Carried(F4::vec3(&hips_frame.inverse().transform_point(&tref[tj].translation)));
            }
        }
        let limbs = [
            limb(source, target, &joints, Side::Left, false, settings.foot_ik),
            limb(source, target, &joints, Side::Right, false, settings.foot_ik),
            limb(source, target, &joints, Side::Left, true, settings.hand_ik),
            limb(source, target, &joints, Side::Right, true, settings.hand_ik),
        ];
        for l in limbs.iter().flatten() {
            for j in ts.subtree(l.upper) {
                joints[j].needed = true;
            }
        }
        for j in (0..ts.len()).rev() {
            let jt = &joints[j];
            if jt.needed || jt.rotation != RotationSource::Rest || jt.translation != TranslationSource::Rest {
                joints[j].needed = true;
                if let Some(p) = ts.parent(j) {
                    joints[p].needed = true;
                }
            }
        }
        let source_needed = fast_paths(ss, target, sref, &limbs, source_hips, settings, &mut joints);
        let fold = |s: usize, reference: &Quat| QConst::right(&(sref[s].rotation.inverse() * reference));
        for jt in &mut joints {
            jt.drive = match jt.rotation {
                RotationSource::Rest => Drive::Rest,
                RotationSource::Joint(s) => Drive::Joint(s, fold(s, &jt.reference)),
                RotationSource::Lerp(a, b, t) => Drive::Lerp(a, fold(a, &jt.reference), b, fold(b, &jt.reference), t),
            };
        }
        Ok(Self {
            source: ss.clone(),
            target: ts.clone(),
            program: Program::new(&joints, &source_needed, ss, &settings, &limbs, source_hips),
            joints,
            source_hips,
            target_hips,
            source_hips_reference: sref[source_hips].translation,
            target_hips_reference: tref[target_hips].translation,
            scale,
            limbs,
            settings,
            source_hips_height: source.hips_height(),
            target_hips_height: target.hips_height(),
        })
    }

    /// The same retargeter with every joint taken through model space (no
    /// [`TargetJoint::fast`] joint, every source model transform computed): the reference
    /// the fast path is tested against.
    #[cfg(test)]
    pub(crate) fn general(&self) -> Self {
        let mut out = self.clone();
        for j in &mut out.joints {
            j.model |= j.needed;
            j.fast = None;
        }
        let every = vec![true; out.source.len()];
        out.program = Program::new(&out.joints, &every, &out.source, &out.settings, &out.limbs, out.source_hips);
        out
    }

    /// The source skeleton.
    pub fn source(&self) -> &Skeleton {
        &self.source
    }

    /// The target skeleton.
    pub fn target(&self) -> &Skeleton {
        &self.target
    }

    /// The settings.
    pub fn settings(&self) -> &RetargetSettings {
        &self.settings
    }

    /// `K`: the per-axis factor applied to hips translation and root motion (x, y, z).
    pub fn scale(&self) -> Vec3 {
        self.scale
    }

    /// The ratio of the target's hips height to the source's (the leg-length ratio).
    pub fn leg_ratio(&self) -> f32 {
        self.target_hips_height / self.source_hips_height
    }

    /// The target joints whose rotation follows the source (roles, spine, same-named
    /// joints); the others keep their rest pose.
    pub fn driven_joints(&self) -> impl Iterator<Item = usize> + '_ {
        self.joints.iter().enumerate().filter(|(_, j)| j.rotation != RotationSource::Rest).map(|(i, _)| i)
    }

    /// The target joints whose translation is animated (the hips, and joints carried by
    /// them).
    pub fn translated_joints(&self) -> impl Iterator<Item = usize> + '_ {
        self.joints.iter().enumerate().filter(|(_, j)| j.translation != TranslationSource::Rest).map(|(i, _)| i)
    }

    /// Where a source model-space position of limb `limb`'s end (0 left foot, 1 right
    /// foot, 2 left hand, 3 right hand) lands on the target: the target's reference
    /// position plus the scaled move away from the source's.
    pub fn scaled_position(&self, limb: usize, source: &Vec3) -> Option<Vec3> {
        let l = self.limbs.get(limb)?.as_ref()?;
        Some(l.target_reference + self.scale.component_mul(&(source - l.source_reference)))
    }

    /// The source and target end joints of limb `limb` (0 left foot, 1 right foot, 2 left
    /// hand, 3 right hand), when it is placed by IK.
    pub fn limb_ends(&self, limb: usize) -> Option<(usize, usize)> {
        self.limbs.get(limb)?.as_ref().map(|l| (l.source_end, l.end))
    }
}

/// The job's work for one retargeter, decided once from its joint plans
/// ([`TargetJoint`]): lists the job walks without testing a plan per joint, holding only
/// what is read. Target joints in none of them stay at rest.
#[derive(Clone, Debug, Default)]
pub(crate) struct Program {
    /// The source joints whose model transforms the job reads, parents first.
    pub source: Vec<SourceStep>,
    /// The target joints on the fast path, four at a time (the last four padded by
    /// repeating its last joint).
    pub fast: Vec<FastBatch>,
    /// The model rotations `Q_s · C` of the joints below driven by one source joint each
    /// ([`Drive::Joint`]), four at a time (padded likewise), computed before the forward
    /// pass that reads them.
    pub driven: Vec<DrivenBatch>,
    /// The other target joints the job poses, through model space, parents first.
    pub model: Vec<ModelStep>,
    /// Per target joint: the job computes its model rotation (bit 0) and its model
    /// translation and scale (bit 1), for [`crate::RetargetJob::target_model`]'s tests.
    pub target_kept: Vec<u8>,
}

/// A source joint whose model transform the job computes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SourceStep {
    pub joint: usize,
    pub parent: Option<usize>,
    /// Its model translation and scale are read (the hips, feet and toes, and the joints
    /// above them), not only its model rotation.
    pub position: bool,
}

/// Four fast-path joints: their local rotations are `A · L_s · B`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FastBatch {
    pub a: QConst4,
    pub b: QConst4,
    /// The source joints `s`.
    pub source: [usize; 4],
    pub joint: [usize; 4],
}

/// Four model-space joints driven by one source joint each: `Q_t = Q_s · C`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DrivenBatch {
    pub c: QConst4,
    /// The source joints `s`.
    pub source: [usize; 4],
    pub joint: [usize; 4],
}

/// `items` four at a time, the last four padded by repeating the last item (so that a
/// padded lane computes and stores what another lane does).
fn fours<T: Copy>(items: &[T]) -> impl Iterator<Item = [T; 4]> + '_ {
    items.chunks(4).map(|c| std::array::from_fn(|i| c[i.min(c.len() - 1)]))
}

/// A joint posed through model space.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ModelStep {
    /// Its rest local transform, in registers.
    pub rest: Slot,
    pub drive: Drive,
    pub translation: TranslationSource,
    pub joint: usize,
    pub parent: Option<usize>,
    /// The source joint whose translation and scale changes it takes, when bone lengths
    /// are not kept.
    pub own: Option<usize>,
    /// Its model translation and scale are read (by the IK, the toe check, the report, a
    /// joint the hips carry, or a joint below), not only its model rotation.
    pub position: bool,
    /// Its model transform when it never changes (a root at rest, or a joint at rest
    /// under one): the job copies it.
    pub fixed: Option<Slot>,
}

impl Program {
    /// The lists for these plans (`joints`, the target's joints in order, parents first),
    /// the source joints the job reads (`source_needed`), and the limbs the job places
    /// and watches.
    pub(crate) fn new(
        joints: &[TargetJoint],
        source_needed: &[bool],
        source: &Skeleton,
        settings: &RetargetSettings,
        limbs: &[Option<Limb>; 4],
        source_hips: usize,
    ) -> Self {
        let all = !settings.keep_bone_lengths;
        // Where model translations are read, and so above it too.
        let mut source_position = vec![all; source.len()];
        source_position[source_hips] = true;
        let mut target_position = vec![all; joints.len()];
        for (j, plan) in joints.iter().enumerate() {
            // The hips' and carried joints' translations come from their parents' frames.
            if plan.translation != TranslationSource::Rest {
                target_position[j] = true;
            }
        }
        for l in limbs.iter().flatten() {
            source_position[l.source_end] = true;
            for j in [l.upper, l.middle, l.end] {
                target_position[j] = true;
            }
            if let Some((toes, source_toes)) = l.toes {
                target_position[toes] = true;
                source_position[source_toes] = true;
            }
        }
        for s in (0..source.len()).rev() {
            if let (true, Some(p)) = (source_position[s], source.parent(s)) {
                source_position[p] = true;
            }
        }
        for j in (0..joints.len()).rev() {
            if let (true, Some(p)) = (target_position[j], joints[j].parent) {
                target_position[p] = true;
            }
        }
        // The model joints the job computes: moved, driven, read for positions, or the
        // parent of such a joint (whose rotation that joint reads).
        let is_model = |plan: &TargetJoint| plan.needed && plan.fast.is_none();
        let mut kept = vec![0u8; joints.len()];
        for j in (0..joints.len()).rev() {
            let plan = &joints[j];
            if !is_model(plan) {
                continue;
            }
            let moves = plan.drive != Drive::Rest || plan.translation != TranslationSource::Rest || all;
            if moves || target_position[j] || kept[j] != 0 {
                kept[j] = 1 | if target_position[j] { 2 } else { 0 };
                if let Some(p) = plan.parent {
                    kept[p] |= 1;
                }
            }
        }
        let mut program = Program {
            source: (0..source.len())
                .filter(|&s| source_needed[s])
                .map(|s| SourceStep { joint: s, parent: source.parent(s), position: source_position[s] })
                .collect(),
            ..Program::default()
        };
        let mut fixed: Vec<Option<Slot>> = vec![None; joints.len()];
        let (mut fast, mut driven) = (Vec::new(), Vec::new());
        for (joint, plan) in joints.iter().enumerate().filter(|(_, plan)| plan.needed) {
            if let Some((source, a, b)) = plan.fast {
                fast.push((QConst::left(&a), QConst::right(&b), source, joint));
                continue;
            }
            if kept[joint] == 0 {
                continue;
            }
            let own = match plan.rotation {
                RotationSource::Joint(s) if all => Some(s),
                _ => None,
            };
            let rest = Slot {
                translation: F4::vec3(&plan.rest.translation),
                rotation: F4::quat(&plan.rest.rotation),
                scale: F4::vec3(&plan.rest.scale),
            };
            if let Drive::Joint(source, c) = plan.drive {
                driven.push((c, source, joint));
            }
            let at_rest = plan.drive == Drive::Rest && plan.translation == TranslationSource::Rest && own.is_none();
            fixed[joint] = match plan.parent {
                _ if !at_rest => None,
                None => Some(rest),
                Some(p) => fixed[p].map(|parent| parent.combine(rest.translation, rest.rotation, rest.scale, Plain)),
            };
            program.model.push(ModelStep {
                rest,
                drive: plan.drive,
                translation: plan.translation,
                joint,
                parent: plan.parent,
                own,
                position: target_position[joint],
                fixed: fixed[joint],
            });
        }
        program.fast = fours(&fast)
            .map(|f| FastBatch {
                a: QConst4::new(f.each_ref().map(|x| &x.0)),
                b: QConst4::new(f.each_ref().map(|x| &x.1)),
                source: f.map(|x| x.2),
                joint: f.map(|x| x.3),
            })
            .collect();
        program.driven = fours(&driven)
            .map(|d| DrivenBatch {
                c: QConst4::new(d.each_ref().map(|x| &x.0)),
                source: d.map(|x| x.1),
                joint: d.map(|x| x.2),
            })
            .collect();
        // A fixed joint's transform is whole, positions or not.
        for step in program.model.iter().filter(|step| step.fixed.is_some()) {
            kept[step.joint] = 3;
        }
        program.target_kept = kept;
        program
    }
}

/// Decides which target joints take their local rotation straight from the source's local
/// rotations ([`TargetJoint::fast`]) and which need model transforms
/// ([`TargetJoint::model`]), and returns the source joints whose model transforms the job
/// reads (module docs, "The fast path").
fn fast_paths(
    ss: &Skeleton,
    target: &HumanoidRig,
    sref: &[Transform],
    limbs: &[Option<Limb>; 4],
    source_hips: usize,
    settings: RetargetSettings,
    joints: &mut [TargetJoint],
) -> Vec<bool> {
    let ts = target.skeleton();
    // The feet and toes: the offline report watches their height.
    for side in [Side::Left, Side::Right] {
        for role in [Role::Foot(side), Role::Toes(side)] {
            if let Some(j) = target.map().get(role) {
                joints[j].model = joints[j].needed;
            }
        }
    }
    for l in limbs.iter().flatten() {
        for j in ts.subtree(l.upper) {
            joints[j].model = true;
        }
    }
    // Children before parents: a joint's `model` is final when it is reached.
    for j in (0..ts.len()).rev() {
        let jt = joints[j];
        if !jt.needed {
            continue;
        }
        let fast = match (jt.rotation, jt.parent) {
            (RotationSource::Joint(sj), Some(p))
                if settings.keep_bone_lengths && !jt.model && jt.translation == TranslationSource::Rest =>
            {
                match joints[p].rotation {
                    RotationSource::Joint(sp) if ss.parent(sj) == Some(sp) => Some((
                        sj,
                        joints[p].reference.inverse() * sref[sp].rotation,
                        sref[sj].rotation.inverse() * jt.reference,
                    )),
                    _ => None,
                }
            }
            _ => None,
        };
        joints[j].fast = fast;
        joints[j].model = fast.is_none();
        if let (None, Some(p)) = (fast, jt.parent) {
            joints[p].model = true;
        }
    }
    let mut needed = vec![!settings.keep_bone_lengths; ss.len()];
    for jt in joints.iter().filter(|j| j.needed && j.fast.is_none()) {
        match jt.rotation {
            RotationSource::Rest => {}
            RotationSource::Joint(s) => needed[s] = true,
            RotationSource::Lerp(a, b, _) => (needed[a], needed[b]) = (true, true),
        }
    }
    needed[source_hips] = true;
    for l in limbs.iter().flatten() {
        needed[l.source_end] = true;
        if let Some((_, s)) = l.toes {
            needed[s] = true;
        }
    }
    for s in (0..ss.len()).rev() {
        if let (true, Some(p)) = (needed[s], ss.parent(s)) {
            needed[p] = true;
        }
    }
    needed
}

/// The points of a chain built from its bones: the first joint at the origin, each next
/// one at the previous plus the bone's reference vector ([`bone_vector`]). Built so from
/// both rigs alike, the same rig gives the same points, to the bit.
fn chain_points(rig: &HumanoidRig, chain: &[usize]) -> Vec<Vec3> {
    let mut out = vec![Vec3::zeros(); chain.len()];
    for i in 1..chain.len() {
        out[i] = out[i - 1] + bone_vector(rig, chain[i - 1], chain[i]);
    }
    out
}

/// The normalized length along a chain at each of its points (0 at the first, 1 at the
/// last); evenly spaced when the chain has no length.
fn chain_params(points: &[Vec3]) -> Vec<f32> {
    let mut acc = vec![0.0f32; points.len()];
    for i in 1..points.len() {
        acc[i] = acc[i - 1] + (points[i] - points[i - 1]).norm();
    }
    let total = acc.last().copied().unwrap_or(0.0);
    if total > 0.0 {
        acc.iter().map(|a| a / total).collect()
    } else {
        let d = points.len().saturating_sub(1).max(1) as f32;
        (0..points.len()).map(|i| i as f32 / d).collect()
    }
}

/// The segment of a chain (by its parameters `u`) holding `x`: indices and fraction.
fn locate(u: &[f32], x: f32) -> (usize, usize, f32) {
    let last = u.len() - 1;
    for i in 0..last {
        if x <= u[i + 1] || i + 1 == last {
            let span = u[i + 1] - u[i];
            let t = if span > 0.0 { ((x - u[i]) / span).clamp(0.0, 1.0) } else { 0.0 };
            return (i, i + 1, t);
        }
    }
    (0, 0, 0.0)
}

/// The point at parameter `x` on a chain's polyline.
fn chain_point(points: &[Vec3], u: &[f32], x: f32) -> Vec3 {
    let (a, b, t) = locate(u, x);
    if t <= 0.0 {
        points[a]
    } else if t >= 1.0 {
        points[b]
    } else {
        points[a].lerp(&points[b], t)
    }
}

/// The vector of the bone from `joint` to `end` (below it) in the reference pose, as the
/// job will build it: the reference rotation applied to the rest offset.
fn bone_vector(rig: &HumanoidRig, joint: usize, end: usize) -> Vec3 {
    rig.reference()[joint].rotation * rest_offset(rig.skeleton(), joint, end)
}

/// The offset of `end` in `joint`'s local frame through the rest pose of the joints
/// between them (`end` lies below `joint`).
fn rest_offset(skeleton: &Skeleton, joint: usize, end: usize) -> Vec3 {
    let rest = skeleton.rest_pose().locals();
    let mut p = rest[end].translation;
    let mut k = skeleton.parent(end);
    while let Some(x) = k {
        if x == joint {
            break;
        }
        p = rest[x].transform_point(&p);
        k = skeleton.parent(x);
    }
    p
}

/// Turns each target bone's reference onto the source bone's direction (module docs).
fn align(
    source: &HumanoidRig,
    target: &HumanoidRig,
    (spoints, su): (&[Vec3], &[f32]),
    (tchain, tu): (&[usize], &[f32]),
    joints: &mut [TargetJoint],
) {
    let (sm, tm) = (source.map(), target.map());
    let turn = |joints: &mut [TargetJoint], tj: usize, tend: usize, source_dir: Vec3| {
        let dir = joints[tj].reference * rest_offset(target.skeleton(), tj, tend);
        if dir.norm() > 1e-6 && source_dir.norm() > 1e-6 {
            joints[tj].reference = quat::from_to(&dir, &source_dir) * joints[tj].reference;
        }
    };
    // The torso chain (hips and spine joints; the chest's bone runs to the neck).
    for i in 0..tchain.len().saturating_sub(1) {
        let dir = chain_point(spoints, su, tu[i + 1]) - chain_point(spoints, su, tu[i]);
        turn(joints, tchain[i], tchain[i + 1], dir);
    }
    // Bones between two roles both rigs have: the role's bone end, or the next one.
    for role in Role::ALL {
        if role == Role::Hips {
            continue;
        }
        let (Some(tj), Some(sj)) = (tm.get(role), sm.get(role)) else { continue };
        let mut end = role.bone_end();
        while let Some(e) = end {
            if let (Some(te), Some(se)) = (tm.get(e), sm.get(e)) {
                turn(joints, tj, te, bone_vector(source, sj, se));
                break;
            }
            end = e.bone_end();
        }
    }
}

/// The two-bone limb of one side (leg, or arm when `arm`), when `enabled`.
fn limb(
    source: &HumanoidRig,
    target: &HumanoidRig,
    joints: &[TargetJoint],
    side: Side,
    arm: bool,
    enabled: bool,
) -> Option<Limb> {
    if !enabled {
        return None;
    }
    let roles = if arm {
        [Role::UpperArm(side), Role::LowerArm(side), Role::Hand(side)]
    } else {
        [Role::UpperLeg(side), Role::LowerLeg(side), Role::Foot(side)]
    };
    let (tm, tref) = (target.map(), target.reference());
    let [upper, middle, end] = roles.map(|r| tm.get(r));
    let (upper, middle, end) = (upper?, middle?, end?);
    let source_end = source.map().get(roles[2])?;
    let length = (tref[middle].translation - tref[upper].translation).norm()
        + (tref[end].translation - tref[middle].translation).norm();
    let bend = if arm { -target.forward() } else { target.forward() };
    let toes = match (arm, tm.get(Role::Toes(side)), source.map().get(Role::Toes(side))) {
        (false, Some(t), Some(s)) if target.skeleton().is_in_hierarchy(end, t) => Some((t, s)),
        _ => None,
    };
    Some(Limb {
        upper,
        middle,
        end,
        source_end,
        toes,
        source_reference: source.reference()[source_end].translation,
        target_reference: tref[end].translation,
        pole: joints[upper].reference.inverse() * bend,
        length,
    })
}
