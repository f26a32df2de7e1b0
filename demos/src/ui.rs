//! The demos' panel (cargo feature `ui`, on by default): every demo draws an egui window
//! with its description, its parameters ([`crate::Scene::panel`]), its keys and the frame
//! timings, and may add windows of its own ([`crate::Scene::windows`]); the renderer draws
//! it as the last pass of the frame (`anim_render_vk::ui`), in the window and headless.
//! `--no-ui` hides it.
//!
//! Headless runs build egui's input by hand: the screen is the target's size at one pixel
//! a point, time advances by [`crate::app::HEADLESS_DT`] a frame, animations are off (so
//! screenshots do not depend on how many frames ran), and tests queue pointer and key events
//! with [`DemoUi::push_event`]. Widgets a test needs to find are named with [`tag`] and
//! read back with [`widget_rect`]: positions come from egui's layout, not from fixed pixels.
//!
//! [`Timings`] keeps the last few seconds of CPU time per frame stage and GPU time per pass
//! for the plots ([`timings_plot`]).

use crate::app::{FRAMEWORK_CONTROLS, Orbit, Scene};
use anim_render_vk::FrameStats;
use anim_render_vk::ui::egui;
use egui::{Id, Rect};
use std::collections::VecDeque;

/// Frames of history the timing plots show.
pub const HISTORY: usize = 240;

/// Names `response`'s widget `name`, so that tests find its rectangle with
/// [`widget_rect`]. Returns the response.
pub fn tag(response: egui::Response, name: &str) -> egui::Response {
    let rect = response.rect;
    response.ctx.data_mut(|d| d.insert_temp(tag_id(name), rect));
    response
}

/// The rectangle (points) of the widget named `name` with [`tag`] in the last frame that
/// showed it.
pub fn widget_rect(ctx: &egui::Context, name: &str) -> Option<Rect> {
    ctx.data(|d| d.get_temp::<Rect>(tag_id(name)))
}

fn tag_id(name: &str) -> Id {
    Id::new(("anim-demos-widget", name))
}

/// One timed quantity over the last [`HISTORY`] frames.
#[derive(Clone, Debug)]
pub struct Series {
    /// What is timed (`update`, `ui`, a GPU pass name).
    pub name: &'static str,
    /// Milliseconds, oldest first.
    pub ms: VecDeque<f32>,
}

impl Series {
    fn new(name: &'static str) -> Self {
        Self { name, ms: VecDeque::with_capacity(HISTORY) }
    }

    fn push(&mut self, ms: f32) {
        if self.ms.len() == HISTORY {
            self.ms.pop_front();
        }
        self.ms.push_back(ms);
    }

    /// Mean of the history, milliseconds (0 when empty).
    pub fn mean(&self) -> f32 {
        if self.ms.is_empty() { 0.0 } else { self.ms.iter().sum::<f32>() / self.ms.len() as f32 }
    }

    /// The latest value (0 when empty).
    pub fn last(&self) -> f32 {
        self.ms.back().copied().unwrap_or(0.0)
    }
}

/// CPU time per frame stage and GPU time per pass, for the plots.
#[derive(Clone, Debug, Default)]
pub struct Timings {
    /// CPU stages: `ui` (the panel's layout, tessellation and upload), `update` (the scene:
    /// sampling, blending, IK, CPU skinning), `render` (planning, staging, recording and
    /// submitting the frame).
    pub cpu: Vec<Series>,
    /// GPU passes of the renderer's frame statistics (`upload`, `compute`, `draw`, `ui`, …).
    pub gpu: Vec<Series>,
}

impl Timings {
    /// Adds a CPU time of stage `name`.
    pub fn cpu(&mut self, name: &'static str, ms: f32) {
        Self::add(&mut self.cpu, name, ms);
    }

    /// Adds the GPU passes of a frame.
    pub fn gpu(&mut self, stats: &FrameStats) {
        for p in &stats.passes {
            Self::add(&mut self.gpu, p.name, p.ms as f32);
        }
    }

    fn add(list: &mut Vec<Series>, name: &'static str, ms: f32) {
        match list.iter_mut().find(|s| s.name == name) {
            Some(s) => s.push(ms),
            None => {
                let mut s = Series::new(name);
                s.push(ms);
                list.push(s);
            }
        }
    }

    /// The CPU series `name`.
    pub fn cpu_series(&self, name: &str) -> Option<&Series> {
        self.cpu.iter().find(|s| s.name == name)
    }
}

/// A plot of `series` (milliseconds over the last frames) with a legend and each one's
/// latest and mean value.
pub fn timings_plot(ui: &mut egui::Ui, id: &str, series: &[Series]) {
    if series.is_empty() {
        ui.weak("no frames timed yet");
        return;
    }
    egui::Grid::new((id, "values")).num_columns(3).show(ui, |ui| {
        for s in series {
            ui.label(s.name);
            ui.monospace(format!("{:7.3} ms", s.last()));
            ui.weak(format!("mean {:.3}", s.mean()));
            ui.end_row();
        }
    });
    egui_plot::Plot::new(id)
        .height(90.0)
        .legend(egui_plot::Legend::default())
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .include_y(0.0)
        .show_x(false)
        .show(ui, |plot| {
            for s in series {
                let points: egui_plot::PlotPoints<'_> =
                    s.ms.iter().enumerate().map(|(i, &ms)| [i as f64, f64::from(ms)]).collect();
                plot.line(egui_plot::Line::new(s.name, points));
            }
        });
}

/// What a scene's panel may read besides itself.
#[derive(Debug)]
pub struct UiView<'a> {
    /// The timings of the last frames.
    pub timings: &'a Timings,
    /// The camera (scenes that drag things in the view project and unproject with it).
    pub orbit: &'a Orbit,
    /// Target size in pixels.
    pub size: (u32, u32),
}

/// The egui side of a demo: the context, queued headless input, the timings.
pub struct DemoUi {
    /// The egui context.
    pub ctx: egui::Context,
    /// Frame timings (filled by the frame loops).
    pub timings: Timings,
    events: Vec<egui::Event>,
    time: f64,
}

impl std::fmt::Debug for DemoUi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoUi").field("queued_events", &self.events.len()).finish()
    }
}

impl DemoUi {
    /// A context; `still` ones (headless, or a window a test drives) have animations off.
    pub fn new(still: bool) -> Self {
        let ctx = egui::Context::default();
        if still {
            ctx.all_styles_mut(|s| s.animation_time = 0.0);
        }
        Self { ctx, timings: Timings::default(), events: Vec::new(), time: 0.0 }
    }

    /// Queues an input event for the next frame (headless, or in a window driven by a
    /// [`crate::app::Windowed`] session).
    pub fn push_event(&mut self, event: egui::Event) {
        self.events.push(event);
    }

    /// Takes the queued events (a window's frame adds them to the window's own input).
    pub fn take_events(&mut self) -> Vec<egui::Event> {
        std::mem::take(&mut self.events)
    }

    /// The input of the next headless frame: a `width × height` screen, time advanced by
    /// `dt`, the queued events.
    pub fn headless_input(&mut self, width: u32, height: u32, dt: f32) -> egui::RawInput {
        self.time += f64::from(dt);
        egui::RawInput {
            screen_rect: Some(Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(width as f32, height as f32))),
            time: Some(self.time),
            predicted_dt: dt.max(1.0 / 240.0),
            focused: true,
            events: std::mem::take(&mut self.events),
            ..Default::default()
        }
    }

    /// Runs egui over `input`: the demo's panel and the scene's windows.
    pub fn run<S: Scene>(
        &mut self,
        scene: &mut S,
        orbit: &Orbit,
        size: (u32, u32),
        input: egui::RawInput,
    ) -> egui::FullOutput {
        let view = UiView { timings: &self.timings, orbit, size };
        self.ctx.run(input, |ctx| panel(ctx, scene, &view))
    }

    /// Whether egui uses the pointer (over a window, or dragging a widget): the camera
    /// leaves it alone then.
    pub fn wants_pointer(&self) -> bool {
        self.ctx.wants_pointer_input() || self.ctx.is_using_pointer()
    }
}

/// The demo's window (description, parameters, keys, timings) and the scene's own windows.
/// The window is tagged `panel` (see [`widget_rect`]).
pub fn panel<S: Scene>(ctx: &egui::Context, scene: &mut S, view: &UiView<'_>) {
    let shown = egui::Window::new(S::NAME)
        .id(Id::new("anim-demo-panel"))
        .default_pos([8.0, 8.0])
        .default_width(270.0)
        .resizable(false)
        .show(ctx, |ui| {
            ui.add(egui::Label::new(egui::RichText::new(S::ABOUT).weak()).wrap());
            ui.separator();
            scene.panel(ui, view);
            ui.separator();
            egui::CollapsingHeader::new("Keys").id_salt("keys").show(ui, |ui| {
                egui::Grid::new("keys-grid").num_columns(2).show(ui, |ui| {
                    for (k, what) in S::CONTROLS.iter().chain(FRAMEWORK_CONTROLS) {
                        ui.monospace(*k);
                        ui.label(*what);
                        ui.end_row();
                    }
                });
            });
            egui::CollapsingHeader::new("Frame timings").id_salt("timings").show(ui, |ui| {
                ui.label("CPU per stage");
                timings_plot(ui, "cpu-timings", &view.timings.cpu);
                ui.label("GPU per pass");
                timings_plot(ui, "gpu-timings", &view.timings.gpu);
            });
        });
    if let Some(shown) = shown {
        tag(shown.response, "panel");
    }
    scene.windows(ctx, view);
}
