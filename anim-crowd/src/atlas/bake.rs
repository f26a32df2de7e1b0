//! Baking: clips of one skin sampled at a fixed rate into an atlas, and the measure of how
//! far the atlas's playback is from its source clips.

use super::error::AtlasError;
use super::limits::{MAX_HEIGHT, MAX_WIDTH};
use super::read::{dot4, neg4};
use super::types::{AnimAtlas, AtlasClip, AtlasSource, BakeSettings, TexelFormat, Texels, TextureLayout};
use anim_core::clip::{Clip, TimePolicy};
use anim_core::pose::Skeleton;
use anim_core::skin::skinning::{self, NormalMode, SkinningInput, SkinningOutput};
use anim_core::skin::{Mesh, Palette, Skin, SkinMethod};
use anim_math::{Mat4, Transform, Vec3, affine_mul, dual};

/// Frames of a clip of `duration` seconds baked at `rate`: `ceil(duration · rate) + 1`, at
/// least 2; `None` beyond [`MAX_WIDTH`].
fn frame_count(duration: f32, rate: f32) -> Option<u32> {
    let n = (f64::from(duration) * f64::from(rate)).ceil() + 1.0;
    if !(n.is_finite() && n <= f64::from(MAX_WIDTH)) {
        return None;
    }
    Some((n as u32).max(2))
}

/// Bounds accumulated over skinned positions.
struct Bounds {
    min: Vec3,
    max: Vec3,
    any: bool,
}

impl Bounds {
    fn new() -> Self {
        Self { min: Vec3::repeat(f32::INFINITY), max: Vec3::repeat(f32::NEG_INFINITY), any: false }
    }
    fn add(&mut self, points: &[Vec3]) {
        for p in points {
            self.min = self.min.inf(p);
            self.max = self.max.sup(p);
            self.any = true;
        }
    }
    fn get(&self) -> (Vec3, Vec3) {
        if self.any { (self.min, self.max) } else { (Vec3::zeros(), Vec3::zeros()) }
    }
}

/// Checks that every mesh's influences fit a skin of `joints` joints.
fn check_meshes(meshes: &[&Mesh], joints: usize) -> Result<(), AtlasError> {
    for (i, m) in meshes.iter().enumerate() {
        if let Some(inf) = &m.influences
            && inf.joint_bound() > joints
        {
            return Err(AtlasError::MeshJoints { mesh: i, needed: inf.joint_bound(), joints });
        }
    }
    Ok(())
}

/// Linear-blend skins every mesh with `palette` into `out` (one buffer a mesh, already of
/// the mesh's vertex count). Meshes without influences keep their bind positions.
fn skin_meshes(meshes: &[&Mesh], palette: &[Mat4], out: &mut [Vec<Vec3>]) -> Result<(), AtlasError> {
    for (i, (m, o)) in meshes.iter().zip(out.iter_mut()).enumerate() {
        match &m.influences {
            Some(inf) => {
                let input = SkinningInput { influences: inf, positions: &m.positions, normals: None };
                let mut output = SkinningOutput { positions: o, normals: None };
                skinning::linear_blend(&input, palette, NormalMode::Direct, &mut output)
                    .map_err(|source| AtlasError::Skinning { mesh: i, source })?;
            }
            None => o.copy_from_slice(&m.positions),
        }
    }
    Ok(())
}

impl AnimAtlas {
    /// Bakes `clips` of `skeleton`, skinned by `skin`, into one atlas. `meshes` (the parts
    /// skinned by `skin`; their influences index skin joints) give each clip's bounds: every
    /// mesh is linear-blend skinned with the exact skinning matrices of every frame (a mesh
    /// without influences counts with its bind positions; no vertex at all gives zero
    /// bounds).
    ///
    /// Clip `c` gets `frame_count = ceil(duration · rate) + 1` columns (at least 2) and its
    /// own rate `(frame_count − 1) / duration`, so its last frame is exactly its end. A
    /// clip of zero duration gets 2 identical frames and the bake rate.
    ///
    /// Every frame starts from the skeleton's rest pose (channels a clip does not animate
    /// keep their rest values) and is sampled with [`TimePolicy::Clamp`].
    ///
    /// # Errors
    /// No clip, a rate that is not positive and finite, the atlas wider than
    /// [`MAX_WIDTH`] or taller than [`MAX_HEIGHT`], a clip animating a joint the skeleton
    /// lacks, a skin joint out of the skeleton, a mesh using joints the skin lacks, or a
    /// non-rigid skinning matrix with [`TextureLayout::SkinDualQuat`].
    pub fn bake(
        skeleton: &Skeleton,
        skin: &Skin,
        meshes: &[&Mesh],
        clips: &[AtlasSource<'_>],
        settings: &BakeSettings,
    ) -> Result<Self, AtlasError> {
        Self::bake_with_progress(skeleton, skin, meshes, clips, settings, &mut |_| {})
    }

    /// [`AnimAtlas::bake`], calling `on_clip(i)` before clip `i` is sampled (after every
    /// clip was checked), for a progress report of a long bake.
    ///
    /// # Errors
    /// As [`AnimAtlas::bake`].
    pub fn bake_with_progress(
        skeleton: &Skeleton,
        skin: &Skin,
        meshes: &[&Mesh],
        clips: &[AtlasSource<'_>],
        settings: &BakeSettings,
        on_clip: &mut dyn FnMut(usize),
    ) -> Result<Self, AtlasError> {
        if clips.is_empty() {
            return Err(AtlasError::NoClips);
        }
        let rate = settings.rate;
        if !(rate.is_finite() && rate > 0.0) {
            return Err(AtlasError::BadRate(rate));
        }
        let joints = skin.len();
        if let Some((index, &joint)) = skin.joints().iter().enumerate().find(|(_, j)| **j >= skeleton.len()) {
            return Err(anim_core::pose::PoseError::JointOutOfRange { index, joint, count: skeleton.len() }.into());
        }
        let tpj = settings.layout.texels_per_joint();
        let height = joints as u64 * u64::from(tpj);
        if height > u64::from(MAX_HEIGHT) {
            return Err(AtlasError::TooTall { joints, height, max: MAX_HEIGHT });
        }
        check_meshes(meshes, joints)?;
        // The clip table first: the width must be known before any texel is written.
        let mut table = Vec::with_capacity(clips.len());
        let mut width = 0u64;
        for (index, src) in clips.iter().enumerate() {
            let clip = src.clip;
            clip.check_joints(skeleton.len()).map_err(|source| AtlasError::Clip {
                index,
                name: clip.name().to_owned(),
                source,
            })?;
            let duration = clip.duration();
            let n = frame_count(duration, rate)
                .ok_or(AtlasError::TooWide { width: width + u64::from(MAX_WIDTH) + 1, max: MAX_WIDTH })?;
            let first = width;
            width += u64::from(n);
            if width > u64::from(MAX_WIDTH) {
                return Err(AtlasError::TooWide { width, max: MAX_WIDTH });
            }
            let clip_rate = if duration > 0.0 { (n - 1) as f32 / duration } else { rate };
            table.push(AtlasClip {
                name: clip.name().to_owned(),
                first_frame: first as u32,
                frame_count: n,
                rate: clip_rate,
                duration,
                looping: src.looping,
                bounds: (Vec3::zeros(), Vec3::zeros()),
            });
        }
        let width = width as u32;
        let w = width as usize;
        let tpj = tpj as usize;
        let mut image = vec![[0.0f32; 4]; w * joints * tpj];
        let rest = skeleton.rest_pose();
        let mut pose = rest.clone();
        let mut model = vec![Mat4::identity(); skeleton.len()];
        let mut pal = vec![Mat4::identity(); joints];
        let mut skinned: Vec<Vec<Vec3>> = meshes.iter().map(|m| vec![Vec3::zeros(); m.positions.len()]).collect();
        let (skin_joints, ibm) = (skin.joints(), skin.inverse_bind());
        let mut rigid = true;
        for (ci, (src, entry)) in clips.iter().zip(table.iter_mut()).enumerate() {
            on_clip(ci);
            let clip = src.clip;
            let mut bounds = Bounds::new();
            for f in 0..entry.frame_count {
                let time = if f + 1 == entry.frame_count {
                    entry.duration
                } else {
                    (f as f32 / entry.rate).min(entry.duration)
                };
                pose.locals_mut().copy_from_slice(rest.locals());
                clip.sample(time, TimePolicy::Clamp, &mut pose).map_err(|source| AtlasError::Clip {
                    index: ci,
                    name: clip.name().to_owned(),
                    source,
                })?;
                pose.local_to_model(skeleton, &mut model)?;
                let x = (entry.first_frame + f) as usize;
                for (j, ((p, &sj), ib)) in pal.iter_mut().zip(skin_joints).zip(ibm).enumerate() {
                    let m = &model[sj];
                    *p = affine_mul(m, ib);
                    let joint_rigid = anim_core::skin::palette::is_orthonormal(p);
                    rigid &= joint_rigid;
                    let row = j * tpj;
                    let at = |k: usize| (row + k) * w + x;
                    // The same texel of the previous frame of this clip, for sign alignment.
                    let prev = |img: &[[f32; 4]], k: usize| if f > 0 { Some(img[at(k) - 1]) } else { None };
                    match settings.layout {
                        TextureLayout::ModelTrs => {
                            let tr = Transform::from_matrix(m);
                            let mut q: [f32; 4] = tr.rotation.coords.into();
                            if prev(&image, 1).is_some_and(|pq| dot4(pq, q) < 0.0) {
                                q = neg4(q);
                            }
                            let (t, s) = (tr.translation, tr.scale);
                            image[at(0)] = [t.x, t.y, t.z, 0.0];
                            image[at(1)] = q;
                            image[at(2)] = [s.x, s.y, s.z, 0.0];
                        }
                        TextureLayout::SkinMatrix => {
                            for r in 0..3 {
                                image[at(r)] = [p[(r, 0)], p[(r, 1)], p[(r, 2)], p[(r, 3)]];
                            }
                        }
                        TextureLayout::SkinDualQuat => {
                            if !joint_rigid {
                                return Err(AtlasError::NotRigid {
                                    clip: ci,
                                    name: clip.name().to_owned(),
                                    frame: f,
                                    joint: j,
                                    joint_name: skeleton.name(sj).unwrap_or_default().to_owned(),
                                });
                            }
                            let dq = dual::from_rigid_matrix(p);
                            let mut r: [f32; 4] = dq.as_ref().real.coords.into();
                            let mut d: [f32; 4] = dq.as_ref().dual.coords.into();
                            if prev(&image, 0).is_some_and(|pr| dot4(pr, r) < 0.0) {
                                r = neg4(r);
                                d = neg4(d);
                            }
                            image[at(0)] = r;
                            image[at(1)] = d;
                        }
                    }
                }
                skin_meshes(meshes, &pal, &mut skinned)?;
                for s in &skinned {
                    bounds.add(s);
                }
            }
            entry.bounds = bounds.get();
        }
        let texels = match settings.format {
            TexelFormat::F32 => Texels::F32(image),
            TexelFormat::F16 => {
                let half: Vec<[u16; 4]> = image.iter().map(|t| t.map(|v| half::f16::from_f32(v).to_bits())).collect();
                let overflow = half.iter().zip(&image).enumerate().find_map(|(i, (h, f))| {
                    (0..4).find(|&c| !half::f16::from_bits(h[c]).is_finite()).map(|c| (i, f[c]))
                });
                if let Some((i, value)) = overflow {
                    let (x, y) = ((i % w) as u32, i / w);
                    let clip = table.iter().position(|c| x < c.first_frame + c.frame_count).unwrap_or(0);
                    let c = &table[clip];
                    return Err(AtlasError::HalfOverflow {
                        clip,
                        name: c.name.clone(),
                        frame: x - c.first_frame.min(x),
                        joint: y / tpj,
                        texel: (y % tpj) as u32,
                        value,
                    });
                }
                Texels::F16(half)
            }
        };
        let joint_names =
            skin_joints.iter().map(|&j| skeleton.name(j).unwrap_or_default().to_owned()).collect::<Vec<_>>();
        Ok(Self {
            layout: settings.layout,
            format: settings.format,
            joint_names,
            inverse_bind: ibm.to_vec(),
            width,
            rigid,
            clips: table,
            texels,
        })
    }
}

/// The resampling error of one clip of an atlas (see [`bake_error`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ClipBakeError {
    /// Clip name.
    pub name: String,
    /// Largest vertex distance, in model units.
    pub max_distance: f32,
    /// `max_distance` as a fraction of the bind-pose bounding-box diagonal.
    pub max_fraction: f32,
    /// Time (seconds) at which the largest distance was found.
    pub at_time: f32,
}

/// What [`bake_error`] measured.
#[derive(Clone, Debug, PartialEq)]
pub struct BakeErrorReport {
    /// Diagonal of the meshes' bind-pose bounding box, in model units.
    pub diagonal: f32,
    /// Per clip, in atlas order.
    pub clips: Vec<ClipBakeError>,
    /// Largest distance of any clip, in model units.
    pub max_distance: f32,
    /// Largest fraction of any clip.
    pub max_fraction: f32,
}

/// How far an atlas's playback is from the clips it was baked from: the largest distance
/// between a vertex linear-blend skinned with the exact palette (the clip sampled at `t`
/// from the rest pose, [`TimePolicy::Clamp`]) and with the atlas reader's palette
/// ([`AnimAtlas::palette`], [`SkinMethod::Lbs`], at [`AnimAtlas::frame_pair`]`(clip, t)`),
/// over `samples_per_frame` times evenly spaced inside every frame interval of every clip
/// (`t = (f + (s + ½) / samples_per_frame) / rate`, the middles of equal sub-intervals),
/// reported in model units and as a fraction of the meshes' bind-pose bounding-box diagonal.
///
/// `clips[i]` must be the clip baked as atlas clip `i`; `skeleton`, `skin` and `meshes` the
/// ones given to [`AnimAtlas::bake`].
///
/// # Errors
/// Another clip count than the atlas's, another skin joint count, meshes using joints the
/// skin lacks, meshes without extent, or any sampling error.
pub fn bake_error(
    atlas: &AnimAtlas,
    skeleton: &Skeleton,
    skin: &Skin,
    meshes: &[&Mesh],
    clips: &[&Clip],
    samples_per_frame: usize,
) -> Result<BakeErrorReport, AtlasError> {
    bake_error_with_progress(atlas, skeleton, skin, meshes, clips, samples_per_frame, &mut |_| {})
}

/// [`bake_error`], calling `on_clip(i)` before clip `i` is measured (after the inputs were
/// checked), for a progress report of a long measurement.
///
/// # Errors
/// As [`bake_error`].
pub fn bake_error_with_progress(
    atlas: &AnimAtlas,
    skeleton: &Skeleton,
    skin: &Skin,
    meshes: &[&Mesh],
    clips: &[&Clip],
    samples_per_frame: usize,
    on_clip: &mut dyn FnMut(usize),
) -> Result<BakeErrorReport, AtlasError> {
    if clips.len() != atlas.clips().len() {
        return Err(AtlasError::ClipCount { atlas: atlas.clips().len(), given: clips.len() });
    }
    if skin.len() != atlas.joint_count() {
        return Err(AtlasError::JointCount { atlas: atlas.joint_count(), model: skin.len() });
    }
    check_meshes(meshes, skin.len())?;
    let mut bind = Bounds::new();
    for m in meshes {
        bind.add(&m.positions);
    }
    let (lo, hi) = bind.get();
    let diagonal = (hi - lo).norm();
    if !(diagonal > 0.0 && diagonal.is_finite()) {
        return Err(AtlasError::EmptyMeshes);
    }
    let spf = samples_per_frame.max(1);
    let rest = skeleton.rest_pose();
    let mut pose = rest.clone();
    let mut model = vec![Mat4::identity(); skeleton.len()];
    let mut exact = vec![Mat4::identity(); skin.len()];
    let mut read = Palette::new(SkinMethod::Lbs);
    let mut scratch = Vec::new();
    let alloc = || meshes.iter().map(|m| vec![Vec3::zeros(); m.positions.len()]).collect::<Vec<_>>();
    let (mut pe, mut pa) = (alloc(), alloc());
    let mut report = BakeErrorReport { diagonal, clips: Vec::new(), max_distance: 0.0, max_fraction: 0.0 };
    for (ci, (clip, entry)) in clips.iter().zip(atlas.clips()).enumerate() {
        on_clip(ci);
        let mut worst = ClipBakeError { name: entry.name.clone(), max_distance: 0.0, max_fraction: 0.0, at_time: 0.0 };
        for f in 0..entry.frame_count.saturating_sub(1) {
            for s in 0..spf {
                let time = ((f as f32 + (s as f32 + 0.5) / spf as f32) / entry.rate).min(entry.duration);
                pose.locals_mut().copy_from_slice(rest.locals());
                clip.sample(time, TimePolicy::Clamp, &mut pose).map_err(|source| AtlasError::Clip {
                    index: ci,
                    name: clip.name().to_owned(),
                    source,
                })?;
                pose.local_to_model(skeleton, &mut model)?;
                anim_core::skin::palette::skinning_matrices(&model, skin, &mut exact)?;
                let fp = entry.frame_pair(time);
                atlas.palette_with_scratch(fp, None, SkinMethod::Lbs, &mut read, &mut scratch)?;
                skin_meshes(meshes, &exact, &mut pe)?;
                skin_meshes(meshes, read.matrices().unwrap_or(&[]), &mut pa)?;
                for (a, b) in pe.iter().flatten().zip(pa.iter().flatten()) {
                    let d = (a - b).norm();
                    if d > worst.max_distance {
                        worst.max_distance = d;
                        worst.at_time = time;
                    }
                }
            }
        }
        worst.max_fraction = worst.max_distance / diagonal;
        report.max_distance = report.max_distance.max(worst.max_distance);
        report.max_fraction = report.max_fraction.max(worst.max_fraction);
        report.clips.push(worst);
    }
    Ok(report)
}
