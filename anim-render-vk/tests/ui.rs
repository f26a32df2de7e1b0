//! The UI pass (feature `ui`): an egui window drawn over the scene headless, with validation
//! on. The panel's pixels are where egui's layout put the window and nowhere else, in the
//! window's fill colour; clearing the UI gives back the scene's exact image.

#![cfg(feature = "ui")]

mod common;

use anim_render_vk::ui::egui;
use anim_render_vk::{FrameData, OFFSCREEN_FORMAT, Offscreen, Renderer, RgbaImage, lines};

const W: u32 = 480;
const H: u32 = 320;

fn scene() -> FrameData {
    let mut frame = FrameData::default();
    lines::grid(&mut frame, 6, 0.5, 0.0);
    frame
}

/// One egui frame with a window at (40, 30) holding a label and a slider; returns the output
/// and the window's rectangle in pixels (1 point = 1 pixel here).
fn panel(gui: &egui::Context) -> (egui::FullOutput, egui::Rect) {
    let input = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(W as f32, H as f32))),
        ..Default::default()
    };
    let mut rect = egui::Rect::NOTHING;
    let output = gui.run(input, |ctx| {
        let mut value = 0.25f32;
        let shown = egui::Window::new("Panel").fixed_pos(egui::pos2(40.0, 30.0)).show(ctx, |ui| {
            ui.label("blend weight");
            ui.add(egui::Slider::new(&mut value, 0.0..=1.0));
        });
        rect = shown.expect("window is open").response.rect;
    });
    (output, rect)
}

fn differs(a: &RgbaImage, b: &RgbaImage, x: u32, y: u32) -> bool {
    a.pixel(x, y) != b.pixel(x, y)
}

#[test]
fn the_panel_is_drawn_where_egui_laid_it_out_and_only_there() {
    let ctx = common::context();
    let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let mut target = Offscreen::new(&ctx, W, H).unwrap();
    let frame = scene();
    target.render(&mut renderer, &frame).unwrap();
    let plain = target.image().unwrap();
    assert_eq!(renderer.ui_triangles(), 0);

    let gui = egui::Context::default();
    // No fade-in: the window is drawn at full opacity from its first frame.
    gui.all_styles_mut(|s| s.animation_time = 0.0);
    // egui lays out a window over two frames (it measures, then shows): run it twice. Every
    // output goes to the renderer: the first one carries the font atlas.
    let (first, _) = panel(&gui);
    renderer.set_ui(&gui, first).unwrap();
    let (output, rect) = panel(&gui);
    assert!(rect.width() > 50.0 && rect.height() > 30.0, "window rect {rect:?}");
    renderer.set_ui(&gui, output).unwrap();
    assert!(renderer.ui_triangles() > 10, "{} triangles", renderer.ui_triangles());
    target.render(&mut renderer, &frame).unwrap();
    let with_ui = target.image().unwrap();
    common::assert_clean(&ctx);

    // Inside the window (away from its border and text): egui's window fill.
    let fill = gui.style().visuals.window_fill;
    let (cx, cy) = (rect.left() as u32 + 5, rect.bottom() as u32 - 4);
    let p = with_ui.pixel(cx, cy);
    for k in 0..3 {
        assert!(p[k].abs_diff(fill[k]) <= 2, "pixel ({cx}, {cy}) = {p:?}, window fill {fill:?}");
    }
    // Outside the window and its shadow (offset and blurred as egui's style says): the
    // scene, byte for byte.
    let shadow = gui.style().visuals.window_shadow;
    let reach = f32::from(shadow.blur) + f32::from(shadow.spread) + 2.0;
    let offset = egui::vec2(f32::from(shadow.offset[0]), f32::from(shadow.offset[1]));
    let covered = rect.expand(reach).union(rect.translate(offset).expand(reach));
    let mut changed_outside = 0;
    let mut changed_inside = 0;
    for y in 0..H {
        for x in 0..W {
            let pt = egui::pos2(x as f32 + 0.5, y as f32 + 0.5);
            if covered.contains(pt) {
                if rect.shrink(2.0).contains(pt) && differs(&plain, &with_ui, x, y) {
                    changed_inside += 1;
                }
            } else if differs(&plain, &with_ui, x, y) {
                changed_outside += 1;
            }
        }
    }
    assert_eq!(changed_outside, 0, "pixels changed outside the window {rect:?}");
    let inside = (rect.shrink(2.0).area()) as usize;
    assert!(changed_inside * 10 > inside * 9, "{changed_inside} of {inside} window pixels changed");

    // The pass is timed like the others.
    let stats = renderer.frame_stats().expect("stats after an offscreen render");
    assert!(stats.passes.iter().any(|p| p.name == "ui"), "passes: {:?}", stats.passes);

    // The output stays until replaced or cleared; cleared, the scene comes back exactly.
    target.render(&mut renderer, &frame).unwrap();
    assert_eq!(target.image().unwrap(), with_ui);
    renderer.clear_ui();
    target.render(&mut renderer, &frame).unwrap();
    assert_eq!(target.image().unwrap(), plain);
    common::assert_clean(&ctx);
}
