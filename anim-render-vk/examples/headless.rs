// The default character, walking, skinned on the GPU (vertex shader, dual quaternions)
// and rendered without a window into a PNG, with the Vulkan validation layer on.
// `cargo run -p anim-render-vk --example headless` writes `anim-headless.png` in the
// system's temporary folder.
use anim_core::clip::TimePolicy;
use anim_core::skin::{Palette, Skin, SkinMethod};
use anim_math::{Mat4, Vec3};
use anim_render_vk::prelude::*;
use anim_render_vk::{Coloring, OFFSCREEN_FORMAT};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::temp_dir().join("anim-headless.png");
    let m = anim_mannequin::build();
    let context = Context::new(&ContextDesc::headless(true))?;
    let mut renderer = Renderer::new(&context, OFFSCREEN_FORMAT)?;
    let mut target = Offscreen::new(&context, 480, 360)?;
    let mesh = renderer.add_mesh(&m.mesh, &Coloring::Uniform([0.8, 0.7, 0.6]))?;

    // Pose the walk at 0.3 s and build its dual-quaternion palette on the CPU.
    let walk = m.clip("walk").ok_or("the mannequin walks")?;
    let mut pose = m.skeleton.rest_pose().clone();
    walk.sample(0.3, TimePolicy::Wrap, &mut pose)?;
    let mut model = vec![Mat4::identity(); m.skeleton.len()];
    pose.local_to_model(&m.skeleton, &mut model)?;
    let mut palette = Palette::new(SkinMethod::Dq);
    palette.update(&model, &Skin::from_skeleton(&m.skeleton))?;

    let camera = Camera { eye: Vec3::new(1.5, 1.2, 3.0), target: Vec3::new(0.0, 0.9, 0.0), ..Camera::default() };
    let mut frame = FrameData { camera, ..FrameData::default() };
    frame.add_skinned(mesh, Mat4::identity(), SkinPath::VertexShader, &palette)?;
    target.render(&mut renderer, &frame)?;
    let image = target.image()?;
    image.save_png(&out)?;
    assert_eq!(context.validation_count(), 0, "{:?}", context.validation_messages());
    println!("wrote {}", out.display());
    Ok(())
}
