//! Chapter 13: the mannequin walks a circle over uneven ground (a [`HeightField`] drawn as
//! a shaded mesh with a grid on it) and [`FootGrounding`] keeps its planted feet on the
//! ground: per leg a ray down through the animated ankle finds the ground, the character
//! is lowered so the lower foot can reach, and two-bone IK bends each leg onto the blend
//! of its "current" and "future" targets by the clip's `foot_contact_*` curve. `i` turns
//! the grounding off: the walk then floats over dips and sinks into bumps.
//!
//! The vertical offset the grounding applies is smoothed on the way up (it drops at once,
//! so a foot never has to over-reach, and rises with a time constant of [`RISE_TIME`]),
//! so the body does not pop when a foot lifts off a low spot.
//!
//! The panel turns the grounding on or off and sets its settings: the ankle's and the
//! toe's height above the sole, how far below the sole the rays look for ground, the
//! body's vertical placement, toe alignment and the leg solver.

use crate::DemoError;
use crate::app::{CommonArgs, Key, Scene};
use crate::character::Character;
use crate::stage::{BODY_COLOR, STAGE_CONTROLS, Stage};
use anim_core::clip::TimePolicy;
use anim_core::skin::Mesh;
use anim_ik::{FootGrounding, FootSettings, HeightField, Leg};
use anim_mannequin::{ANKLE_HEIGHT, BALL_HEIGHT};
use anim_math::{Mat4, Quat, Transform, Vec3};
use anim_render_vk::{Coloring, FrameData, MeshId, Renderer};

/// Radius of the circle the character walks, metres.
pub const PATH_RADIUS: f32 = 3.0;
/// Walking speed of the mannequin's `walk`: a planted foot slides back 2 × 0.22 m over the
/// half cycle (0.5 s) it is planted, so moving the character forward at 0.88 m/s keeps
/// planted feet still on the ground.
pub const WALK_SPEED: f32 = 0.88;
/// Time constant of the smoothed rise of the body, seconds.
pub const RISE_TIME: f32 = 0.15;
/// Half size of the ground, metres.
pub const GROUND_HALF: f32 = 5.0;
/// Ground cell size, metres.
pub const GROUND_CELL: f32 = 0.2;
/// Angle on the path at time 0, radians (the character starts at +z, walking towards −x).
pub const START_ANGLE: f32 = std::f32::consts::FRAC_PI_2;

/// Height of the uneven ground at `(x, z)`: two gentle waves, about ±20 cm.
pub fn ground_height(x: f32, z: f32) -> f32 {
    0.14 * (0.9 * x + 0.3).sin() * (0.7 * z).cos() + 0.06 * (2.1 * z + 1.3 * x).sin()
}

/// The ground: [`ground_height`] sampled every [`GROUND_CELL`] over ±[`GROUND_HALF`].
///
/// # Errors
/// Never for the built-in sizes (kept for the library's signature).
pub fn ground() -> Result<HeightField, DemoError> {
    ground_of(GROUND_HALF, GROUND_CELL)
}

/// [`ground_height`] sampled every `cell` metres over ±`half`.
///
/// # Errors
/// A size the height field refuses (not for positive finite sizes).
pub fn ground_of(half: f32, cell: f32) -> Result<HeightField, DemoError> {
    let n = (2.0 * half / cell).round() as usize + 1;
    Ok(HeightField::from_fn(-half, -half, cell, n, n, ground_height)?)
}

/// The ground as a mesh (the same grid and diagonals as the height field) coloured by
/// height, and the number of samples a side.
pub fn ground_mesh() -> (Mesh, Vec<[f32; 4]>, usize) {
    ground_mesh_of(GROUND_HALF, GROUND_CELL)
}

/// [`ground_mesh`] for the ground of [`ground_of`]`(half, cell)`.
pub fn ground_mesh_of(half: f32, cell: f32) -> (Mesh, Vec<[f32; 4]>, usize) {
    let n = (2.0 * half / cell).round() as usize + 1;
    let mut mesh = Mesh::default();
    let mut colors = Vec::with_capacity(n * n);
    for k in 0..n {
        for i in 0..n {
            let (x, z) = (-half + i as f32 * cell, -half + k as f32 * cell);
            let h = ground_height(x, z);
            mesh.positions.push(Vec3::new(x, h, z));
            let c = ((h + 0.2) / 0.4).clamp(0.0, 1.0);
            let checker = if ((i / 5) + (k / 5)) % 2 == 0 { 1.0 } else { 0.9 };
            colors.push([(0.32 + 0.3 * c) * checker, (0.48 + 0.12 * c) * checker, (0.30 + 0.05 * c) * checker, 1.0]);
        }
    }
    for k in 0..n as u32 - 1 {
        for i in 0..n as u32 - 1 {
            let v = |i: u32, k: u32| k * n as u32 + i;
            // Split along the (i, k)–(i+1, k+1) diagonal, as the height field does.
            mesh.indices.extend_from_slice(&[v(i, k), v(i, k + 1), v(i + 1, k + 1)]);
            mesh.indices.extend_from_slice(&[v(i, k), v(i + 1, k + 1), v(i + 1, k)]);
        }
    }
    mesh.normals = mesh.smooth_normals();
    (mesh, colors, n)
}

/// The mannequin's legs by joint name (`thigh_*`, `calf_*`, `foot_*`, `ball_*`), left then
/// right, with their contact curves.
///
/// # Errors
/// A skeleton without those joints.
pub fn legs(ch: &Character) -> Result<Vec<Leg>, DemoError> {
    ["l", "r"]
        .iter()
        .map(|side| {
            let find = |base: &str| {
                let name = format!("{base}_{side}");
                ch.skeleton.find(&name).ok_or_else(|| {
                    DemoError::Args(format!("{}: foot IK needs the mannequin's leg joints, no {name}", ch.name))
                })
            };
            Ok(Leg {
                hip: find("thigh")?,
                knee: find("calf")?,
                ankle: find("foot")?,
                toe: find("ball")?,
                contact_curve: format!("foot_contact_{side}"),
            })
        })
        .collect()
}

/// Position on the path and facing at path angle `angle`: the character walks the circle
/// counter-clockwise seen from above (towards increasing angle).
pub fn path_frame(angle: f32) -> (f32, f32, Quat) {
    let (s, c) = angle.sin_cos();
    // The character faces +z; turning by −angle about y makes it face (−sin, 0, cos).
    (PATH_RADIUS * c, PATH_RADIUS * s, Quat::from_axis_angle(&Vec3::y_axis(), -angle))
}

/// The walking character: walk sampled, placed on the path, grounded. Its stage is
/// uploaded by the scene; without that it poses but draws no mesh (as in tests).
#[derive(Debug)]
pub struct Walker {
    /// The character and its posed state (after grounding).
    pub stage: Stage,
    /// The ground.
    pub ground: HeightField,
    /// The grounding pass.
    pub feet: FootGrounding,
    /// The walk clip.
    pub clip: usize,
    /// Time in the walk.
    pub time: f32,
    /// Angle on the path, radians.
    pub angle: f32,
    /// Where the character stands (after the grounding's vertical offset).
    pub placement: Transform,
    /// Grounding on.
    pub ik: bool,
    /// Smoothed vertical offset (≤ 0), metres.
    pub lift: f32,
    /// Contact weights of the last step, left and right.
    pub contacts: [f32; 2],
}

impl Walker {
    /// The walker at walk time `start`.
    ///
    /// # Errors
    /// A character without the mannequin's legs or a walk.
    pub fn new(character: Character, start: f32) -> Result<Self, DemoError> {
        let clip = character
            .find_clip_like("walk")
            .ok_or_else(|| DemoError::Args(format!("{}: no walk clip", character.name)))?;
        let settings = FootSettings { ankle_height: ANKLE_HEIGHT, toe_height: BALL_HEIGHT, ..FootSettings::default() };
        let feet = FootGrounding::new(&character.skeleton, legs(&character)?, settings)?;
        let mut w = Self {
            stage: Stage::with_character(character)?,
            ground: ground()?,
            feet,
            clip,
            time: start,
            angle: START_ANGLE + WALK_SPEED * start / PATH_RADIUS,
            placement: Transform::IDENTITY,
            ik: true,
            lift: 0.0,
            contacts: [1.0; 2],
        };
        w.pose()?;
        Ok(w)
    }

    /// Advances by `dt` seconds along the path and poses.
    ///
    /// # Errors
    /// Sampling or grounding failures.
    pub fn step(&mut self, dt: f32) -> Result<(), DemoError> {
        self.time += dt;
        self.angle += WALK_SPEED * dt / PATH_RADIUS;
        self.pose()?;
        // Rise slowly, drop at once (the next `apply` lowers as far as it must).
        self.lift *= (-dt / RISE_TIME).exp();
        Ok(())
    }

    /// Samples the walk at the current time, places and grounds it.
    fn pose(&mut self) -> Result<(), DemoError> {
        let (ch, posed) = (&self.stage.character, &mut self.stage.posed);
        let clip = &ch.clips[self.clip];
        posed.pose.locals_mut().copy_from_slice(ch.skeleton.rest_pose().locals());
        clip.sample(self.time, TimePolicy::Wrap, &mut posed.pose)?;
        self.feet.sample_contacts(clip, self.time, TimePolicy::Wrap, &mut self.contacts)?;
        let (x, z, facing) = path_frame(self.angle);
        let base = self.ground.height(x, z).unwrap_or(0.0);
        let lift = if self.ik { self.lift } else { 0.0 };
        self.placement = Transform::new(Vec3::new(x, base + lift, z), facing, Vec3::new(1.0, 1.0, 1.0));
        if self.ik {
            let offset =
                self.feet.apply(&ch.skeleton, &mut posed.pose, &mut self.placement, &self.contacts, &self.ground)?;
            self.lift += offset;
        }
        posed.update(ch)
    }

    /// World position of skeleton joint `joint` (after the last step).
    pub fn joint_world(&self, joint: usize) -> Vec3 {
        self.placement.transform_point(&self.stage.posed.world[joint].column(3).xyz())
    }

    /// Height of each ankle above the ground under it, left and right (`NaN` off the ground).
    pub fn ankle_clearance(&self) -> [f32; 2] {
        let mut out = [f32::NAN; 2];
        for (o, leg) in out.iter_mut().zip(self.feet.legs()) {
            let a = self.joint_world(leg.ankle);
            *o = self.ground.height(a.x, a.z).map_or(f32::NAN, |h| a.y - h);
        }
        out
    }
}

/// The scene.
#[derive(Debug)]
pub struct FootIkDemo {
    /// The walking character (its stage holds the meshes, method and backend).
    pub walker: Walker,
    ground_id: MeshId,
    samples: usize,
    /// The camera follows the character.
    pub follow: bool,
    /// Time stands still.
    pub paused: bool,
    focus_at: Vec3,
    start_angle: f32,
}

impl Scene for FootIkDemo {
    const NAME: &'static str = "ch13_foot_ik";
    const ABOUT: &'static str =
        "The mannequin walks a circle over uneven ground; foot grounding (two-bone IK) plants its feet.";
    const CONTROLS: &'static [(&'static str, &'static str)] = &[
        ("i", "foot IK on / off"),
        ("f", "camera follows the character"),
        STAGE_CONTROLS[0],
        STAGE_CONTROLS[1],
        STAGE_CONTROLS[2],
        ("space", "pause"),
    ];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let character = Character::load(args.model.as_deref())?;
        let mut walker = Walker::new(character, args.start)?;
        walker.stage.upload(renderer, &Coloring::Uniform(BODY_COLOR))?;
        (walker.stage.method, walker.stage.backend) = (args.method, args.backend);
        let (mesh, colors, samples) = ground_mesh();
        let ground_id = renderer.add_mesh(&mesh, &Coloring::PerVertex(colors))?;
        let focus_at = walker.placement.translation + Vec3::new(0.0, 0.75, 0.0);
        Ok(Self { start_angle: walker.angle, walker, ground_id, samples, follow: true, paused: false, focus_at })
    }

    fn focus(&self) -> (Vec3, f32) {
        (self.focus_at, 1.15)
    }

    fn view_angles(&self) -> (f32, f32) {
        // From the character's left, a little ahead of it.
        (-0.75, 0.15)
    }

    fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
        self.walker.step(if self.paused { 0.0 } else { dt })?;
        let w = &mut self.walker;
        if self.follow {
            // Keep the orbit relative to the character: moved with it and turned with its
            // heading.
            let turn = Quat::from_axis_angle(&Vec3::y_axis(), -(w.angle - self.start_angle));
            let target = w.placement.translation + Vec3::new(0.0, 0.75, 0.0);
            let offset = turn * (frame.camera.eye - frame.camera.target);
            frame.camera.target += target - self.focus_at;
            frame.camera.eye = frame.camera.target + offset;
        }
        // Light from above, over the viewer's shoulder, so the side we see is lit.
        let view = (frame.camera.eye - frame.camera.target).normalize();
        frame.camera.light_dir = (view + Vec3::new(0.0, 1.3, 0.0) + view.cross(&Vec3::y()) * 0.4).normalize();
        let model = w.placement.to_matrix();
        w.stage.draw(frame, &model)?;
        frame.add_static(self.ground_id, Mat4::identity(), [1.0; 3]);
        // Grid lines on the ground every metre (every 5 samples), lifted a little.
        let n = self.samples;
        let at = |i: usize, k: usize| {
            let (x, z) = (-GROUND_HALF + i as f32 * GROUND_CELL, -GROUND_HALF + k as f32 * GROUND_CELL);
            Vec3::new(x, ground_height(x, z) + 0.004, z)
        };
        let grid = [0.2, 0.26, 0.18, 1.0];
        for a in (0..n).step_by(5) {
            for b in 0..n - 1 {
                frame.line(at(a, b), at(a, b + 1), grid);
                frame.line(at(b, a), at(b + 1, a), grid);
            }
        }
        // The path.
        let segs = 120;
        let p = |k: usize| {
            let (x, z, _) = path_frame(k as f32 / segs as f32 * std::f32::consts::TAU);
            Vec3::new(x, w.ground.height(x, z).unwrap_or(0.0) + 0.006, z)
        };
        for k in 0..segs {
            frame.line(p(k), p(k + 1), [0.9, 0.8, 0.5, 1.0]);
        }
        // Ankle targets: green while planted, orange in the air.
        if w.ik {
            for r in w.feet.reports() {
                let c = if r.contact > 0.5 { [0.3, 1.0, 0.4, 1.0] } else { [1.0, 0.6, 0.2, 1.0] };
                let s = 0.06;
                for a in [Vec3::x(), Vec3::z()] {
                    frame.overlay_line(r.target - a * s, r.target + a * s, c);
                }
            }
        }
        Ok(())
    }

    fn key(&mut self, key: Key) {
        if self.walker.stage.key(key) {
            return;
        }
        match key {
            Key::Char('i') => self.walker.ik = !self.walker.ik,
            Key::Char('f') => self.follow = !self.follow,
            Key::Space => self.paused = !self.paused,
            _ => {}
        }
    }

    #[cfg(feature = "ui")]
    fn panel(&mut self, ui: &mut anim_render_vk::ui::egui::Ui, _view: &crate::ui::UiView<'_>) {
        use crate::widgets::{check, choice, grid, section, slider, value};
        use anim_ik::LegSolver;
        let w = &mut self.walker;
        grid(ui, "foot-grid", |ui| {
            check(ui, "foot IK", "foot_ik", &mut w.ik, "ground the feet (i)");
            let s = w.feet.settings_mut();
            let cm = |v: f32| format!("{:.1} cm", v * 100.0);
            slider(ui, "ankle offset", "ankle", &mut s.ankle_height, 0.0..=0.2, |s| s.step_by(0.001), cm);
            slider(ui, "toe offset", "toe", &mut s.toe_height, 0.0..=0.1, |s| s.step_by(0.001), cm);
            slider(ui, "ray below sole", "ray", &mut s.search_below, 0.0..=1.5, |s| s.step_by(0.01), cm);
            check(ui, "body", "adjust_root", &mut s.adjust_root, "lowered to the lower foot");
            check(ui, "toes", "align_toes", &mut s.align_toes, "feet follow the ground's slope");
            #[derive(Clone, Copy, PartialEq)]
            enum Kind {
                TwoBone,
                Ccd,
                Fabrik,
            }
            let mut kind = match s.solver {
                LegSolver::TwoBone => Kind::TwoBone,
                LegSolver::Ccd(_) => Kind::Ccd,
                LegSolver::Fabrik { .. } => Kind::Fabrik,
            };
            if choice(
                ui,
                "leg solver",
                &mut kind,
                &[
                    (Kind::TwoBone, "two-bone", "leg:two-bone"),
                    (Kind::Ccd, "CCD", "leg:ccd"),
                    (Kind::Fabrik, "FABRIK", "leg:fabrik"),
                ],
            ) {
                s.solver = match kind {
                    Kind::TwoBone => LegSolver::TwoBone,
                    Kind::Ccd => LegSolver::Ccd(anim_ik::CcdSolver::new(100, 1e-4)),
                    Kind::Fabrik => LegSolver::Fabrik { iterations: 100, threshold: 1e-4 },
                };
            }
            check(ui, "camera", "follow", &mut self.follow, "follows the character (f)");
            check(ui, "pause", "pause", &mut self.paused, "stand still (space)");
        });
        section(ui, "Feet", "foot-state", true, |ui| {
            grid(ui, "foot-state-grid", |ui| {
                let clearance = w.ankle_clearance();
                for (k, side) in ["left", "right"].into_iter().enumerate() {
                    let state = if w.contacts[k] > 0.5 { "planted" } else { "swing" };
                    value(ui, side, format!("{state} ({:.2}), ankle {:.1} cm up", w.contacts[k], clearance[k] * 100.0));
                }
                let t = w.placement.translation;
                let body = t.y - w.ground.height(t.x, t.z).unwrap_or(0.0);
                value(ui, "body", format!("{:+.1} cm", body * 100.0));
            });
        });
        ui.separator();
        w.stage.panel(ui);
    }

    fn status(&self) -> String {
        let w = &self.walker;
        let [l, r] = w.ankle_clearance();
        let state = |c: f32| if c > 0.5 { "planted" } else { "swing" };
        format!(
            "foot IK {} | left {} ankle {:.1} cm | right {} ankle {:.1} cm | body {:+.1} cm | {}",
            if w.ik { "on" } else { "off" },
            state(w.contacts[0]),
            l * 100.0,
            state(w.contacts[1]),
            r * 100.0,
            (w.placement.translation.y
                - w.ground.height(w.placement.translation.x, w.placement.translation.z).unwrap_or(0.0))
                * 100.0,
            w.stage.status()
        )
    }
}
