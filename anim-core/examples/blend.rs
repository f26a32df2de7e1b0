// Blending on the default character: walk and run mixed half and half, a lean added on
// top, the result skinned on the CPU. `cargo run -p anim-core --example blend`.
use anim_core::blend::additive::{add, make_additive_base};
use anim_core::blend::blend;
use anim_core::prelude::*;
use anim_core::skin::skinning;
use anim_math::{Mat4, Vec3};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let m = anim_mannequin::build();
    let (skeleton, mesh) = (&m.skeleton, &m.mesh);
    let clip = |name: &str| m.clip(name).ok_or(format!("the mannequin has no clip {name}"));
    let (walk, run, lean) = (clip("walk")?, clip("run")?, clip("lean_left")?);
    let lean_base = make_additive_base(skeleton, lean)?;

    let (mut a, mut b, mut mixed) = (skeleton.rest_pose().clone(), skeleton.rest_pose().clone(), Pose::default());
    let mut leaning = skeleton.rest_pose().clone();
    let mut lean_pose = skeleton.rest_pose().clone();
    let skin = Skin::from_skeleton(skeleton);
    let mut model = vec![Mat4::identity(); skeleton.len()];
    let mut palette = Palette::new(SkinMethod::Dq);
    let n = mesh.vertex_count();
    let mut positions = vec![Vec3::zeros(); n];
    for frame in 0..60 {
        let t = frame as f32 / 60.0;
        walk.sample(t, TimePolicy::Wrap, &mut a)?;
        // Run is faster: play it at the walk's phase, so the feet agree.
        run.sample(t / walk.duration() * run.duration(), TimePolicy::Wrap, &mut b)?;
        mixed.clone_from(&a);
        blend(&mut mixed, &a, &b, 0.5, None, skeleton)?;
        lean.sample(lean.duration() * 0.5, TimePolicy::Clamp, &mut lean_pose)?;
        add(&mut leaning, &mixed, &lean_pose, &lean_base, None, skeleton)?;
        leaning.local_to_model(skeleton, &mut model)?;
        palette.update(&model, &skin)?;
        let influences = mesh.influences.as_ref().ok_or("the mannequin is skinned")?;
        let input = SkinningInput { influences, positions: &mesh.positions, normals: None };
        skinning::skin(
            &input,
            &palette,
            NormalMode::Direct,
            &mut SkinningOutput { positions: &mut positions, normals: None },
        )?;
    }
    let top = positions.iter().map(|p| p.y).fold(f32::MIN, f32::max);
    println!("a leaning jog: {n} vertices, head top at {top:.2} m");
    Ok(())
}
