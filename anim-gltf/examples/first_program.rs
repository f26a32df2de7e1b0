// The README's first program, verbatim (a test checks that the two agree, and runs it).
// `cargo run -p anim-gltf --example first_program` from the repository's root.
use anim_gltf::anim_core::skin::skinning;
use anim_gltf::anim_math::{Mat4, Vec3};
use anim_gltf::prelude::*;
use anim_ik::TwoBoneIk;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let fox = anim_gltf::load("../shared/assets/Fox/Fox.glb")?;

    // Walk for a second, then fade to Run over a quarter second, at 60 frames a second.
    // The clips are shared with the model (`Arc`), not copied.
    let mut fader = CrossFadeController::new(&fox.skeleton, 2);
    fader.play(fox.clip("Walk")?, TimePolicy::Wrap)?;
    for frame in 0..90 {
        if frame == 60 {
            fader.fade_to(fox.clip("Run")?, 0.25, TimePolicy::Wrap)?;
        }
        fader.update(1.0 / 60.0)?;
    }
    let mut pose = fader.pose().clone();

    // Two-bone IK: move the left hind foot 20 units down and 10 forward.
    let joint = |name: &str| fox.skeleton.find(name).ok_or(format!("Fox has no joint {name}"));
    let leg = TwoBoneIk::new(
        &fox.skeleton,
        joint("b_LeftLeg01_015")?,
        joint("b_LeftLeg02_016")?,
        joint("b_LeftFoot01_017")?,
    )?;
    let mut model = vec![Mat4::identity(); fox.skeleton.len()];
    pose.local_to_model(&fox.skeleton, &mut model)?;
    let target = model[leg.end].column(3).xyz() + Vec3::new(0.0, -20.0, 10.0);
    leg.solve(&fox.skeleton, &mut pose, &Transform::IDENTITY, &target, None)?;
    pose.local_to_model(&fox.skeleton, &mut model)?;
    assert!((model[leg.end].column(3).xyz() - target).norm() < 0.01, "the foot reached its target");

    // Skin on the CPU. Fox has no normals: compute them once from its triangles.
    let mesh = &fox.meshes[0];
    let skin = &fox.skins[mesh.skin.ok_or("Fox's mesh is skinned")?].skin;
    let influences = mesh.data.influences.as_ref().ok_or("Fox's mesh has weights")?;
    let bind_normals = mesh.data.smooth_normals();
    let mut palette = Palette::new(SkinMethod::Lbs);
    palette.update(&model, skin)?;
    let n = mesh.data.vertex_count();
    let (mut positions, mut normals) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
    let input = SkinningInput { influences, positions: &mesh.data.positions, normals: Some(&bind_normals) };
    let mut output = SkinningOutput { positions: &mut positions, normals: Some(&mut normals) };
    skinning::skin(&input, &palette, NormalMode::Direct, &mut output)?;
    assert!(normals.iter().all(|n| (n.norm() - 1.0).abs() < 1e-4), "skinned normals are unit");
    println!("Fox: walked, ran, planted a foot and skinned {n} vertices");
    Ok(())
}
