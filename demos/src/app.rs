//! The demo framework: one command line, one [`Scene`] trait, and one frame loop that runs
//! in a window (winit + swapchain) or headless (offscreen image, PNG).
//!
//! # Writing a demo
//! Implement [`Scene`]: build meshes in [`Scene::new`] (register them with the
//! [`Renderer`]), then fill the frame in [`Scene::update`]: advance by `dt`, pose, and add
//! instances and lines to the [`FrameData`] (its lists were cleared and its camera set by
//! the framework's orbit camera). React to keys in [`Scene::key`]. The binary is then
//! `fn main() -> std::process::ExitCode { demos::main::<MyScene>() }`.
//!
//! ```no_run
//! use anim_math::{Mat4, Vec3};
//! use anim_render_vk::{Coloring, FrameData, MeshId, Renderer};
//! use demos::{CommonArgs, DemoError, Scene};
//!
//! /// The default character's bind-pose mesh, turning.
//! struct Turntable {
//!     mesh: MeshId,
//!     angle: f32,
//! }
//!
//! impl Scene for Turntable {
//!     const NAME: &'static str = "turntable";
//!     const ABOUT: &'static str = "The mannequin's mesh on a turntable.";
//!     const CONTROLS: &'static [(&'static str, &'static str)] = &[];
//!
//!     fn new(renderer: &mut Renderer, _args: &CommonArgs) -> Result<Self, DemoError> {
//!         let m = anim_mannequin::build();
//!         Ok(Self { mesh: renderer.add_mesh(&m.mesh, &Coloring::Uniform([0.8; 3]))?, angle: 0.0 })
//!     }
//!
//!     fn focus(&self) -> (Vec3, f32) {
//!         (Vec3::new(0.0, 0.9, 0.0), 1.0)
//!     }
//!
//!     fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
//!         self.angle += dt;
//!         frame.add_static(self.mesh, Mat4::new_rotation(Vec3::y() * self.angle), [1.0; 3]);
//!         Ok(())
//!     }
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     demos::main::<Turntable>()
//! }
//! ```
//!
//! Skinned characters go through [`crate::Character`] and [`crate::Posed`]: sample a clip
//! (or write a pose, e.g. after blending or IK), then [`crate::Posed::draw`] adds the
//! instances for the chosen method and backend, each with its own palette.
//!
//! Headless runs advance a fixed [`HEADLESS_DT`] a frame (the first frame shows time
//! `--start`), so screenshots are deterministic; windowed runs advance by the measured frame
//! time. `--frames N` stops after N frames in both modes.

use crate::DemoError;
use crate::character::Backend;
use anim_core::skin::SkinMethod;
use anim_crowd::atlas::{TexelFormat, TextureLayout};
use anim_math::Vec3;
use anim_render_vk::{
    Camera, Context, ContextDesc, CrowdPath, FrameData, OFFSCREEN_FORMAT, Offscreen, Renderer, RgbaImage, Swapchain,
    swapchain, validation_from_env,
};
use clap::builder::TypedValueParser as _;
use clap::{CommandFactory, FromArgMatches, Parser};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

/// Time step of a headless frame, seconds.
pub const HEADLESS_DT: f32 = 1.0 / 30.0;

/// Parses `--method` (`lbs` or `dq`) into anim-core's [`SkinMethod`], listing the names in
/// `--help` and in errors.
pub fn method_parser() -> impl clap::builder::TypedValueParser<Value = SkinMethod> {
    clap::builder::PossibleValuesParser::new(SkinMethod::ALL.map(SkinMethod::name))
        .map(|s| s.parse::<SkinMethod>().expect("PossibleValuesParser admits only method names"))
}

/// The command line every demo shares.
#[derive(Clone, Debug, Parser)]
pub struct CommonArgs {
    /// Render without a window; the last frame is written to --out.
    #[arg(long)]
    pub headless: bool,
    /// Frames to render (headless default 60; a window runs until closed unless given).
    #[arg(long)]
    pub frames: Option<u32>,
    /// PNG file for the last headless frame.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// glTF model to show instead of the built-in mannequin.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Width in pixels.
    #[arg(long, default_value_t = 1280)]
    pub width: u32,
    /// Height in pixels.
    #[arg(long, default_value_t = 720)]
    pub height: u32,
    /// Vulkan validation with synchronization validation (also ANIM_VK_VALIDATION=1); any
    /// warning or error fails the run.
    #[arg(long)]
    pub validation: bool,
    /// Clip to play first (name or index), for demos that play one.
    #[arg(long)]
    pub clip: Option<String>,
    /// Skinning method at start, for demos that offer the choice.
    #[arg(long, value_parser = method_parser(), default_value = "lbs")]
    pub method: SkinMethod,
    /// Skinning backend at start, for demos that offer the choice.
    #[arg(long, value_enum, default_value = "vertex")]
    pub backend: Backend,
    /// Animation time of the first frame, seconds.
    #[arg(long, default_value_t = 0.0)]
    pub start: f32,
    /// Hide the panel (the demo's parameters, keys and timings drawn over the frame): clean
    /// frames for screenshots that are compared. Builds without the `ui` feature have no
    /// panel either way.
    #[arg(long)]
    pub no_ui: bool,
    /// Test aid for windowed runs: shrink the window after 2 frames and restore it after 4,
    /// so the swapchain is recreated twice.
    #[arg(long, hide = true)]
    pub exercise_resize: bool,
    /// Options of the crowd demo (hidden from the other demos' `--help`).
    #[command(flatten)]
    pub crowd: CrowdArgs,
    /// Animation graph file the character plays (the locomotion demo, default: the
    /// mannequin's locomotion graph; the viewer, in place of the clip).
    #[arg(long)]
    pub graph: Option<PathBuf>,
    /// A parameter of the graph the viewer plays (`--graph`), set at start: `NAME=VALUE`
    /// (a number for a float, `true` or `false` for a bool) or `NAME` for a trigger, which
    /// fires. Repeatable.
    #[arg(long = "param", value_name = "NAME[=VALUE]")]
    pub params: Vec<String>,
}

/// The options of `ch15_crowd`.
#[derive(Clone, Debug, clap::Args)]
#[command(next_help_heading = "Crowd")]
pub struct CrowdArgs {
    /// Number of characters.
    #[arg(long, default_value_t = 4096)]
    pub count: u32,
    /// GPU path: book (texture fetches per influence in the vertex shader, as the book
    /// does), palette-vertex or palette-compute (also called compute): a compute pass
    /// evaluates each palette once per joint, then vertex or compute skinning. The default
    /// is the fastest measured (BENCHMARKS.md).
    #[arg(long, default_value = "palette-vertex")]
    pub path: CrowdPath,
    /// Animation atlas written by `animtool bake` (default: bake the character's clips at
    /// start).
    #[arg(long)]
    pub anim_texture: Option<PathBuf>,
    /// Baking rate, frames a second.
    #[arg(long, default_value_t = 30.0)]
    pub rate: f32,
    /// Texel layout of the baked atlas: model-trs (the book's model-space transforms),
    /// matrix (skinning matrices) or dq (skinning dual quaternions; rigid skins only).
    #[arg(long, default_value = "matrix")]
    pub layout: String,
    /// Texel precision of the baked atlas: f32 or f16.
    #[arg(long, default_value = "f32")]
    pub texel_format: String,
    /// Draw every character (no GPU frustum culling).
    #[arg(long)]
    pub no_cull: bool,
    /// Distance from the camera beyond which characters skin with their strongest
    /// influence only.
    #[arg(long)]
    pub lod_distance: Option<f32>,
    /// Mesh levels of detail (meshoptimizer, at 50 %, 25 % and 10 % of the triangles):
    /// each character draws the coarsest level whose error covers at most this many
    /// pixels on screen.
    #[arg(long)]
    pub lod_pixels: Option<f32>,
    /// Threads for the crowd's time update (default: every core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Seed of the random clips, phases, speeds and headings.
    #[arg(long, default_value_t = 15)]
    pub seed: u64,
    /// A crowd of different characters (comma-separated glTF files, `default` for the
    /// mannequin) sharing the clips of `--model` (the mannequin by default), retargeted
    /// onto each; one instanced draw per character.
    #[arg(long, value_delimiter = ',')]
    pub models: Option<Vec<String>>,
}

impl CrowdArgs {
    /// `--layout` parsed.
    ///
    /// # Errors
    /// An unknown layout name.
    pub fn layout(&self) -> Result<TextureLayout, DemoError> {
        self.layout.parse().map_err(|e| DemoError::Args(format!("--layout: {e}")))
    }

    /// `--texel-format` parsed.
    ///
    /// # Errors
    /// An unknown format name.
    pub fn texel_format(&self) -> Result<TexelFormat, DemoError> {
        self.texel_format.parse().map_err(|e| DemoError::Args(format!("--texel-format: {e}")))
    }
}

/// Options only `ch15_crowd` reads.
const CROWD_OPTIONS: &[&str] = &[
    "count",
    "path",
    "anim_texture",
    "rate",
    "layout",
    "texel_format",
    "no_cull",
    "lod_distance",
    "lod_pixels",
    "threads",
    "seed",
    "models",
];

impl CommonArgs {
    /// Arguments for a headless run of `frames` frames at `width × height`, validation on,
    /// without the panel (`--no-ui`: the scene alone, as the image comparisons want it).
    pub fn headless(frames: u32, width: u32, height: u32) -> Self {
        let mut args = Self::headless_with_ui(frames, width, height);
        args.no_ui = true;
        args
    }

    /// [`CommonArgs::headless`] with the panel drawn (when built with the `ui` feature).
    pub fn headless_with_ui(frames: u32, width: u32, height: u32) -> Self {
        Self::parse_from([
            "demo",
            "--headless",
            "--validation",
            "--frames",
            &frames.to_string(),
            "--width",
            &width.to_string(),
            "--height",
            &height.to_string(),
        ])
    }

    /// Whether the panel is drawn: built with the `ui` feature and not `--no-ui`.
    pub fn ui_on(&self) -> bool {
        cfg!(feature = "ui") && !self.no_ui
    }

    fn validation_on(&self) -> bool {
        self.validation || validation_from_env()
    }
}

/// A key a scene may react to (arrow keys, Page Up/Down, Home and Esc belong to the
/// framework's camera and exit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    /// A character key, lower case.
    Char(char),
    /// Space bar.
    Space,
    /// Tab.
    Tab,
    /// Either Shift key.
    Shift,
    /// The right mouse button (the left one orbits the camera).
    Mouse,
}

/// Controls the framework handles in every demo.
pub const FRAMEWORK_CONTROLS: &[(&str, &str)] = &[
    ("drag / arrows", "orbit the camera"),
    ("wheel / PgUp PgDn", "zoom"),
    ("Home", "reset the camera"),
    ("Esc", "quit"),
];

/// A demo: what it draws and how it reacts.
pub trait Scene: Sized {
    /// Binary name.
    const NAME: &'static str;
    /// One-line description for `--help`.
    const ABOUT: &'static str;
    /// Scene keys and what they do (listed in `--help` and the window title).
    const CONTROLS: &'static [(&'static str, &'static str)];

    /// Builds the scene and registers its meshes with `renderer`.
    ///
    /// # Errors
    /// Model loading or upload failures, bad arguments.
    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError>;

    /// Centre and radius of what the camera should frame at start.
    fn focus(&self) -> (Vec3, f32);

    /// Initial camera yaw and pitch in radians (0, 0 looks from +Z, straight on).
    fn view_angles(&self) -> (f32, f32) {
        (0.35, 0.22)
    }

    /// Called before every [`Scene::update`] with the renderer, for work that needs it
    /// (uploads or recolouring after a key press). Does nothing by default.
    ///
    /// # Errors
    /// Upload failures.
    fn prepare(&mut self, _renderer: &mut Renderer) -> Result<(), DemoError> {
        Ok(())
    }

    /// Advances by `dt` seconds and fills `frame` (cleared, camera already set).
    ///
    /// # Errors
    /// Posing or drawing failures.
    fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError>;

    /// Reacts to a key press.
    fn key(&mut self, _key: Key) {}

    /// Reacts to a key release (for keys held down, such as movement keys).
    fn key_released(&mut self, _key: Key) {}

    /// Current state for the window title (clip, method, …).
    fn status(&self) -> String {
        String::new()
    }

    /// A file was dropped onto the window (the viewer opens it). Called between frames;
    /// work that needs the renderer goes in [`Scene::prepare`]. Ignores it by default.
    fn file_dropped(&mut self, _path: &std::path::Path) {}

    /// Whether the camera should frame [`Scene::focus`] again, asked after every
    /// [`Scene::prepare`] (the viewer says yes once after it opened another model). The
    /// camera keeps its angles; Home returns to the new framing. No by default.
    fn refocus(&mut self) -> bool {
        false
    }

    /// The scene's parameters as controls, in the demo's panel (feature `ui`; see
    /// [`crate::ui`]). Runs before [`Scene::update`] each frame, so a change shows in the
    /// same frame. Nothing by default.
    #[cfg(feature = "ui")]
    fn panel(&mut self, _ui: &mut anim_render_vk::ui::egui::Ui, _view: &crate::ui::UiView<'_>) {}

    /// Windows of the scene's own besides the panel (the viewer's timeline, joint tree, …).
    /// Nothing by default.
    #[cfg(feature = "ui")]
    fn windows(&mut self, _ctx: &anim_render_vk::ui::egui::Context, _view: &crate::ui::UiView<'_>) {}
}

/// An orbit camera around a target point (Y up).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Orbit {
    /// Point orbited.
    pub target: Vec3,
    /// Distance from the target.
    pub distance: f32,
    /// Angle about +Y, radians (0 looks from +Z).
    pub yaw: f32,
    /// Elevation, radians.
    pub pitch: f32,
    home: (Vec3, f32, f32, f32),
}

impl Orbit {
    /// Frames a sphere of `radius` around `target`, seen from `yaw` and `pitch` (radians).
    pub fn framing(target: Vec3, radius: f32, yaw: f32, pitch: f32) -> Self {
        let fov = Camera::default().fov_y;
        let distance = radius.max(1e-3) / (fov * 0.5).sin() * 1.05;
        Self { target, distance, yaw, pitch, home: (target, distance, yaw, pitch) }
    }

    /// Rotates by angles in radians.
    pub fn rotate(&mut self, dyaw: f32, dpitch: f32) {
        self.yaw += dyaw;
        self.pitch = (self.pitch + dpitch).clamp(-1.5, 1.5);
    }

    /// Multiplies the distance.
    pub fn zoom(&mut self, factor: f32) {
        self.distance = (self.distance * factor).clamp(1e-3, 1e6);
    }

    /// Back to the initial framing.
    pub fn reset(&mut self) {
        (self.target, self.distance, self.yaw, self.pitch) = self.home;
    }

    /// The camera.
    pub fn camera(&self) -> Camera {
        let dir = Vec3::new(self.pitch.cos() * self.yaw.sin(), self.pitch.sin(), self.pitch.cos() * self.yaw.cos());
        Camera {
            eye: self.target + dir * self.distance,
            target: self.target,
            near: self.distance * 0.01,
            far: self.distance * 100.0,
            ..Camera::default()
        }
    }
}

/// A scene with its frame data and camera: the state both loops drive.
#[derive(Debug)]
pub struct App<S: Scene> {
    /// The scene.
    pub scene: S,
    /// The frame being built.
    pub frame: FrameData,
    /// The camera.
    pub orbit: Orbit,
}

impl<S: Scene> App<S> {
    /// Builds the scene and frames it.
    ///
    /// # Errors
    /// As [`Scene::new`].
    pub fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let scene = S::new(renderer, args)?;
        let (target, radius) = scene.focus();
        let (yaw, pitch) = scene.view_angles();
        Ok(Self { scene, frame: FrameData::default(), orbit: Orbit::framing(target, radius, yaw, pitch) })
    }

    /// Lets the scene prepare (see [`Scene::prepare`]), frames it again when it asks
    /// ([`Scene::refocus`]), clears the frame, sets the camera and lets the scene advance by
    /// `dt` and fill it.
    ///
    /// # Errors
    /// As [`Scene::prepare`] and [`Scene::update`].
    pub fn step(&mut self, renderer: &mut Renderer, dt: f32) -> Result<(), DemoError> {
        self.scene.prepare(renderer)?;
        if self.scene.refocus() {
            let (target, radius) = self.scene.focus();
            let (yaw, pitch) = self.scene.view_angles();
            let (now_yaw, now_pitch) = (self.orbit.yaw, self.orbit.pitch);
            self.orbit = Orbit::framing(target, radius, yaw, pitch);
            (self.orbit.yaw, self.orbit.pitch) = (now_yaw, now_pitch);
        }
        self.frame.clear();
        self.frame.camera = self.orbit.camera();
        self.scene.update(dt, &mut self.frame)
    }
}

/// `--help` text of the controls.
pub fn controls_help<S: Scene>() -> String {
    let mut s = String::from("Controls:\n");
    for (k, what) in S::CONTROLS.iter().chain(FRAMEWORK_CONTROLS) {
        s.push_str(&format!("  {k:<20} {what}\n"));
    }
    s
}

fn title_controls<S: Scene>() -> String {
    S::CONTROLS.iter().map(|(k, w)| format!("{k}: {w}")).collect::<Vec<_>>().join(", ")
}

/// Parses the command line of demo `S` (its name, description and controls in `--help`).
pub fn parse_args<S: Scene>() -> CommonArgs {
    let mut cmd = CommonArgs::command().name(S::NAME).about(S::ABOUT).after_help(controls_help::<S>());
    if S::NAME != "ch15_crowd" {
        for id in CROWD_OPTIONS {
            cmd = cmd.mut_arg(*id, |a| a.hide(true));
        }
    }
    if S::NAME != "locomotion" {
        cmd = cmd.mut_arg("graph", |a| a.hide(true));
    }
    let matches = cmd.get_matches();
    CommonArgs::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

fn check_validation(ctx: &Context) -> Result<(), DemoError> {
    match ctx.validation_count() {
        0 => Ok(()),
        count => {
            Err(DemoError::Validation { count, first: ctx.validation_messages().first().cloned().unwrap_or_default() })
        }
    }
}

/// The result of a headless run.
pub struct HeadlessRun<S: Scene> {
    /// The scene and its last frame (camera included).
    pub app: App<S>,
    /// The last frame's image.
    pub image: RgbaImage,
    /// The renderer (its meshes stay registered).
    pub renderer: Renderer,
    /// The context.
    pub context: Arc<Context>,
}

/// A headless run frame by frame: for tests that act between frames (keys, UI events) and
/// for [`run_headless`]. Each [`Headless::frame`] runs the panel (when on), advances the
/// scene by [`HEADLESS_DT`] (0 for the first frame) and renders into the offscreen target.
pub struct Headless<S: Scene> {
    /// The scene, its frame data and camera.
    pub app: App<S>,
    /// The panel's egui side (`None` with `--no-ui`).
    #[cfg(feature = "ui")]
    pub ui: Option<crate::ui::DemoUi>,
    /// The offscreen target (dropped before the renderer).
    pub target: Offscreen,
    /// The renderer.
    pub renderer: Renderer,
    /// The context.
    pub context: Arc<Context>,
    frames: u32,
}

impl<S: Scene> Headless<S> {
    /// Creates the context (validation as asked), renderer, target and scene.
    ///
    /// # Errors
    /// Vulkan or scene failures.
    pub fn new(args: &CommonArgs) -> Result<Self, DemoError> {
        let context = Context::new(&ContextDesc { validation: args.validation_on(), window: None })?;
        let mut renderer = Renderer::new(&context, OFFSCREEN_FORMAT)?;
        let target = Offscreen::new(&context, args.width, args.height)?;
        let app = App::<S>::new(&mut renderer, args)?;
        Ok(Self {
            app,
            #[cfg(feature = "ui")]
            ui: args.ui_on().then(|| crate::ui::DemoUi::new(true)),
            target,
            renderer,
            context,
            frames: 0,
        })
    }

    /// Frames rendered so far.
    pub fn frames(&self) -> u32 {
        self.frames
    }

    /// Runs the panel on the queued UI events (when on), advances and renders one frame.
    ///
    /// # Errors
    /// Scene or rendering failures.
    pub fn frame(&mut self) -> Result<(), DemoError> {
        let dt = if self.frames == 0 { 0.0 } else { HEADLESS_DT };
        #[cfg(feature = "ui")]
        if let Some(ui) = &mut self.ui {
            let start = Instant::now();
            let (w, h) = self.target.size();
            let input = ui.headless_input(w, h, dt);
            let output = ui.run(&mut self.app.scene, &self.app.orbit, (w, h), input);
            self.renderer.set_ui(&ui.ctx, output)?;
            ui.timings.cpu("ui", start.elapsed().as_secs_f32() * 1e3);
        }
        let start = Instant::now();
        self.app.step(&mut self.renderer, dt)?;
        let update_ms = start.elapsed().as_secs_f32() * 1e3;
        let start = Instant::now();
        self.target.render(&mut self.renderer, &self.app.frame)?;
        let render_ms = start.elapsed().as_secs_f32() * 1e3;
        #[cfg(feature = "ui")]
        if let Some(ui) = &mut self.ui {
            ui.timings.cpu("update", update_ms);
            ui.timings.cpu("render", render_ms);
            if let Some(stats) = self.renderer.frame_stats() {
                ui.timings.gpu(stats);
            }
        }
        let _ = (update_ms, render_ms);
        self.frames += 1;
        Ok(())
    }

    /// The last frame's image.
    ///
    /// # Errors
    /// Readback failure.
    pub fn image(&self) -> Result<RgbaImage, DemoError> {
        Ok(self.target.image()?)
    }

    /// Ends the run: the last image, the target dropped, validation checked.
    ///
    /// # Errors
    /// Readback failure or validation messages.
    pub fn finish(self) -> Result<HeadlessRun<S>, DemoError> {
        let image = self.target.image()?;
        let Self { app, target, renderer, context, .. } = self;
        drop(target);
        check_validation(&context)?;
        Ok(HeadlessRun { app, image, renderer, context })
    }
}

/// Runs `S` headless: `--frames` frames (default 60) of [`HEADLESS_DT`], writes the last
/// one to `--out` when given.
///
/// # Errors
/// Any failure, or validation messages when validation is on.
pub fn run_headless<S: Scene>(args: &CommonArgs) -> Result<HeadlessRun<S>, DemoError> {
    let mut run = Headless::<S>::new(args)?;
    let frames = args.frames.unwrap_or(60).max(1);
    for _ in 0..frames {
        run.frame()?;
    }
    let run = run.finish()?;
    if let Some(out) = &args.out {
        run.image.save_png(out)?;
    }
    Ok(run)
}

/// Parses the command line and runs demo `S` in a window or headless; the exit code says
/// whether it succeeded (validation messages count as failure).
pub fn main<S: Scene>() -> ExitCode {
    let _ = env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).try_init();
    let mut args = parse_args::<S>();
    // No display to open a window on: render headless instead of failing, and say where the
    // picture went and how to get a window.
    let no_display = !args.headless && !display_available();
    if no_display {
        args.headless = true;
        args.out = Some(args.out.take().unwrap_or_else(|| default_out(S::NAME)));
    }
    let result = if args.headless {
        run_headless::<S>(&args).map(|run| {
            println!(
                "{}: {} frame(s) headless on {}, {} validation message(s){}",
                S::NAME,
                args.frames.unwrap_or(60).max(1),
                run.context.device_name(),
                run.context.validation_count(),
                args.out.as_ref().map_or_else(String::new, |o| format!(", wrote {}", o.display()))
            );
            if no_display {
                println!(
                    "{}: no display here (DISPLAY and WAYLAND_DISPLAY are unset), so it rendered headless instead of \
                     opening a window.\n  For a window, run it in a desktop session (X11 or Wayland).",
                    S::NAME
                );
            }
        })
    } else {
        run_window::<S>(&args)
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}: {e}", S::NAME);
            ExitCode::FAILURE
        }
    }
}

/// Whether a window can be opened: always on Windows and macOS; elsewhere (X11 and
/// Wayland) only when `DISPLAY`, `WAYLAND_DISPLAY` or `WAYLAND_SOCKET` names a display, as
/// winit requires.
fn display_available() -> bool {
    if cfg!(any(windows, target_os = "macos")) {
        return true;
    }
    ["DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET"].iter().any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
}

/// Where a run without a display writes its frame when `--out` is not given:
/// `target/NAME.png` when started from the workspace (as `make run` does), else `NAME.png`.
fn default_out(name: &str) -> PathBuf {
    let target = std::path::Path::new("target");
    let file = format!("{name}.png");
    if target.is_dir() { target.join(file) } else { PathBuf::from(file) }
}

mod window {
    use super::*;
    use winit::application::ApplicationHandler;
    use winit::dpi::PhysicalSize;
    use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
    use winit::event_loop::{ActiveEventLoop, EventLoop};
    use winit::keyboard::{Key as WKey, NamedKey};
    use winit::window::{Window, WindowId};

    /// Field order is drop order: swapchain and renderer before the context, the window last.
    struct State<S: Scene> {
        app: App<S>,
        swapchain: Swapchain,
        renderer: Renderer,
        ctx: Arc<Context>,
        window: Arc<Window>,
        last: Instant,
        title_at: Instant,
        frame_ms: f32,
        dragging: bool,
        cursor: Option<(f64, f64)>,
        /// The panel: egui's side and its winit input state (`None` with `--no-ui`).
        #[cfg(feature = "ui")]
        ui: Option<(crate::ui::DemoUi, egui_winit::State)>,
    }

    pub(super) struct WindowApp<S: Scene> {
        args: CommonArgs,
        state: Option<State<S>>,
        pub(super) error: Option<DemoError>,
        frames: u32,
        /// A fixed time step instead of the measured frame time (sessions driven by tests).
        pub(super) fixed_dt: Option<f32>,
        /// Redraws run, presented or not.
        pub(super) redraws: u32,
        /// Redraws a session asked for so far (`None`: the window redraws continuously).
        pub(super) wanted: Option<u32>,
        /// Window events a session queued; handled before the next redraw.
        pub(super) queued: Vec<WindowEvent>,
        /// The panel's animations off (sessions driven by tests, as headless runs).
        pub(super) still_ui: bool,
    }

    impl<S: Scene> WindowApp<S> {
        pub(super) fn new(args: &CommonArgs) -> Self {
            Self {
                args: args.clone(),
                state: None,
                error: None,
                frames: 0,
                fixed_dt: None,
                redraws: 0,
                wanted: None,
                queued: Vec::new(),
                still_ui: false,
            }
        }

        /// The scene's app, once the window was created.
        pub(super) fn app(&self) -> Option<&App<S>> {
            self.state.as_ref().map(|s| &s.app)
        }

        /// See [`WindowApp::app`].
        pub(super) fn app_mut(&mut self) -> Option<&mut App<S>> {
            self.state.as_mut().map(|s| &mut s.app)
        }

        /// The renderer and context, once the window was created.
        pub(super) fn renderer(&self) -> Option<(&Renderer, &Arc<Context>)> {
            self.state.as_ref().map(|s| (&s.renderer, &s.ctx))
        }

        /// The panel's egui side, once the window was created (and with the panel on).
        #[cfg(feature = "ui")]
        pub(super) fn ui(&self) -> Option<&crate::ui::DemoUi> {
            self.state.as_ref().and_then(|s| s.ui.as_ref()).map(|(u, _)| u)
        }

        /// See [`WindowApp::ui`].
        #[cfg(feature = "ui")]
        pub(super) fn ui_mut(&mut self) -> Option<&mut crate::ui::DemoUi> {
            self.state.as_mut().and_then(|s| s.ui.as_mut()).map(|(u, _)| u)
        }

        /// The window's inner size in pixels, once created.
        pub(super) fn size(&self) -> Option<(u32, u32)> {
            self.state.as_ref().map(|s| {
                let size = s.window.inner_size();
                (size.width, size.height)
            })
        }

        fn create(&self, el: &ActiveEventLoop) -> Result<State<S>, DemoError> {
            let attrs = Window::default_attributes()
                .with_title(S::NAME)
                .with_inner_size(PhysicalSize::new(self.args.width, self.args.height));
            let window = Arc::new(el.create_window(attrs).map_err(|e| DemoError::Window(e.to_string()))?);
            // The context keeps the window alive until its surface is destroyed.
            let ctx =
                Context::new(&ContextDesc { validation: self.args.validation_on(), window: Some(window.clone()) })?;
            let format = swapchain::surface_format(&ctx)?;
            let mut renderer = Renderer::new(&ctx, format.format)?;
            let size = window.inner_size();
            let swapchain = Swapchain::new(&ctx, size.width, size.height)?;
            let app = App::<S>::new(&mut renderer, &self.args)?;
            #[cfg(feature = "ui")]
            let ui = self.args.ui_on().then(|| {
                let demo_ui = crate::ui::DemoUi::new(self.still_ui);
                let input = egui_winit::State::new(
                    demo_ui.ctx.clone(),
                    anim_render_vk::ui::egui::ViewportId::ROOT,
                    &*window,
                    Some(window.scale_factor() as f32),
                    None,
                    Some(ctx.limits().max_image_dimension2_d as usize),
                );
                (demo_ui, input)
            });
            let now = Instant::now();
            Ok(State {
                #[cfg(feature = "ui")]
                ui,
                app,
                swapchain,
                renderer,
                ctx,
                window,
                last: now,
                title_at: now,
                frame_ms: 0.0,
                dragging: false,
                cursor: None,
            })
        }

        fn fail(&mut self, el: &ActiveEventLoop, e: DemoError) {
            self.error.get_or_insert(e);
            el.exit();
        }

        fn redraw(&mut self, el: &ActiveEventLoop) -> Result<(), DemoError> {
            let Some(st) = self.state.as_mut() else { return Ok(()) };
            let now = Instant::now();
            let dt = self.fixed_dt.unwrap_or_else(|| now.duration_since(st.last).as_secs_f32().min(0.1));
            st.last = now;
            self.redraws += 1;
            #[cfg(feature = "ui")]
            if let Some((demo_ui, input)) = &mut st.ui {
                let size = st.window.inner_size();
                let mut raw = input.take_egui_input(&st.window);
                // Events a session queued come after the window's own.
                raw.events.extend(demo_ui.take_events());
                let mut output = demo_ui.run(&mut st.app.scene, &st.app.orbit, (size.width, size.height), raw);
                input.handle_platform_output(&st.window, std::mem::take(&mut output.platform_output));
                st.renderer.set_ui(&demo_ui.ctx, output)?;
                demo_ui.timings.cpu("ui", now.elapsed().as_secs_f32() * 1e3);
            }
            let start = Instant::now();
            // The first frame shows the start time, as headless runs do.
            st.app.step(&mut st.renderer, if self.redraws == 1 { 0.0 } else { dt })?;
            let update_ms = start.elapsed().as_secs_f32() * 1e3;
            let start = Instant::now();
            let presented = st.swapchain.draw(&mut st.renderer, &st.app.frame)?;
            let render_ms = start.elapsed().as_secs_f32() * 1e3;
            #[cfg(feature = "ui")]
            if let Some((demo_ui, _)) = &mut st.ui {
                demo_ui.timings.cpu("update", update_ms);
                demo_ui.timings.cpu("render", render_ms);
                if let Some(stats) = st.renderer.frame_stats() {
                    demo_ui.timings.gpu(stats);
                }
            }
            let _ = (update_ms, render_ms);
            if presented {
                self.frames += 1;
            } else {
                // Minimized (or the swapchain was just recreated): don't spin.
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            let ms = dt * 1000.0;
            st.frame_ms = if st.frame_ms == 0.0 { ms } else { st.frame_ms * 0.9 + ms * 0.1 };
            if now.duration_since(st.title_at).as_secs_f32() > 0.25 {
                st.title_at = now;
                st.window.set_title(&format!(
                    "{} | {} | {:.2} ms ({:.0} fps) | {} | drag/arrows orbit, wheel zoom, Esc quit",
                    S::NAME,
                    st.app.scene.status(),
                    st.frame_ms,
                    1000.0 / st.frame_ms.max(1e-3),
                    title_controls::<S>()
                ));
            }
            if self.args.exercise_resize {
                let (w, h) = (self.args.width, self.args.height);
                match self.frames {
                    2 => drop(st.window.request_inner_size(PhysicalSize::new(w * 3 / 4, h * 3 / 4))),
                    4 => drop(st.window.request_inner_size(PhysicalSize::new(w, h))),
                    _ => {}
                }
            }
            if self.args.frames.is_some_and(|n| self.frames >= n) {
                #[cfg(feature = "ui")]
                let panel = st.renderer.ui_triangles();
                #[cfg(not(feature = "ui"))]
                let panel = 0;
                println!(
                    "{}: presented {} frame(s) on {}, swapchain created {} time(s), last {}x{}, panel of {} triangle(s)",
                    S::NAME,
                    self.frames,
                    st.ctx.device_name(),
                    st.swapchain.creations(),
                    st.swapchain.extent().width,
                    st.swapchain.extent().height,
                    panel
                );
                el.exit();
            }
            Ok(())
        }

        pub(super) fn validation(&self) -> Result<(), DemoError> {
            self.state.as_ref().map_or(Ok(()), |s| check_validation(&s.ctx))
        }
    }

    impl<S: Scene> ApplicationHandler for WindowApp<S> {
        fn resumed(&mut self, el: &ActiveEventLoop) {
            if self.state.is_none() {
                match self.create(el) {
                    Ok(s) => self.state = Some(s),
                    Err(e) => self.fail(el, e),
                }
            }
        }

        fn window_event(&mut self, el: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
            if let WindowEvent::RedrawRequested = event {
                if self.wanted.is_some_and(|w| self.redraws >= w) {
                    // A session draws only the frames it asked for.
                    return;
                }
                if let Err(e) = self.redraw(el) {
                    self.fail(el, e);
                }
                return;
            }
            let Some(st) = self.state.as_mut() else { return };
            // The panel sees every event first; what it uses (a click on a widget, typing in
            // a field) does not reach the camera or the scene's keys.
            #[cfg(feature = "ui")]
            if let Some((_, input)) = &mut st.ui
                && input.on_window_event(&st.window, &event).consumed
            {
                if matches!(event, WindowEvent::MouseInput { state: ElementState::Released, .. }) {
                    st.dragging = false;
                }
                return;
            }
            match event {
                WindowEvent::CloseRequested => el.exit(),
                WindowEvent::DroppedFile(path) => st.app.scene.file_dropped(&path),
                WindowEvent::Resized(size) => st.swapchain.resized(size.width, size.height),
                WindowEvent::KeyboardInput { event, .. } if event.state == ElementState::Released => {
                    let key = match &event.logical_key {
                        WKey::Named(NamedKey::Space) => Some(Key::Space),
                        WKey::Named(NamedKey::Tab) => Some(Key::Tab),
                        WKey::Named(NamedKey::Shift) => Some(Key::Shift),
                        WKey::Character(c) => c.chars().next().map(|ch| Key::Char(ch.to_ascii_lowercase())),
                        _ => None,
                    };
                    if let Some(k) = key {
                        st.app.scene.key_released(k);
                    }
                }
                WindowEvent::MouseInput { state: ElementState::Pressed, button: MouseButton::Right, .. } => {
                    st.app.scene.key(Key::Mouse);
                }
                WindowEvent::KeyboardInput { event, .. } if event.state == ElementState::Pressed => {
                    let o = &mut st.app.orbit;
                    match &event.logical_key {
                        WKey::Named(NamedKey::Escape) => el.exit(),
                        WKey::Named(NamedKey::ArrowLeft) => o.rotate(-0.1, 0.0),
                        WKey::Named(NamedKey::ArrowRight) => o.rotate(0.1, 0.0),
                        WKey::Named(NamedKey::ArrowUp) => o.rotate(0.0, 0.1),
                        WKey::Named(NamedKey::ArrowDown) => o.rotate(0.0, -0.1),
                        WKey::Named(NamedKey::PageUp) => o.zoom(0.9),
                        WKey::Named(NamedKey::PageDown) => o.zoom(1.0 / 0.9),
                        WKey::Named(NamedKey::Home) => o.reset(),
                        WKey::Named(NamedKey::Space) => st.app.scene.key(Key::Space),
                        WKey::Named(NamedKey::Tab) => st.app.scene.key(Key::Tab),
                        WKey::Named(NamedKey::Shift) => st.app.scene.key(Key::Shift),
                        WKey::Character(c) => {
                            if let Some(ch) = c.chars().next() {
                                st.app.scene.key(Key::Char(ch.to_ascii_lowercase()));
                            }
                        }
                        _ => {}
                    }
                }
                WindowEvent::MouseInput { state, button: MouseButton::Left, .. } => {
                    st.dragging = state == ElementState::Pressed;
                }
                WindowEvent::CursorMoved { position, .. } => {
                    if let (true, Some((x, y))) = (st.dragging, st.cursor) {
                        st.app.orbit.rotate(-(position.x - x) as f32 * 0.01, (position.y - y) as f32 * 0.01);
                    }
                    st.cursor = Some((position.x, position.y));
                }
                WindowEvent::MouseWheel { delta, .. } => {
                    let d = match delta {
                        MouseScrollDelta::LineDelta(_, y) => y,
                        MouseScrollDelta::PixelDelta(p) => p.y as f32 / 40.0,
                    };
                    st.app.orbit.zoom(0.9f32.powf(d));
                }
                _ => {}
            }
        }

        fn about_to_wait(&mut self, el: &ActiveEventLoop) {
            let Some(id) = self.state.as_ref().map(|s| s.window.id()) else { return };
            for event in std::mem::take(&mut self.queued) {
                self.window_event(el, id, event);
            }
            if let Some(st) = &self.state
                && self.wanted.is_none_or(|w| self.redraws < w)
            {
                st.window.request_redraw();
            }
        }
    }

    pub(super) fn event_loop() -> Result<EventLoop<()>, DemoError> {
        EventLoop::new().map_err(|e| {
            DemoError::Window(format!(
                "{e}\n  no window can be opened here: render headless with `--headless --frames N --out shot.png`, \
                 or run under `xvfb-run -a -s \"-screen 0 1280x720x24\"`"
            ))
        })
    }
}

/// Runs `S` in a window until it is closed (or `--frames` frames were presented).
///
/// # Errors
/// No display, Vulkan failures, scene failures, or validation messages.
pub fn run_window<S: Scene>(args: &CommonArgs) -> Result<(), DemoError> {
    let el = window::event_loop()?;
    let mut app = window::WindowApp::<S>::new(args);
    el.run_app(&mut app).map_err(|e| DemoError::Window(e.to_string()))?;
    if let Some(e) = app.error.take() {
        return Err(e);
    }
    app.validation()
}

/// A demo running frame by frame under a test's control: headless ([`Headless`]) or in a
/// window ([`Windowed`]). Tests written against it run the same steps both ways.
pub trait Session<S: Scene> {
    /// Runs the panel on the queued UI events (when on), advances by [`HEADLESS_DT`] (0
    /// for the first frame) and renders one frame.
    ///
    /// # Errors
    /// Scene, rendering or window failures.
    fn frame(&mut self) -> Result<(), DemoError>;

    /// The scene, its frame data and camera.
    fn app(&self) -> &App<S>;

    /// See [`Session::app`].
    fn app_mut(&mut self) -> &mut App<S>;

    /// The renderer.
    fn renderer(&self) -> &Renderer;

    /// The Vulkan context (its validation messages).
    fn context(&self) -> &Arc<Context>;

    /// The panel's egui side (`None` with `--no-ui`).
    #[cfg(feature = "ui")]
    fn ui(&self) -> Option<&crate::ui::DemoUi>;

    /// See [`Session::ui`].
    #[cfg(feature = "ui")]
    fn ui_mut(&mut self) -> Option<&mut crate::ui::DemoUi>;

    /// A file dropped onto the view: headless, straight to [`Scene::file_dropped`]; in a
    /// window, as the window's drop event, through its event handler.
    ///
    /// # Errors
    /// Window failures.
    fn drop_file(&mut self, path: &std::path::Path) -> Result<(), DemoError>;
}

impl<S: Scene> Session<S> for Headless<S> {
    fn frame(&mut self) -> Result<(), DemoError> {
        Headless::frame(self)
    }

    fn app(&self) -> &App<S> {
        &self.app
    }

    fn app_mut(&mut self) -> &mut App<S> {
        &mut self.app
    }

    fn renderer(&self) -> &Renderer {
        &self.renderer
    }

    fn context(&self) -> &Arc<Context> {
        &self.context
    }

    #[cfg(feature = "ui")]
    fn ui(&self) -> Option<&crate::ui::DemoUi> {
        self.ui.as_ref()
    }

    #[cfg(feature = "ui")]
    fn ui_mut(&mut self) -> Option<&mut crate::ui::DemoUi> {
        self.ui.as_mut()
    }

    fn drop_file(&mut self, path: &std::path::Path) -> Result<(), DemoError> {
        self.app.scene.file_dropped(path);
        Ok(())
    }
}

/// A demo in an X11 window (on Linux; under `xvfb-run` in the tests) driven frame by frame
/// as [`Headless`] is: the window's event loop is pumped until each frame is drawn and
/// presented, every frame advances by [`HEADLESS_DT`] (0 for the first), and the panel's
/// input is the window's own events followed by those queued with
/// [`crate::ui::DemoUi::push_event`]. Only one window event loop may exist in a process
/// (winit's rule), so a process holds one session at a time; it may run on any thread.
#[cfg(target_os = "linux")]
pub struct Windowed<S: Scene> {
    app: window::WindowApp<S>,
    event_loop: winit::event_loop::EventLoop<()>,
}

#[cfg(target_os = "linux")]
impl<S: Scene> Windowed<S> {
    /// How long a frame may take before the session gives up, seconds.
    const FRAME_TIMEOUT: f32 = 60.0;

    /// Opens the window (`args.width × args.height`) and creates the renderer and scene;
    /// `--frames` is ignored (the session decides when to stop).
    ///
    /// # Errors
    /// No X11 display, Vulkan or scene failures.
    pub fn new(args: &CommonArgs) -> Result<Self, DemoError> {
        use winit::platform::x11::EventLoopBuilderExtX11 as _;
        let event_loop = winit::event_loop::EventLoop::builder()
            .with_x11()
            .with_any_thread(true)
            .build()
            .map_err(|e| DemoError::Window(format!("no X11 display for the window: {e}")))?;
        let mut args = args.clone();
        args.frames = None;
        let mut app = window::WindowApp::new(&args);
        (app.fixed_dt, app.still_ui, app.wanted) = (Some(HEADLESS_DT), true, Some(0));
        let mut session = Self { app, event_loop };
        session.pump_until(|a| a.app().is_some())?;
        Ok(session)
    }

    fn pump_until(&mut self, done: impl Fn(&window::WindowApp<S>) -> bool) -> Result<(), DemoError> {
        use winit::platform::pump_events::{EventLoopExtPumpEvents as _, PumpStatus};
        let start = Instant::now();
        loop {
            let status = self.event_loop.pump_app_events(Some(std::time::Duration::from_millis(2)), &mut self.app);
            if let Some(e) = self.app.error.take() {
                return Err(e);
            }
            if done(&self.app) {
                return Ok(());
            }
            if let PumpStatus::Exit(code) = status {
                return Err(DemoError::Window(format!("the window's event loop ended (code {code})")));
            }
            if start.elapsed().as_secs_f32() > Self::FRAME_TIMEOUT {
                return Err(DemoError::Window(format!("no frame drawn in {} s", Self::FRAME_TIMEOUT)));
            }
        }
    }

    /// The window's size in pixels.
    pub fn size(&self) -> (u32, u32) {
        self.app.size().expect("Windowed::new returns once the window exists")
    }

    /// Ends the session: validation checked, then the window closed.
    ///
    /// # Errors
    /// Validation messages.
    pub fn finish(self) -> Result<(), DemoError> {
        self.app.validation()
    }
}

#[cfg(target_os = "linux")]
impl<S: Scene> Session<S> for Windowed<S> {
    fn frame(&mut self) -> Result<(), DemoError> {
        let target = self.app.redraws + 1;
        self.app.wanted = Some(target);
        self.pump_until(|a| a.redraws >= target)
    }

    fn app(&self) -> &App<S> {
        self.app.app().expect("Windowed::new returns once the window exists")
    }

    fn app_mut(&mut self) -> &mut App<S> {
        self.app.app_mut().expect("Windowed::new returns once the window exists")
    }

    fn renderer(&self) -> &Renderer {
        self.app.renderer().expect("Windowed::new returns once the window exists").0
    }

    fn context(&self) -> &Arc<Context> {
        self.app.renderer().expect("Windowed::new returns once the window exists").1
    }

    #[cfg(feature = "ui")]
    fn ui(&self) -> Option<&crate::ui::DemoUi> {
        self.app.ui()
    }

    #[cfg(feature = "ui")]
    fn ui_mut(&mut self) -> Option<&mut crate::ui::DemoUi> {
        self.app.ui_mut()
    }

    fn drop_file(&mut self, path: &std::path::Path) -> Result<(), DemoError> {
        self.app.queued.push(winit::event::WindowEvent::DroppedFile(path.to_path_buf()));
        self.pump_until(|a| a.queued.is_empty())
    }
}
