// The README's runtime-path program, verbatim (a test checks that the two agree, and runs
// it). `cargo run -p anim-gltf --example runtime_path` from the repository's root.
use anim_gltf::anim_core::clip::SoaSampler;
use anim_gltf::anim_core::offline::JointRadii;
use anim_gltf::anim_core::pose::hierarchy::local_to_model;
use anim_gltf::anim_core::skin::skinning;
use anim_gltf::anim_math::{Mat4, Vec3};
use anim_gltf::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let man = anim_gltf::load("../shared/assets/CesiumMan/CesiumMan.glb")?;
    let mesh = &man.meshes[0];
    let influences = mesh.data.influences.as_ref().ok_or("CesiumMan's mesh has weights")?;

    // Once: the skeleton trimmed to what the skin needs (its own skins and clips come with
    // it), and the clip compiled to 1 mm at the skin.
    let rt = man.runtime_skeleton()?;
    let skin = &rt.skins[mesh.skin.ok_or("CesiumMan's mesh is skinned")?];
    let radii = JointRadii::from_skin(&rt.skeleton, skin, &[&mesh.data])?;
    let walk = RuntimeClip::compile(&rt.clips[0], &rt.skeleton, &radii, 0.001)?;
    let mut context = walk.new_context();
    let mut pose = SoaPose::from_pose(rt.skeleton.rest_pose());
    let mut model = vec![Mat4::identity(); rt.skeleton.len()];
    let mut palette = Palette::new(SkinMethod::Dq);
    let n = mesh.data.vertex_count();
    let (mut positions, mut normals) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);

    // Every frame: a running clock, wrapped into the looping clip by the time policy.
    for frame in 0..300 {
        let clock = frame as f32 / 60.0;
        walk.sample_soa(&mut context, clock, TimePolicy::Wrap, &mut pose)?;
        local_to_model(&rt.skeleton, &pose, &mut model)?;
        palette.update(&model, skin)?;
        let input = SkinningInput { influences, positions: &mesh.data.positions, normals: Some(&mesh.data.normals) };
        let mut output = SkinningOutput { positions: &mut positions, normals: Some(&mut normals) };
        skinning::skin(&input, &palette, NormalMode::Direct, &mut output)?;
    }

    // The model matrices of the full skeleton do not fit the trimmed skeleton's skin: an
    // error, not a silently wrong mesh.
    let mut full = vec![Mat4::identity(); man.skeleton.len()];
    man.skeleton.rest_pose().local_to_model(&man.skeleton, &mut full)?;
    assert!(palette.update(&full, skin).is_err());
    println!("CesiumMan: {n} vertices skinned with dual quaternions for 5 s of a looping walk");
    Ok(())
}
