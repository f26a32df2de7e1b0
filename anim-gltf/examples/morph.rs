// The README's morph-target program, verbatim (a test checks that the two agree, and runs
// it). `cargo run -p anim-gltf --example morph`.
use anim_gltf::anim_math::{Mat4, Vec3};
use anim_gltf::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The default character breathes in its idle (targets "breathe" and "brow_raise").
    let model = anim_gltf::mannequin_model();
    let idle = model.clip_index("idle")?;
    let instance = 0;
    let targets = model.meshes[instance].morph.as_ref().ok_or("the mannequin has morph targets")?;
    let n = model.meshes[instance].data.vertex_count();
    let mut weights = vec![0.0; targets.target_count()];
    let mut pose = model.skeleton.rest_pose().clone();
    let mut world = vec![Mat4::identity(); model.skeleton.len()];
    let (mut positions, mut normals) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
    let mut scratch = SkinScratch::new();
    for frame in 0..120 {
        let time = frame as f32 / 60.0;
        model.sample_weights(idle, instance, time, TimePolicy::Wrap, &mut weights)?; // clip → weights
        model.sample_pose(idle, time, TimePolicy::Wrap, &mut pose)?; // clip → pose
        model.world_matrices(&pose, &mut world)?;
        // Morph first (base + Σ wᵢ·Δᵢ), then skin, into caller-owned buffers.
        model.skin_instance_weighted(
            instance,
            &world,
            Some(&weights),
            SkinMethod::Lbs,
            &mut scratch,
            &mut positions,
            Some(&mut normals),
        )?;
    }
    println!("after 2 s of idle: breathe {:.2}, brow_raise {:.2}", weights[0], weights[1]);
    Ok(())
}
