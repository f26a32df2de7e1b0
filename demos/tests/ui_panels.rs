//! Every demo draws its panel headless (feature `ui`), with validation on: the panel's
//! pixels are present where egui laid the window out, and everything outside the areas egui
//! used (with the windows' shadows) is the same frame as `--no-ui` renders.

use anim_render_vk::RgbaImage;
use anim_render_vk::ui::egui;
use demos::scenes::*;
use demos::ui::widget_rect;
use demos::{CommonArgs, Headless, Scene};

const W: u32 = 640;
const H: u32 = 400;
const FRAMES: u32 = 3;

fn render<S: Scene>(args: &CommonArgs) -> Headless<S> {
    let mut run = Headless::<S>::new(args).unwrap_or_else(|e| panic!("{}: {e}", S::NAME));
    for _ in 0..FRAMES {
        run.frame().unwrap_or_else(|e| panic!("{}: {e}", S::NAME));
    }
    run
}

/// Runs `S` with and without its panel; returns the panel's rectangle.
fn panel_drawn<S: Scene>(extra: &[&str]) -> egui::Rect {
    let with_args = |no_ui: bool| {
        let mut a = CommonArgs::headless_with_ui(FRAMES, W, H);
        a.no_ui = no_ui;
        let mut v: Vec<String> = ["demo", "--headless", "--validation"].map(String::from).to_vec();
        v.extend(
            ["--frames", &FRAMES.to_string(), "--width", &W.to_string(), "--height", &H.to_string()].map(String::from),
        );
        if no_ui {
            v.push("--no-ui".into());
        }
        v.extend(extra.iter().map(|s| s.to_string()));
        let parsed = <CommonArgs as clap::Parser>::parse_from(v);
        assert_eq!(parsed.no_ui, a.no_ui);
        parsed
    };
    let plain = render::<S>(&with_args(true));
    let plain_img = plain.image().unwrap();
    drop(plain.finish().unwrap_or_else(|e| panic!("{} --no-ui: {e}", S::NAME)));
    let run = render::<S>(&with_args(false));
    let img = run.image().unwrap();
    let ui = run.ui.as_ref().expect("panel on by default");
    let panel = widget_rect(&ui.ctx, "panel").unwrap_or_else(|| panic!("{}: no panel", S::NAME));
    let used = ui.ctx.used_rect();
    let shadow = ui.ctx.style().visuals.window_shadow;
    let reach = f32::from(shadow.blur) + f32::from(shadow.spread) + 2.0;
    let offset = egui::vec2(f32::from(shadow.offset[0]), f32::from(shadow.offset[1]));
    let covered = used.expand(reach).union(used.translate(offset).expand(reach));
    let (inside, changed_inside, changed_outside) = compare(&plain_img, &img, panel.shrink(2.0), covered);
    assert!(panel.width() > 100.0 && panel.height() > 40.0, "{}: panel {panel:?}", S::NAME);
    assert!(
        changed_inside * 10 >= inside * 9,
        "{}: {changed_inside} of {inside} panel pixels differ from the scene",
        S::NAME
    );
    assert_eq!(changed_outside, 0, "{}: pixels changed outside egui's areas {covered:?}", S::NAME);
    assert!(run.renderer.ui_triangles() > 100, "{}: {} UI triangles", S::NAME, run.renderer.ui_triangles());
    drop(run.finish().unwrap_or_else(|e| panic!("{} with its panel: {e}", S::NAME)));
    panel
}

/// Pixels inside `panel`, how many of them differ, and how many differ outside `covered`.
fn compare(a: &RgbaImage, b: &RgbaImage, panel: egui::Rect, covered: egui::Rect) -> (usize, usize, usize) {
    let (mut inside, mut changed_inside, mut changed_outside) = (0, 0, 0);
    for y in 0..a.height {
        for x in 0..a.width {
            let p = egui::pos2(x as f32 + 0.5, y as f32 + 0.5);
            let differs = a.pixel(x, y) != b.pixel(x, y);
            if panel.contains(p) {
                inside += 1;
                changed_inside += usize::from(differs);
            } else if !covered.contains(p) {
                changed_outside += usize::from(differs);
            }
        }
    }
    (inside, changed_inside, changed_outside)
}

#[test]
fn viewer_panel() {
    panel_drawn::<viewer::Viewer>(&[]);
}

#[test]
fn ch10_panels() {
    panel_drawn::<ch10_poses::Poses>(&[]);
    panel_drawn::<ch10_cpu_gpu::CpuGpu>(&[]);
}

#[test]
fn ch12_panels() {
    panel_drawn::<ch12_blend::BlendDemo>(&[]);
    panel_drawn::<ch12_crossfade::CrossFadeDemo>(&[]);
    panel_drawn::<ch12_additive::AdditiveDemo>(&[]);
}

#[test]
fn ch13_panels() {
    panel_drawn::<ch13_ccd::CcdDemo>(&[]);
    panel_drawn::<ch13_fabrik::FabrikDemo>(&[]);
    panel_drawn::<ch13_foot_ik::FootIkDemo>(&[]);
}

#[test]
fn ch14_and_ch15_panels() {
    panel_drawn::<ch14_dq_vs_lbs::DqVsLbs>(&[]);
    panel_drawn::<ch15_crowd::CrowdScene>(&["--count", "64"]);
}

#[test]
fn seed_panels() {
    panel_drawn::<seed_bone_texture::BoneTexture>(&[]);
    panel_drawn::<seed_rigid_box::RigidBox>(&[]);
}

#[test]
fn locomotion_and_retarget_panels() {
    panel_drawn::<locomotion::Locomotion>(&[]);
    panel_drawn::<retarget::Retarget>(&[]);
}
