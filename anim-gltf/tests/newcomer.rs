//! What a newcomer met on the way to the README's first program, each now a typed answer
//! (issue "The API a newcomer meets"): a runtime clip plays a running clock, skeletons do
//! not mix silently, clips are shared and found by name with a helpful error, a mesh
//! without normals points at `Mesh::smooth_normals`, errors stay typed across crates.

use anim_gltf::GltfError;
use anim_gltf::anim_core::clip::{ClipError, SoaSampler, TimePolicy};
use anim_gltf::anim_core::offline::JointRadii;
use anim_gltf::anim_core::pose::hierarchy::local_to_model;
use anim_gltf::anim_core::pose::{PoseError, SoaPose};
use anim_gltf::anim_core::skin::skinning::{self, NormalMode, SkinningInput, SkinningOutput};
use anim_gltf::anim_core::skin::{Palette, SkinMethod, SkinningError};
use anim_gltf::anim_math::{Mat4, Vec3};
use anim_gltf::{Model, SkinScratch};
use anim_testkit::assets::load as asset;
use std::sync::Arc;

/// Skinned positions of mesh 0 for `model` matrices of the runtime skeleton.
fn skin_runtime(model: &Model, rt: &anim_gltf::RuntimeSkeleton, world: &[Mat4]) -> Vec<Vec3> {
    let mesh = &model.meshes[0];
    let skin = &rt.skins[mesh.skin.unwrap()];
    let mut palette = Palette::new(SkinMethod::Lbs);
    palette.update(world, skin).unwrap();
    let mut out = vec![Vec3::zeros(); mesh.data.vertex_count()];
    let input = SkinningInput {
        influences: mesh.data.influences.as_ref().unwrap(),
        positions: &mesh.data.positions,
        normals: None,
    };
    skinning::skin(&input, &palette, NormalMode::Direct, &mut SkinningOutput { positions: &mut out, normals: None })
        .unwrap();
    out
}

/// Fox's Walk lasts 0.708 s. A runtime clip given a running clock with `Wrap` plays the
/// loop (before, `sample_soa` clamped silently and the walk froze at its last frame); with
/// `Clamp` it holds the end. Both agree with exact sampling under the same policy within
/// the compile tolerance at the skin.
#[test]
fn a_runtime_clip_plays_a_running_clock_by_its_time_policy() {
    let fox = asset("Fox/Fox.glb");
    let rt = fox.runtime_skeleton().unwrap();
    let walk = fox.clip_index("Walk").unwrap();
    let mesh = &fox.meshes[0];
    let radii = JointRadii::from_skin(&rt.skeleton, &rt.skins[mesh.skin.unwrap()], &[&mesh.data]).unwrap();
    let tolerance = 0.001;
    let runtime =
        anim_gltf::anim_core::clip::RuntimeClip::compile(&rt.clips[walk], &rt.skeleton, &radii, tolerance).unwrap();
    let duration = runtime.duration();
    assert!((duration - 0.708).abs() < 1e-3);
    let mut context = runtime.new_context();
    let mut soa = SoaPose::from_pose(rt.skeleton.rest_pose());
    let mut world = vec![Mat4::identity(); rt.skeleton.len()];
    for (clock, policy) in
        [(1.0, TimePolicy::Wrap), (2.9, TimePolicy::Wrap), (-5.0, TimePolicy::Wrap), (1.0, TimePolicy::Clamp)]
    {
        let t = runtime.sample_soa(&mut context, clock, policy, &mut soa).unwrap();
        assert_eq!(t, policy.apply(clock, duration), "{clock} {policy:?}");
        local_to_model(&rt.skeleton, &soa, &mut world).unwrap();
        let got = skin_runtime(&fox, &rt, &world);
        let mut pose = rt.skeleton.rest_pose().clone();
        rt.clips[walk].sample(clock, policy, &mut pose).unwrap();
        pose.local_to_model(&rt.skeleton, &mut world).unwrap();
        let exact = skin_runtime(&fox, &rt, &world);
        let worst = got.iter().zip(&exact).map(|(a, b)| (a - b).norm()).fold(0.0, f32::max);
        assert!(worst <= tolerance, "{clock} {policy:?}: {worst} off exact sampling");
    }
    // The wrapped clock is not the clamped one: at 1 s the loop is at 0.29 s, not the end.
    let wrapped = runtime.sample_soa(&mut context, 1.0, TimePolicy::Wrap, &mut soa).unwrap();
    assert!((wrapped - (1.0 - duration)).abs() < 1e-5);
    assert!(matches!(
        runtime.sample_soa(&mut context, f32::NAN, TimePolicy::Wrap, &mut soa),
        Err(ClipError::NonFiniteTime(_))
    ));
}

/// CesiumMan's trimmed runtime skeleton has fewer joints than the file's. Its skin with
/// the full skeleton's model matrices was accepted and gave a mesh 0.77 m off; a runtime
/// clip or a pose of one skeleton used with the other is refused too.
#[test]
fn cesium_man_skeleton_mixups_are_errors() {
    let man = asset("CesiumMan/CesiumMan.glb");
    let rt = man.runtime_skeleton().unwrap();
    assert_ne!(rt.skeleton.len(), man.skeleton.len());
    assert_ne!(rt.skeleton.id(), man.skeleton.id());
    let mut full = vec![Mat4::identity(); man.skeleton.len()];
    man.skeleton.rest_pose().local_to_model(&man.skeleton, &mut full).unwrap();
    let skin = &rt.skins[0];
    for method in [SkinMethod::Lbs, SkinMethod::Dq] {
        let mut palette = Palette::new(method);
        assert_eq!(
            palette.update(&full, skin),
            Err(PoseError::SkeletonMismatch { what: "model matrices", joints: man.skeleton.len() })
        );
    }
    // The right pair works.
    let mut trimmed = vec![Mat4::identity(); rt.skeleton.len()];
    rt.skeleton.rest_pose().local_to_model(&rt.skeleton, &mut trimmed).unwrap();
    Palette::new(SkinMethod::Lbs).update(&trimmed, skin).unwrap();
    // A pose of the full skeleton on the trimmed one, and the full skin with the trimmed
    // skeleton, are refused.
    assert!(man.skeleton.rest_pose().local_to_model(&rt.skeleton, &mut trimmed).is_err());
    let mesh = &man.meshes[0];
    let full_skin = &man.skins[mesh.skin.unwrap()].skin;
    assert!(matches!(
        JointRadii::from_skin(&rt.skeleton, full_skin, &[&mesh.data]),
        Err(anim_gltf::anim_core::offline::RuntimeClipError::Skeleton(PoseError::SkeletonMismatch {
            what: "skin",
            ..
        }))
    ));
    // A runtime clip compiled for the full skeleton does not sample into a pose marked
    // for another skeleton of the same size.
    let radii = JointRadii::from_skin(&man.skeleton, full_skin, &[&mesh.data]).unwrap();
    let clip = anim_gltf::anim_core::clip::RuntimeClip::compile(&man.clips[0], &man.skeleton, &radii, 0.001).unwrap();
    let other = rt.skeleton.rest_pose().clone();
    let mut stranger =
        anim_gltf::anim_core::pose::Pose::identity(man.skeleton.len()).with_skeleton_id(rt.skeleton.id());
    assert!(other.skeleton_id() == Some(rt.skeleton.id()));
    assert!(matches!(
        clip.sample_pose(&mut clip.new_context(), 0.5, TimePolicy::Wrap, &mut stranger),
        Err(ClipError::Skeleton { source: PoseError::SkeletonMismatch { what: "pose", .. }, .. })
    ));
}

/// Clips come out of the model shared (the controller takes them without a copy), a name
/// lookup that fails lists the names and suggests the one that differs in case, and the
/// model's sampling errors stay typed.
#[test]
fn clips_are_shared_found_by_name_and_errors_stay_typed() {
    let fox = asset("Fox/Fox.glb");
    let walk = fox.clip("Walk").unwrap();
    assert!(Arc::ptr_eq(&walk, &fox.clips[fox.clip_index("Walk").unwrap()]));
    match fox.clip_index("walk") {
        Err(GltfError::NoClip { name, available, hint }) => {
            assert_eq!(name, "walk");
            assert_eq!(available, ["Survey", "Walk", "Run"]);
            assert_eq!(hint, ", did you mean \"Walk\"?");
        }
        other => panic!("{other:?}"),
    }
    let message = fox.clip("Trot").unwrap_err().to_string();
    assert!(
        message.contains("\"Trot\"") && message.contains("Survey") && !message.contains("did you mean"),
        "{message}"
    );
    let mut pose = fox.skeleton.rest_pose().clone();
    assert!(matches!(
        fox.sample_pose(0, f32::NAN, TimePolicy::Wrap, &mut pose),
        Err(GltfError::Clip(ClipError::NonFiniteTime(_)))
    ));
    let mut short = vec![Mat4::identity(); 3];
    assert!(matches!(fox.world_matrices(&pose, &mut short), Err(GltfError::Pose(PoseError::WrongLength(_)))));
}

/// Fox has no normals. Asking for skinned normals said "input normals has 0 entries,
/// expected 1728"; it now says the mesh has none and names the fix, on the CPU loops and
/// through the model's skinning alike (which skins positions only for such a mesh).
#[test]
fn a_mesh_without_normals_points_to_smooth_normals() {
    let fox = asset("Fox/Fox.glb");
    let mesh = &fox.meshes[0];
    assert!(mesh.data.normals.is_empty());
    let n = mesh.data.vertex_count();
    let mut world = vec![Mat4::identity(); fox.skeleton.len()];
    fox.skeleton.rest_pose().local_to_model(&fox.skeleton, &mut world).unwrap();
    let mut palette = Palette::new(SkinMethod::Lbs);
    palette.update(&world, &fox.skins[0].skin).unwrap();
    let (mut p, mut nrm) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
    let influences = mesh.data.influences.as_ref().unwrap();
    let input = SkinningInput { influences, positions: &mesh.data.positions, normals: Some(&mesh.data.normals) };
    let err = skinning::skin(
        &input,
        &palette,
        NormalMode::Direct,
        &mut SkinningOutput { positions: &mut p, normals: Some(&mut nrm) },
    )
    .unwrap_err();
    assert_eq!(err, SkinningError::NoNormals { vertices: n });
    assert!(err.to_string().contains("Mesh::smooth_normals"), "{err}");
    // With the normals computed, the same call works.
    let smooth = mesh.data.smooth_normals();
    let input = SkinningInput { influences, positions: &mesh.data.positions, normals: Some(&smooth) };
    skinning::skin(
        &input,
        &palette,
        NormalMode::Direct,
        &mut SkinningOutput { positions: &mut p, normals: Some(&mut nrm) },
    )
    .unwrap();
    // The model's own skinning equals the program's path on positions.
    let mut q = vec![Vec3::zeros(); n];
    fox.skin_instance(0, &world, SkinMethod::Lbs, &mut SkinScratch::new(), &mut q, None).unwrap();
    assert_eq!(p, q);
}
