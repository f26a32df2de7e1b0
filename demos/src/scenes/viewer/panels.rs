//! The viewer's panel and windows (feature `ui`).
//!
//! The panel (the framework's window, on the left) opens files, lists the clips and holds
//! the display settings and the morph-target sliders; the timeline runs along the bottom;
//! the model's facts, the joint tree and the frame timings stand in a column on the
//! right ([`Layout`]). Widgets tests drive are tagged (see [`crate::ui::tag`]):
//! `file`, `open`, `load-error`, `graph-error`, `clip:rest`, `clip:<index>`; while a graph
//! plays, `graph-stop`, `graph-restart`, `graph-floor` and `param:<name>` (a parameter's
//! slider rail, check box, drag box or trigger button) in place of the clips; `grid`, `normals`, `bounds`,
//! `root-motion`, `morph:<part>:<target>` (the slider), `morph-reset:<part>:<target>`,
//! `morph-reset-all`, `play`, `step-back`, `step-forward`, `speed`, `loop:<label>`,
//! `timeline` (the scrub bar: x maps linearly from its left edge, time 0, to its right
//! edge, the clip's duration), `joint:<index>`, `joint-weights`; and the windows
//! `timeline-window`, `model-window`, `joints-window`, `timings-window`.

use super::{ColorView, HISTORY_SECONDS, Looping, Viewer};
use crate::ui::{UiView, tag, timings_plot};
use anim_math::{Quat, Transform, Vec3};
use anim_render_vk::ui::egui;
use egui::{Color32, Pos2, Rect, RichText, Sense, Stroke, vec2};

/// Margin between the windows and the screen's edges, points.
const MARGIN: f32 = 8.0;
/// Gap between stacked windows, points.
const GAP: f32 = 6.0;
/// What a window adds around its content (title bar, frame margins), points.
const CHROME: Vec2Pts = Vec2Pts { w: 14.0, h: 48.0 };
/// Height of the timeline window (it has no title bar), points.
const TIMELINE_HEIGHT: f32 = 78.0;
/// Height of the timeline's scrub bar, points.
const BAR_HEIGHT: f32 = 34.0;
/// Height of the timeline's content: a row of controls and the scrub bar, points.
const TIMELINE_CONTENT: f32 = 60.0;
/// Width of the panel's file field, points (a fixed width: the panel sizes itself to its
/// content).
const FIELD_WIDTH: f32 = 196.0;

struct Vec2Pts {
    w: f32,
    h: f32,
}

/// Where the viewer's windows start on a screen of a given size (points): the framework's
/// panel keeps the left edge, the timeline spans the bottom, and the model facts, joint
/// tree and timings share a column on the right, so the character in the middle stays in
/// view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    /// The timeline (outer rectangle).
    pub timeline: Rect,
    /// The "Model" window.
    pub model: Rect,
    /// The "Joints" window.
    pub joints: Rect,
    /// The "Timings" window.
    pub timings: Rect,
}

impl Layout {
    /// The layout for a `width × height` screen.
    pub fn new(width: f32, height: f32) -> Self {
        let timeline = Rect::from_min_max(
            egui::pos2(MARGIN, height - MARGIN - TIMELINE_HEIGHT),
            egui::pos2(width - MARGIN, height - MARGIN),
        );
        let column_width = (width * 0.26).clamp(230.0, 330.0);
        let x = width - MARGIN - column_width;
        let top = MARGIN;
        let avail = (timeline.top() - GAP - top - 2.0 * GAP).max(3.0 * CHROME.h);
        let mut y = top;
        let mut next = |share: f32| {
            let r = Rect::from_min_size(egui::pos2(x, y), vec2(column_width, avail * share));
            y += avail * share + GAP;
            r
        };
        let (model, joints, timings) = (next(0.28), next(0.42), next(0.30));
        Self { timeline, model, joints, timings }
    }
}

/// An egui window starting at `outer` (its content sized to fit inside), scrolling
/// vertically.
fn window(title: &str, id: &str, outer: Rect) -> egui::Window<'static> {
    egui::Window::new(title.to_owned())
        .id(egui::Id::new(id))
        .default_pos(outer.min)
        .default_size(vec2(outer.width() - CHROME.w, outer.height() - CHROME.h))
        .vscroll(true)
}

/// The viewer's part of the framework's panel: file, clips, display, morph targets.
pub(super) fn panel(v: &mut Viewer, ui: &mut egui::Ui, view: &UiView<'_>) {
    file_row(v, ui);
    ui.separator();
    if v.graph.is_some() {
        let height = view.size.1 as f32 / ui.ctx().pixels_per_point() - BESIDE_GRAPH;
        graph_section(v, ui, height.clamp(GRAPH_HEIGHT.0, GRAPH_HEIGHT.1));
    } else {
        clips(v, ui);
    }
    ui.separator();
    display(v, ui);
    morph_sliders(v, ui);
}

fn file_row(v: &mut Viewer, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        let field = egui::TextEdit::singleline(&mut v.file_field)
            .hint_text("a .gltf / .glb, a .json graph, or drop one")
            .desired_width(FIELD_WIDTH);
        let field = tag(ui.add(field), "file");
        let entered = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if (tag(ui.button("Open"), "open").clicked() || entered) && !v.file_field.trim().is_empty() {
            let path = v.file_field.trim().to_owned();
            v.open_any(path);
        }
    });
    for (error, name) in [(&v.load_error, "load-error"), (&v.graph_error, "graph-error")] {
        if let Some(e) = error {
            let text = RichText::new(e).color(ui.visuals().error_fg_color);
            tag(ui.add(egui::Label::new(text).wrap()), name);
        }
    }
}

/// What the rest of the panel (description, file, display settings, morph targets, keys
/// and timings) and the timeline below it take of the screen's height, points: the graph's
/// section scrolls in what is left.
const BESIDE_GRAPH: f32 = 480.0;

/// The least and most height the graph's section takes, points.
const GRAPH_HEIGHT: (f32, f32) = (70.0, 380.0);

/// The graph in place of the clips: its file, stop and restart; the floor switch and a row
/// per parameter; then each machine's state and transition and the blend spaces' weights,
/// scrolling in what the screen's height leaves.
fn graph_section(v: &mut Viewer, ui: &mut egui::Ui, height: f32) {
    let Some(g) = v.graph.as_mut() else { return };
    let (mut stop, mut restart) = (false, false);
    ui.horizontal(|ui| {
        ui.label(RichText::new(format!("graph {}", g.name())).strong()).on_hover_text(g.file.display().to_string());
        stop = tag(ui.small_button("stop").on_hover_text("play the clips again"), "graph-stop").clicked();
        restart = tag(ui.small_button("restart").on_hover_text("entry states, default parameters"), "graph-restart")
            .clicked();
    });
    let graph = g.graph.clone();
    egui::ScrollArea::vertical().id_salt("viewer-graph").max_height(height).show(ui, |ui| {
        // The controls first: what appears and goes below them (transitions, blend weights)
        // never moves a control while it is dragged.
        crate::widgets::grid(ui, "viewer-graph-params", |ui| {
            crate::widgets::check(ui, "feet", "graph-floor", &mut g.on_floor, "foot IK on the floor");
            for info in graph.params().infos() {
                crate::graph_view::param_row(ui, &graph, &mut g.instance, info, "param:");
            }
        });
        for line in g.machine_lines() {
            ui.label(line);
        }
        crate::graph_view::blend_space_bars(ui, &graph, &g.instance);
    });
    if restart {
        g.restart();
    }
    if stop {
        v.close_graph();
    }
}

fn clips(v: &mut Viewer, ui: &mut egui::Ui) {
    let mut pick = None;
    egui::ScrollArea::vertical().id_salt("viewer-clips").max_height(74.0).show(ui, |ui| {
        if tag(ui.selectable_label(v.clip.is_none(), "rest pose"), "clip:rest").clicked() {
            pick = Some(None);
        }
        for (i, c) in v.info.clips.iter().enumerate() {
            let text = format!("{}  ({:.2} s)", c.name, c.duration);
            if tag(ui.selectable_label(v.clip == Some(i), text), &format!("clip:{i}")).clicked() {
                pick = Some(Some(i));
            }
        }
    });
    if let Some(clip) = pick {
        v.select_clip(clip);
    }
}

fn display(v: &mut Viewer, ui: &mut egui::Ui) {
    v.stage.panel(ui);
    ui.horizontal(|ui| {
        ui.label("colours");
        egui::ComboBox::from_id_salt("viewer-colours").width(96.0).selected_text(v.view.label()).show_ui(ui, |ui| {
            for view in ColorView::ALL {
                tag(ui.selectable_value(&mut v.view, view, view.label()), &format!("view:{}", view.label()));
            }
        });
        let mut rm = v.wants_root_motion();
        let toggle =
            ui.checkbox(&mut rm, "root motion").on_hover_text("walk across the floor, the camera following (o)");
        if tag(toggle, "root-motion").changed() {
            v.toggle_root_motion();
        }
    });
    ui.horizontal(|ui| {
        ui.label("show");
        tag(ui.checkbox(&mut v.show_grid, "grid"), "grid");
        tag(ui.checkbox(&mut v.show_normals, "normals"), "normals");
        tag(ui.checkbox(&mut v.show_bounds, "bounds"), "bounds");
    });
}

fn morph_sliders(v: &mut Viewer, ui: &mut egui::Ui) {
    if v.info.morph_targets() == 0 {
        return;
    }
    ui.separator();
    ui.label("morph targets").on_hover_text("a slider holds its weight over the clip's until reset");
    let mut changes: Vec<(usize, usize, Option<f32>)> = Vec::new();
    egui::ScrollArea::vertical().id_salt("viewer-morphs").max_height(96.0).show(ui, |ui| {
        for (p, mesh) in v.info.meshes.iter().enumerate() {
            for (k, name) in mesh.morph_targets.iter().enumerate() {
                let held = v.morph_override.get(p).and_then(|o| o.get(k)).copied().flatten();
                let clip_weight = v.stage.posed.weights.get(p).and_then(|w| w.get(k)).copied().unwrap_or(0.0);
                let mut w = held.unwrap_or(clip_weight);
                ui.horizontal(|ui| {
                    ui.add_sized([72.0, 18.0], egui::Label::new(name.as_str()).truncate());
                    let slider = egui::Slider::new(&mut w, 0.0..=1.0).show_value(false);
                    if tag(ui.add(slider), &format!("morph:{p}:{k}")).changed() {
                        changes.push((p, k, Some(w)));
                    }
                    ui.monospace(format!("{w:.2}"));
                    if held.is_some() {
                        let reset = ui.small_button("clip").on_hover_text("back to the clip's weight");
                        if tag(reset, &format!("morph-reset:{p}:{k}")).clicked() {
                            changes.push((p, k, None));
                        }
                    } else {
                        ui.weak("clip");
                    }
                });
            }
        }
    });
    if v.morph_override.iter().flatten().any(Option::is_some)
        && tag(ui.small_button("all back to the clip"), "morph-reset-all").clicked()
    {
        v.reset_morphs();
    }
    for (p, k, w) in changes {
        v.set_morph(p, k, w);
    }
}

/// The viewer's windows: timeline, model facts, joint tree, timings.
pub(super) fn windows(v: &mut Viewer, ctx: &egui::Context, view: &UiView<'_>) {
    let layout = Layout::new(view.size.0 as f32, view.size.1 as f32);
    // The timeline is docked along the bottom: anchored, the screen's width.
    let timeline = egui::Window::new("Timeline")
        .id(egui::Id::new("viewer-timeline"))
        .title_bar(false)
        .anchor(egui::Align2::LEFT_BOTTOM, vec2(MARGIN, -MARGIN))
        .fixed_size(vec2(layout.timeline.width() - CHROME.w, TIMELINE_CONTENT))
        .show(ctx, |ui| timeline_ui(v, ui));
    let model = window("Model", "viewer-model", layout.model).show(ctx, |ui| model_ui(v, ui));
    let joints = window("Joints", "viewer-joints", layout.joints).show(ctx, |ui| joints_ui(v, ui));
    let timings = window("Timings", "viewer-timings", layout.timings).show(ctx, |ui| {
        ui.label("CPU per stage");
        timings_plot(ui, "viewer-cpu-timings", &view.timings.cpu);
        ui.label("GPU per pass");
        timings_plot(ui, "viewer-gpu-timings", &view.timings.gpu);
    });
    for (shown, name) in
        [(timeline, "timeline-window"), (model, "model-window"), (joints, "joints-window"), (timings, "timings-window")]
    {
        if let Some(shown) = shown {
            tag(shown.response, name);
        }
    }
}

fn timeline_ui(v: &mut Viewer, ui: &mut egui::Ui) {
    if v.graph.is_some() {
        return graph_timeline(v, ui);
    }
    let duration = v.playback.duration();
    ui.horizontal(|ui| {
        if tag(ui.button("|<").on_hover_text("a frame back (,)"), "step-back").clicked() {
            v.step_frames(-1);
        }
        if tag(ui.button(if v.paused { "Play" } else { "Pause" }), "play").clicked() {
            v.toggle_play();
        }
        if tag(ui.button(">|").on_hover_text("a frame forwards (.)"), "step-forward").clicked() {
            v.step_frames(1);
        }
        ui.monospace(format!("{:6.3} / {:.3} s", v.time, duration));
        ui.separator();
        ui.label("speed");
        let speed = egui::Slider::new(&mut v.playback.speed, -2.0..=2.0).step_by(0.05).fixed_decimals(2);
        tag(ui.add(speed), "speed");
        ui.separator();
        for l in Looping::ALL {
            if tag(ui.selectable_label(v.looping == l, l.label()), &format!("loop:{}", l.label())).clicked() {
                v.set_looping(l);
            }
        }
        ui.separator();
        let name = v.clip.and_then(|c| v.info.clips.get(c)).map_or("rest pose", |c| c.name.as_str());
        ui.label(RichText::new(name).strong());
    });
    scrub_bar(v, ui, duration);
}

/// The scrub bar: the clip's span left to right, its events as ticks above, each foot
/// contact curve's planted spans as a band below, the time shown as the playhead.
fn scrub_bar(v: &mut Viewer, ui: &mut egui::Ui, duration: f32) {
    let (rect, response) = ui.allocate_exact_size(vec2(ui.available_width(), BAR_HEIGHT), Sense::click_and_drag());
    let response = tag(response, "timeline");
    let x_of = |t: f32| rect.left() + rect.width() * if duration > 0.0 { (t / duration).clamp(0.0, 1.0) } else { 0.0 };
    let time_at = |x: f32| ((x - rect.left()) / rect.width()).clamp(0.0, 1.0) * duration;
    v.scrubbing = response.is_pointer_button_down_on();
    if (v.scrubbing || response.clicked())
        && duration > 0.0
        && let Some(p) = response.interact_pointer_pos()
    {
        v.seek(time_at(p.x));
    }
    let painter = ui.painter_at(rect);
    let visuals = ui.visuals();
    painter.rect_filled(rect, 2.0, visuals.extreme_bg_color);
    // Seconds: ticks at a step that keeps them 40 points apart or more.
    if duration > 0.0 {
        let step = [0.01f32, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0]
            .into_iter()
            .find(|s| rect.width() * s / duration >= 40.0)
            .unwrap_or(duration);
        let ticks = (duration / step).floor() as i32;
        for i in 0..=ticks {
            let x = x_of(i as f32 * step);
            painter.vline(x, rect.y_range(), Stroke::new(1.0, visuals.weak_text_color().gamma_multiply(0.35)));
            painter.text(
                Pos2::new(x + 2.0, rect.top() + 1.0),
                egui::Align2::LEFT_TOP,
                format!("{:.2}", i as f32 * step),
                egui::FontId::proportional(9.0),
                visuals.weak_text_color(),
            );
        }
    }
    // Foot contacts: one band per curve along the bottom.
    let band = 5.0;
    for (k, c) in v.marks.contacts.iter().enumerate() {
        let y1 = rect.bottom() - 2.0 - k as f32 * (band + 2.0);
        for &(a, b) in &c.spans {
            let r = Rect::from_min_max(Pos2::new(x_of(a), y1 - band), Pos2::new(x_of(b).max(x_of(a) + 1.0), y1));
            painter.rect_filled(r, 1.0, CONTACT_COLOURS[k % CONTACT_COLOURS.len()]);
        }
    }
    // Events: ticks from the top.
    for e in &v.marks.events {
        let x = x_of(e.time);
        painter.line_segment([Pos2::new(x, rect.top() + 11.0), Pos2::new(x, rect.center().y + 4.0)], EVENT_STROKE);
    }
    // The playhead.
    if duration > 0.0 {
        painter.vline(x_of(v.time), rect.y_range(), Stroke::new(2.0, visuals.selection.bg_fill));
    }
    if let Some(p) = response.hover_pos().filter(|_| duration > 0.0) {
        let t = time_at(p.x);
        let near: Vec<&str> =
            v.marks.events.iter().filter(|e| (x_of(e.time) - p.x).abs() <= 4.0).map(|e| e.name.as_str()).collect();
        let planted: Vec<&str> = (0..v.marks.contacts.len())
            .filter(|k| v.marks.planted(*k, t))
            .map(|k| v.marks.contacts[k].curve.as_str())
            .collect();
        response.on_hover_ui_at_pointer(|ui| {
            ui.monospace(format!("{t:.3} s"));
            if !near.is_empty() {
                ui.label(format!("events: {}", near.join(", ")));
            }
            if !planted.is_empty() {
                ui.label(format!("planted: {}", planted.join(", ")));
            }
        });
    }
}

/// The timeline while a graph plays: play, pause, a frame forwards, speed (a graph plays
/// forwards only), the graph's time, and its events of the last [`HISTORY_SECONDS`] on a
/// strip that scrolls left, the newest at the right edge.
fn graph_timeline(v: &mut Viewer, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        if tag(ui.button(if v.paused { "Play" } else { "Pause" }), "play").clicked() {
            v.paused = !v.paused;
        }
        if tag(ui.button(">|").on_hover_text("a frame forwards (.)"), "step-forward").clicked() {
            v.step_frames(1);
        }
        let time = v.graph.as_ref().map_or(0.0, |g| g.time);
        ui.monospace(format!("{time:8.3} s"));
        ui.separator();
        ui.label("speed");
        let speed = egui::Slider::new(&mut v.playback.speed, -2.0..=2.0).step_by(0.05).fixed_decimals(2);
        tag(ui.add(speed), "speed").on_hover_text("a graph plays forwards only: below 0 it stands");
        ui.separator();
        if let Some(g) = &v.graph {
            ui.label(RichText::new(format!("graph {}", g.name())).strong());
        }
    });
    let (rect, response) = ui.allocate_exact_size(vec2(ui.available_width(), BAR_HEIGHT), Sense::hover());
    tag(response, "timeline");
    let Some(g) = &v.graph else { return };
    let painter = ui.painter_at(rect);
    let visuals = ui.visuals();
    painter.rect_filled(rect, 2.0, visuals.extreme_bg_color);
    let x_of = |t: f32| rect.right() - rect.width() * ((g.time - t) / HISTORY_SECONDS);
    // Whole seconds of graph time.
    for k in 0..=HISTORY_SECONDS as i32 {
        let second = g.time.floor() - k as f32;
        let x = x_of(second);
        if second < 0.0 || x < rect.left() {
            continue;
        }
        painter.vline(x, rect.y_range(), Stroke::new(1.0, visuals.weak_text_color().gamma_multiply(0.35)));
        painter.text(
            Pos2::new(x + 2.0, rect.top() + 1.0),
            egui::Align2::LEFT_TOP,
            format!("{second:.0} s"),
            egui::FontId::proportional(9.0),
            visuals.weak_text_color(),
        );
    }
    // Names where they do not run into the one before.
    let mut free_from = f32::MIN;
    for (t, e) in g.recent.iter().filter(|(t, _)| g.time - *t <= HISTORY_SECONDS) {
        let x = x_of(*t);
        painter.line_segment([Pos2::new(x, rect.top() + 11.0), Pos2::new(x, rect.bottom() - 2.0)], EVENT_STROKE);
        let name = g.graph.event_name(e).unwrap_or("");
        if !name.is_empty() && x >= free_from {
            let drawn = painter.text(
                Pos2::new(x + 2.0, rect.center().y + 2.0),
                egui::Align2::LEFT_TOP,
                name,
                egui::FontId::proportional(9.0),
                visuals.text_color(),
            );
            free_from = drawn.right() + 4.0;
        }
    }
}

/// Colours of the foot-contact bands, one per curve in turn.
pub const CONTACT_COLOURS: [Color32; 4] = [
    Color32::from_rgb(80, 200, 120),
    Color32::from_rgb(90, 160, 255),
    Color32::from_rgb(230, 200, 80),
    Color32::from_rgb(220, 120, 220),
];

/// How event ticks are drawn.
const EVENT_STROKE: Stroke = Stroke { width: 2.0, color: Color32::from_rgb(255, 150, 60) };

fn model_ui(v: &mut Viewer, ui: &mut egui::Ui) {
    let info = &v.info;
    let title = v
        .source
        .as_ref()
        .and_then(|p| p.file_name())
        .map_or_else(|| info.name.clone(), |f| f.to_string_lossy().into_owned());
    let title = ui.add(egui::Label::new(RichText::new(title).strong()).truncate());
    if let Some(p) = &v.source {
        title.on_hover_text(p.display().to_string());
    }
    egui::Grid::new("viewer-model-facts").num_columns(2).striped(true).show(ui, |ui| {
        let mut row = |name: &str, value: String| {
            ui.label(name);
            ui.label(value);
            ui.end_row();
        };
        row("joints", format!("{} ({} deform)", info.joints, info.skin_joints));
        let joints: Vec<String> = info.skins.iter().map(usize::to_string).collect();
        row("skins", format!("{} ({} joints)", info.skins.len(), joints.join(", ")));
        row("meshes", format!("{} ({} vertices)", info.meshes.len(), info.vertices()));
        row("morph targets", info.morph_targets().to_string());
        row("materials", info.materials.len().to_string());
        row("clips", info.clips.len().to_string());
    });
    egui::CollapsingHeader::new("meshes").id_salt("viewer-model-meshes").default_open(true).show(ui, |ui| {
        for (i, m) in info.meshes.iter().enumerate() {
            let skin = m.skin.map_or_else(|| "rigid".into(), |s| format!("skin {s}"));
            let mut text = format!("{i}: {} vertices, {} triangles, {skin}", m.vertices, m.triangles);
            if !m.morph_targets.is_empty() {
                text.push_str(&format!("; morph targets {}", m.morph_targets.join(", ")));
            }
            ui.add(egui::Label::new(text).wrap());
        }
        if !info.materials.is_empty() {
            ui.add(egui::Label::new(RichText::new(format!("materials: {}", info.materials.join(", "))).weak()).wrap());
        }
    });
    egui::CollapsingHeader::new("clips").id_salt("viewer-model-clips").default_open(true).show(ui, |ui| {
        egui::Grid::new("viewer-model-clip-grid").num_columns(2).show(ui, |ui| {
            for c in &info.clips {
                ui.add(egui::Label::new(&c.name).truncate())
                    .on_hover_text(format!("{} events, {} curves", c.events, c.curves));
                ui.monospace(format!("{:.3} s", c.duration));
                ui.end_row();
            }
        });
    });
}

fn joints_ui(v: &mut Viewer, ui: &mut egui::Ui) {
    let mut pick = None;
    // The tree takes the window's height but what the selected joint's transforms need.
    let details = if v.selected_joint.is_some() { 230.0 } else { 30.0 };
    let tree_height = (ui.available_height() - details).max(ui.available_height() * 0.4).max(60.0);
    egui::ScrollArea::vertical().id_salt("viewer-joint-tree").max_height(tree_height).show(ui, |ui| {
        for &root in &v.info.roots {
            joint_node(v, ui, root, 0, &mut pick);
        }
    });
    if let Some(j) = pick {
        v.select_joint(if v.selected_joint == Some(j) { None } else { Some(j) });
    }
    ui.separator();
    let Some(j) = v.selected_joint else {
        ui.weak("select a joint to see its transforms");
        return;
    };
    let sk = &v.stage.character.skeleton;
    let parent = sk.parent(j).and_then(|p| sk.name(p)).unwrap_or("none");
    ui.label(RichText::new(format!("{} (joint {j}, parent {parent})", sk.name(j).unwrap_or("?"))).strong());
    let in_skin = v.stage.character.skins.first().is_some_and(|s| s.joints().contains(&j));
    let mut weights = v.weight_joint.is_some();
    if in_skin {
        if tag(ui.checkbox(&mut weights, "its weights on the mesh"), "joint-weights").changed() {
            v.show_selected_weights(weights);
        }
    } else {
        ui.weak("not a joint of the first skin: no weights");
    }
    let local = v.stage.posed.pose.locals().get(j).copied().unwrap_or(Transform::IDENTITY);
    let model = v.stage.posed.world.get(j).map_or(Transform::IDENTITY, Transform::from_matrix);
    transform_grid(ui, "local (to the parent)", "viewer-joint-local", &local);
    transform_grid(ui, "model", "viewer-joint-model", &model);
}

fn joint_node(v: &Viewer, ui: &mut egui::Ui, j: usize, depth: usize, pick: &mut Option<usize>) {
    let sk = &v.stage.character.skeleton;
    let name = sk.name(j).unwrap_or("?");
    let text = if v.stage.character.bone_mask.get(j).copied().unwrap_or(false) {
        RichText::new(name)
    } else {
        RichText::new(name).weak()
    };
    let selected = v.selected_joint == Some(j);
    let children = &v.info.children[j];
    if children.is_empty() {
        ui.horizontal(|ui| {
            ui.add_space(ui.spacing().indent);
            if tag(ui.selectable_label(selected, text), &format!("joint:{j}")).clicked() {
                *pick = Some(j);
            }
        });
        return;
    }
    let id = ui.make_persistent_id(("viewer-joint", j));
    egui::collapsing_header::CollapsingState::load_with_default_open(ui.ctx(), id, depth < 3)
        .show_header(ui, |ui| {
            if tag(ui.selectable_label(selected, text), &format!("joint:{j}")).clicked() {
                *pick = Some(j);
            }
        })
        .body(|ui| {
            for &c in children {
                joint_node(v, ui, c, depth + 1, pick);
            }
        });
}

fn transform_grid(ui: &mut egui::Ui, title: &str, id: &str, t: &Transform) {
    ui.label(title);
    let q: &Quat = &t.rotation;
    let (x, y, z) = q.euler_angles();
    let c = q.coords;
    let small = |text: String| RichText::new(text).monospace().size(10.5);
    let v3 = |v: &Vec3| small(format!("{:8.3} {:8.3} {:8.3}", v.x, v.y, v.z));
    egui::Grid::new(id).num_columns(2).spacing([6.0, 2.0]).show(ui, |ui| {
        ui.weak("T").on_hover_text("translation");
        ui.label(v3(&t.translation));
        ui.end_row();
        ui.weak("R").on_hover_text("rotation as a quaternion: x y z w");
        ui.label(small(format!("{:7.4} {:7.4} {:7.4} {:7.4}", c.x, c.y, c.z, c.w)));
        ui.end_row();
        ui.weak("R°").on_hover_text("rotation as Euler angles in degrees: about x, then y, then z (roll, pitch, yaw)");
        ui.label(v3(&Vec3::new(x.to_degrees(), y.to_degrees(), z.to_degrees())));
        ui.end_row();
        ui.weak("S").on_hover_text("scale");
        ui.label(v3(&t.scale));
        ui.end_row();
    });
}
