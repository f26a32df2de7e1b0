//! Widgets the demos' panels share (their rows need the `ui` feature): labelled slider rows
//! whose rail alone is tagged (a test maps a value to a pointer position from the rail's
//! rectangle), choice rows, a clip picker, and a handle that drags a point of the 3D view in
//! the plane facing the camera (`view_handle`, with the math in [`pixel_ray`] and
//! [`drag_in_view_plane`]); and [`clear_of_panel`], which moves a scene's framing so that
//! what it shows is not under the panel.
//!
//! Rows go in a two-column `egui::Grid` (label, control): `grid` starts one.

use crate::app::CommonArgs;
#[cfg(feature = "ui")]
use crate::ui::{UiView, tag};
use anim_math::Vec3;
use anim_render_vk::Camera;
#[cfg(feature = "ui")]
use anim_render_vk::ui::egui;
#[cfg(feature = "ui")]
use egui::emath::Numeric;
#[cfg(feature = "ui")]
use std::ops::RangeInclusive;

/// Width the panel covers on the left of the view, points (its default width and margins).
pub const PANEL_WIDTH: f32 = 300.0;

/// Views narrower than this (pixels) are not shifted clear of the panel (see
/// [`clear_of_panel`]).
pub const MIN_SHIFTED_WIDTH: f32 = 2.5 * PANEL_WIDTH;

/// How far to move the centre a scene frames (see [`crate::Scene::focus`]; `radius` as it
/// returns it, seen from `yaw` as [`crate::Scene::view_angles`] gives it) so that what it
/// frames sits in the middle of the view right of the panel: half the panel's width at
/// the framed distance, towards the camera's left (the view then shifts right). The same
/// with `--no-ui`, so the panel never changes what the scene draws (`tests/ui_panels.rs`);
/// zero in a build without the `ui` feature, which has no panel, and in views narrower than
/// [`MIN_SHIFTED_WIDTH`], where the panel covers too much for a shift to help.
pub fn clear_of_panel(args: &CommonArgs, radius: f32, yaw: f32) -> Vec3 {
    if !cfg!(feature = "ui") || (args.width as f32) < MIN_SHIFTED_WIDTH {
        return Vec3::zeros();
    }
    let half_fov = Camera::default().fov_y * 0.5;
    // The distance `Orbit::framing` puts the camera at.
    let distance = radius.max(1e-3) / half_fov.sin() * 1.05;
    let metres_per_pixel = 2.0 * distance * half_fov.tan() / args.height.max(1) as f32;
    Vec3::new(-yaw.cos(), 0.0, yaw.sin()) * (0.5 * PANEL_WIDTH * metres_per_pixel)
}

#[cfg(feature = "ui")]
/// A two-column grid (labels, controls) named `id`, for the rows below.
pub fn grid<R>(ui: &mut egui::Ui, id: &str, rows: impl FnOnce(&mut egui::Ui) -> R) -> R {
    egui::Grid::new(id).num_columns(2).spacing([8.0, 4.0]).show(ui, rows).inner
}

#[cfg(feature = "ui")]
/// A grid row: `label`, then a slider over `range` without its value box (the rail is
/// tagged `name`, see [`crate::ui::tag`]) and the value as `text` gives it. `configure`
/// sets the slider's step, scale, … The value is written only when the user moves the
/// slider (a value off the slider's steps, set elsewhere, stays as it is): returns whether
/// that happened.
pub fn slider<T: Numeric>(
    ui: &mut egui::Ui,
    label: &str,
    name: &str,
    value: &mut T,
    range: RangeInclusive<T>,
    configure: impl FnOnce(egui::Slider<'_>) -> egui::Slider<'_>,
    text: impl FnOnce(T) -> String,
) -> bool {
    ui.label(label);
    let mut v = *value;
    let moved = ui
        .horizontal(|ui| {
            let slider = configure(egui::Slider::new(&mut v, range).show_value(false).smart_aim(false));
            let r = tag(ui.add(slider), name);
            let moved = r.changed() && (r.is_pointer_button_down_on() || r.dragged() || r.has_focus());
            ui.monospace(text(if moved { v } else { *value }));
            moved
        })
        .inner;
    if moved {
        *value = v;
    }
    ui.end_row();
    moved
}

#[cfg(feature = "ui")]
/// A grid row: `label`, then one selectable button per choice (`(value, text, tag)`).
/// Returns whether the value changed.
pub fn choice<T: PartialEq + Copy>(ui: &mut egui::Ui, label: &str, value: &mut T, choices: &[(T, &str, &str)]) -> bool {
    ui.label(label);
    let before = *value;
    ui.horizontal_wrapped(|ui| {
        for &(v, text, name) in choices {
            tag(ui.selectable_value(value, v, text), name);
        }
    });
    ui.end_row();
    *value != before
}

#[cfg(feature = "ui")]
/// A grid row: `label`, then a check box with `text`, tagged `name`. Returns whether it
/// changed.
pub fn check(ui: &mut egui::Ui, label: &str, name: &str, value: &mut bool, text: &str) -> bool {
    ui.label(label);
    let changed = tag(ui.checkbox(value, text), name).changed();
    ui.end_row();
    changed
}

#[cfg(feature = "ui")]
/// A grid row: `label`, then a drop-down of `names` selecting an index, tagged `name`
/// (the closed box). Returns whether the selection changed.
pub fn pick(ui: &mut egui::Ui, label: &str, name: &str, selected: &mut usize, names: &[&str]) -> bool {
    ui.label(label);
    let before = *selected;
    let shown = names.get(*selected).copied().unwrap_or("-");
    let r = egui::ComboBox::from_id_salt(name).selected_text(shown).width(150.0).show_ui(ui, |ui| {
        for (i, n) in names.iter().enumerate() {
            tag(ui.selectable_value(selected, i, *n), &format!("{name}:{i}"));
        }
    });
    tag(r.response, name);
    ui.end_row();
    *selected != before
}

#[cfg(feature = "ui")]
/// A grid row: `label`, then `value` as text.
pub fn value(ui: &mut egui::Ui, label: &str, value: impl Into<egui::WidgetText>) {
    ui.label(label);
    ui.label(value);
    ui.end_row();
}

#[cfg(feature = "ui")]
/// A collapsing section titled `title` (closed unless `open`), its id salted with `id`.
pub fn section<R>(
    ui: &mut egui::Ui,
    title: &str,
    id: &str,
    open: bool,
    body: impl FnOnce(&mut egui::Ui) -> R,
) -> Option<R> {
    egui::CollapsingHeader::new(title).id_salt(id).default_open(open).show(ui, body).body_returned
}

/// The ray through pixel `pixel` (x right, y down, pixel units) of a `size` view of
/// `camera`: the eye and a unit direction.
pub fn pixel_ray(camera: &Camera, pixel: [f32; 2], size: (u32, u32)) -> (Vec3, Vec3) {
    let (w, h) = (size.0.max(1) as f32, size.1.max(1) as f32);
    let forward = (camera.target - camera.eye).normalize();
    let right = forward.cross(&camera.up).normalize();
    let up = right.cross(&forward);
    let tan = (camera.fov_y * 0.5).tan();
    let (nx, ny) = (pixel[0] / w * 2.0 - 1.0, pixel[1] / h * 2.0 - 1.0);
    // Framebuffer y points down: a pixel below the centre looks below the view axis.
    let dir = forward + right * (nx * tan * w / h) - up * (ny * tan);
    (camera.eye, dir.normalize())
}

/// Where the ray through `pixel` meets the plane through `point` that faces the camera
/// (its normal is the view direction); `None` when that point is behind the eye.
pub fn drag_in_view_plane(camera: &Camera, pixel: [f32; 2], size: (u32, u32), point: &Vec3) -> Option<Vec3> {
    let (eye, dir) = pixel_ray(camera, pixel, size);
    let normal = (camera.target - camera.eye).normalize();
    let denom = dir.dot(&normal);
    let t = (point - eye).dot(&normal) / denom;
    (denom > 1e-6 && t.is_finite() && t > 0.0).then(|| eye + dir * t)
}

#[cfg(feature = "ui")]
/// Radius of a [`view_handle`], points.
pub const HANDLE_RADIUS: f32 = 14.0;

#[cfg(feature = "ui")]
/// A round handle over the projection of `point` in the view: dragging it (the pointer
/// pressed near the point, not over a window above it) moves the point in the plane
/// through it that faces the camera, under the pointer. The handle is an egui area tagged
/// `name`, so egui (not the camera) takes the pointer. Returns the new point while
/// dragged, `None` otherwise (also when the point is behind the camera).
pub fn view_handle(ctx: &egui::Context, view: &UiView<'_>, point: &Vec3, name: &str) -> Option<Vec3> {
    let camera = view.orbit.camera();
    let ppp = ctx.pixels_per_point();
    let at = camera.project(point, view.size.0, view.size.1)?;
    let centre = egui::pos2(at[0] / ppp, at[1] / ppp);
    let r = HANDLE_RADIUS;
    let area = egui::Area::new(egui::Id::new(("anim-demo-view-handle", name)))
        .order(egui::Order::Middle)
        .fixed_pos(centre - egui::vec2(r, r))
        .constrain(false)
        .show(ctx, |ui| {
            let (rect, response) = ui.allocate_exact_size(egui::vec2(2.0 * r, 2.0 * r), egui::Sense::drag());
            if response.hovered() || response.dragged() {
                let stroke = egui::Stroke::new(2.0, egui::Color32::from_rgb(255, 230, 40));
                ui.painter().circle_stroke(rect.center(), r - 2.0, stroke);
            }
            response
        });
    let response = tag(area.inner, name);
    if !response.dragged() {
        return None;
    }
    let pos = response.interact_pointer_pos()?;
    drag_in_view_plane(&camera, [pos.x * ppp, pos.y * ppp], view.size, point)
}

#[cfg(feature = "ui")]
/// Grid rows for a character playing one clip: the clip (tagged `clip`; `none` plays the
/// rest pose), its time as a slider over the clip's length (tagged `time`: moving it
/// pauses) and play / pause (tagged `play`). Changing the clip starts it from 0.
pub fn clip_and_time(
    ui: &mut egui::Ui,
    character: &crate::Character,
    clip: &mut Option<usize>,
    time: &mut f32,
    paused: &mut bool,
) {
    let mut names: Vec<&str> = vec!["none (rest pose)"];
    names.extend(character.clips.iter().map(|c| c.name()));
    let mut selected = clip.map_or(0, |c| c + 1);
    if pick(ui, "clip", "clip", &mut selected, &names) {
        *clip = selected.checked_sub(1);
        *time = 0.0;
    }
    let duration = clip.and_then(|c| character.clips.get(c)).map_or(0.0, |c| c.duration());
    if duration > 0.0 {
        let mut t = time.rem_euclid(duration);
        if slider(ui, "time", "time", &mut t, 0.0..=duration, |s| s, |t| format!("{t:.2} / {duration:.2} s")) {
            *time = t;
            *paused = true;
        }
    }
    let mut playing = !*paused;
    if check(ui, "play", "play", &mut playing, "(space pauses)") {
        *paused = !playing;
    }
}
