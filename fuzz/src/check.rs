//! The path every fuzz input takes, shared word for word with the workspace's regression
//! test (`anim-gltf/tests/fuzz_regressions.rs` includes this file): bytes (`.glb` or
//! `.gltf` with `data:` URIs) → [`anim_gltf::load_from_bytes`] → for the rest pose and for
//! every clip at its start, middle and end (clamped, and the middle once more wrapped): the
//! world matrices, every skin's joint matrices (`world · IBM`) and every mesh instance
//! skinned on the CPU with linear blend and dual-quaternion skinning, normals included, as
//! `animtool skin` does.
//!
//! Materials, textures and images are checked too: every texture reference resolves, every
//! image a texture uses is decoded to `width · height · 4` bytes, tangents and colours are
//! finite.
//!
//! A rejected input is fine. Once the import succeeded, anything that goes wrong is a bug
//! and panics (which the fuzzer reports as a crash): an error from a call the model itself
//! made valid, or a non-finite matrix, position or normal (glTF's numbers are finite, so
//! no input may produce a non-finite output).

use anim_core::clip::TimePolicy;
use anim_core::pose::Pose;
use anim_core::skin::SkinMethod;
use anim_core::skin::palette::skinning_matrices;
use anim_gltf::{Model, SkinScratch};
use anim_math::{Mat4, Vec3};

/// What one input did when it did not panic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The importer refused it, with this message.
    Rejected(String),
    /// Imported and skinned: how many poses were evaluated and how many vertices were
    /// skinned over all of them (each method counted).
    Skinned {
        /// Poses evaluated (the rest pose plus four samples per clip).
        poses: usize,
        /// Vertices skinned, summed over poses, instances and methods.
        vertices: usize,
    },
}

/// Runs `bytes` through the whole path. Panics on a bug (see the module docs).
pub fn import_and_skin(bytes: &[u8]) -> Outcome {
    match anim_gltf::load_from_bytes(bytes, None) {
        Ok(model) => skin_model(&model),
        Err(e) => Outcome::Rejected(e.to_string()),
    }
}

/// The times a clip is sampled at: start, middle and end clamped, and the middle wrapped
/// (the same time through the other policy's arithmetic).
fn sample_times(model: &Model, clip: usize) -> [(f32, TimePolicy); 4] {
    let c = &model.clips[clip];
    let (start, end) = (c.start_time(), c.duration());
    let mid = 0.5 * (start + end);
    [(start, TimePolicy::Clamp), (mid, TimePolicy::Clamp), (end, TimePolicy::Clamp), (mid, TimePolicy::Wrap)]
}

/// Checks what the importer says about the surfaces: references resolve, decoded images
/// have their size, per-vertex surface attributes are finite and of the vertex count.
fn check_surfaces(model: &Model) {
    for (t, tex) in model.textures.iter().enumerate() {
        let image = model.images.get(tex.image).unwrap_or_else(|| panic!("texture {t}: image {} missing", tex.image));
        assert!(image.width > 0 && image.height > 0, "texture {t}: image {} not decoded", tex.image);
        assert!(image.width <= anim_gltf::MAX_IMAGE_DIMENSION && image.height <= anim_gltf::MAX_IMAGE_DIMENSION);
        assert_eq!(image.pixels.len(), image.width as usize * image.height as usize * 4, "texture {t}: image size");
    }
    for (i, m) in model.materials.iter().enumerate() {
        for r in m.texture_refs().into_iter().filter_map(|(r, _)| r) {
            assert!(r.texture < model.textures.len() && r.tex_coord <= 1, "material {i}: {r:?}");
            assert!(finite(&r.transform.rows().concat()), "material {i}: non-finite texture transform");
        }
    }
    for (i, inst) in model.meshes.iter().enumerate() {
        let n = inst.data.vertex_count();
        assert!(inst.material.is_none_or(|m| m < model.materials.len()), "mesh instance {i}: material");
        for (what, len) in
            [("tangents", inst.tangents.len()), ("colours", inst.colors.len()), ("uvs1", inst.uvs1.len())]
        {
            assert!(len == 0 || len == n, "mesh instance {i}: {len} {what} for {n} vertices");
        }
        assert!(inst.tangents.iter().all(|t| finite(t)), "mesh instance {i}: non-finite tangent");
        assert!(inst.colors.iter().all(|c| finite(c)), "mesh instance {i}: non-finite colour");
    }
}

/// Poses and skins an imported model (see the module docs).
pub fn skin_model(model: &Model) -> Outcome {
    check_surfaces(model);
    let mut pose: Pose = model.skeleton.rest_pose().clone();
    let mut world = vec![Mat4::identity(); model.skeleton.len()];
    let mut joints: Vec<Mat4> = Vec::new();
    let mut positions: Vec<Vec3> = Vec::new();
    let mut normals: Vec<Vec3> = Vec::new();
    let mut scratch = SkinScratch::new();
    let mut poses = 0;
    let mut vertices = 0;

    // `None`: the rest pose; `Some((clip, time, policy))`: a sample.
    let mut samples: Vec<Option<(usize, f32, TimePolicy)>> = vec![None];
    for c in 0..model.clips.len() {
        samples.extend(sample_times(model, c).into_iter().map(|(t, p)| Some((c, t, p))));
    }
    for sample in samples {
        let at = match sample {
            None => "rest pose".to_owned(),
            Some((c, t, p)) => {
                model.sample_pose(c, t, p, &mut pose).unwrap_or_else(|e| panic!("clip {c} at {t} ({p:?}): {e}"));
                format!("clip {c} at {t} ({p:?})")
            }
        };
        if sample.is_none() {
            pose.clone_from(model.skeleton.rest_pose());
        }
        poses += 1;
        model.world_matrices(&pose, &mut world).unwrap_or_else(|e| panic!("{at}: world matrices: {e}"));
        for (j, m) in world.iter().enumerate() {
            assert!(finite(m.as_slice()), "{at}: non-finite world matrix of node {j} from finite input: {m:?}");
        }
        for (s, info) in model.skins.iter().enumerate() {
            joints.resize(info.skin.len(), Mat4::identity());
            skinning_matrices(&world, &info.skin, &mut joints).unwrap_or_else(|e| panic!("{at}: skin {s}: {e}"));
            for (k, m) in joints.iter().enumerate() {
                assert!(finite(m.as_slice()), "{at}: non-finite joint matrix {k} of skin {s} from finite input: {m:?}");
            }
        }
        for (i, inst) in model.meshes.iter().enumerate() {
            let n = inst.data.vertex_count();
            positions.resize(n, Vec3::zeros());
            let with_normals = !inst.data.normals.is_empty();
            normals.resize(if with_normals { n } else { 0 }, Vec3::zeros());
            for method in SkinMethod::ALL {
                let out_normals = if with_normals { Some(&mut normals[..]) } else { None };
                model
                    .skin_instance(i, &world, method, &mut scratch, &mut positions, out_normals)
                    .unwrap_or_else(|e| panic!("{at}: mesh instance {i} ({method:?}): {e}"));
                if let Some(v) = positions.iter().position(|p| !finite(p.as_slice())) {
                    panic!("{at}: mesh instance {i} ({method:?}): non-finite position of vertex {v} from finite input");
                }
                if let Some(v) = normals.iter().position(|p| !finite(p.as_slice())) {
                    panic!("{at}: mesh instance {i} ({method:?}): non-finite normal of vertex {v} from finite input");
                }
                vertices += n;
            }
        }
    }
    Outcome::Skinned { poses, vertices }
}

fn finite(v: &[f32]) -> bool {
    v.iter().all(|x| x.is_finite())
}
