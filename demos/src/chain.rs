//! The IK tentacle shared by the chapter 13 chain demos ([`crate::scenes::ch13_ccd`] and
//! [`crate::scenes::ch13_fabrik`]): a chain of [`JOINTS`] joints rooted on the ground
//! reaching for a target that flies along a Lissajous path ([`target_at`]), with
//! constraints ([`Limits`]) and the scene that draws it, [`ChainDemo`], generic over the
//! [`ChainSolver`] it starts with.
//!
//! The panel switches the solver (CCD or FABRIK), sets the iterations and the threshold,
//! the limits and the target (sliders, or drag the target in the view: it moves in the
//! plane through it that faces the camera, and stops following its path).

use crate::app::{CommonArgs, Key, Scene};
use crate::{DemoError, stage};
use anim_core::skin::Mesh;
use anim_ik::{CcdSolver, Constraint, FabrikSolver, IkChain, IkError, SolveResult};
use anim_math::{Mat4, Quat, Transform, Vec3, quat};
use anim_render_vk::{Coloring, FrameData, MeshId, Renderer};
use std::f32::consts::PI;
use std::marker::PhantomData;

/// Joints in the chain (the last is the end effector).
pub const JOINTS: usize = 9;
/// Bone lengths, base to tip (sum: [`reach`]).
pub const BONE_LENGTHS: [f32; JOINTS - 1] = [0.45, 0.4, 0.36, 0.32, 0.28, 0.25, 0.22, 0.2];
/// Largest lean of the first bone from straight up, radians (40°).
pub const ROOT_CONE: f32 = 40.0 * PI / 180.0;
/// Largest angle between a bone and its parent's bone at the ball-and-socket joints (45°).
pub const BALL_CONE: f32 = 45.0 * PI / 180.0;
/// The chain joint that is a hinge.
pub const HINGE_JOINT: usize = 3;
/// Limit of the hinge angle, both ways (80°).
pub const HINGE_LIMIT: f32 = 80.0 * PI / 180.0;
/// Iterations each solver may use per frame.
pub const ITERATIONS: usize = 30;
/// Distance that counts as reached, metres.
pub const THRESHOLD: f32 = 1e-3;
/// Centre of the target's path.
pub const PATH_CENTRE: Vec3 = Vec3::new(0.0, 1.35, 0.0);

/// Length of the straightened chain.
pub fn reach() -> f32 {
    BONE_LENGTHS.iter().sum()
}

/// The target at time `t`: a Lissajous curve around [`PATH_CENTRE`] (±1.0 in x, ±0.45
/// in y, ±0.8 in z), never farther than 2.2 m from the chain's base (the chain reaches
/// [`reach`] = 2.48 m).
pub fn target_at(t: f32) -> Vec3 {
    PATH_CENTRE + Vec3::new(1.0 * (0.7 * t).sin(), 0.45 * (1.1 * t).sin(), 0.8 * (0.5 * t + 0.4).cos())
}

/// The chain straight up from the origin.
///
/// # Errors
/// Never for the built-in lengths (kept for the library's signature).
pub fn straight_chain() -> Result<IkChain, IkError> {
    let mut locals = vec![Transform::IDENTITY];
    locals.extend(BONE_LENGTHS.iter().map(|&l| Transform::from_translation(Vec3::new(0.0, l, 0.0))));
    IkChain::from_transforms(Transform::IDENTITY, locals)
}

/// The constraint of chain joint `i` with the default [`Limits`] (the end effector's is
/// [`Constraint::Free`]).
pub fn constraint(i: usize) -> Constraint {
    Limits::default().constraint(i)
}

/// The tentacle's joint limits, radians (the panel changes them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Largest lean of the first bone from straight up ([`ROOT_CONE`]).
    pub root_cone: f32,
    /// Largest angle between a bone and its parent's bone at the ball joints ([`BALL_CONE`]).
    pub ball_cone: f32,
    /// Limit of the hinge, both ways ([`HINGE_LIMIT`]).
    pub hinge_limit: f32,
}

impl Default for Limits {
    fn default() -> Self {
        Self { root_cone: ROOT_CONE, ball_cone: BALL_CONE, hinge_limit: HINGE_LIMIT }
    }
}

impl Limits {
    /// The constraint of chain joint `i`: a cone about straight up for the first joint, the
    /// hinge at [`HINGE_JOINT`], a ball and socket elsewhere, free at the end effector.
    pub fn constraint(&self, i: usize) -> Constraint {
        match i {
            0 => Constraint::BallSocket { max_angle: self.root_cone, reference: Some(Vec3::y()) },
            HINGE_JOINT => Constraint::Hinge {
                axis: Vec3::x_axis(),
                reference: Quat::identity(),
                limits: Some((-self.hinge_limit, self.hinge_limit)),
            },
            i if i + 1 < JOINTS => Constraint::ball(self.ball_cone),
            _ => Constraint::Free,
        }
    }

    /// The limit of chain joint `i` (its cone, or the hinge's limit); `None` at the end.
    pub fn limit(&self, i: usize) -> Option<f32> {
        match i {
            0 => Some(self.root_cone),
            HINGE_JOINT => Some(self.hinge_limit),
            i if i + 1 < JOINTS => Some(self.ball_cone),
            _ => None,
        }
    }
}

/// Which solver the tentacle uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolverKind {
    /// Cyclic coordinate descent ([`CcdSolver`]).
    Ccd,
    /// Forward and backward reaching ([`FabrikSolver`]).
    Fabrik,
}

impl SolverKind {
    /// Short name for the title and the panel.
    pub fn label(self) -> &'static str {
        match self {
            Self::Ccd => "CCD",
            Self::Fabrik => "FABRIK",
        }
    }
}

/// What a demo of the tentacle starts with: its name and its solver (the panel switches
/// solvers at run time).
pub trait ChainSolver: std::fmt::Debug + Sized {
    /// Binary name of the demo.
    const NAME: &'static str;
    /// One-line description.
    const ABOUT: &'static str;
    /// Short name of the starting solver.
    const LABEL: &'static str;
    /// The starting solver.
    const KIND: SolverKind;
}

/// The tentacle without drawing: chain, solvers, limits, target clock, last result.
#[derive(Debug)]
pub struct Tentacle<S: ChainSolver> {
    /// The chain (solved in place frame after frame).
    pub chain: IkChain,
    /// The solver in use.
    pub kind: SolverKind,
    /// The CCD solver (its iterations and threshold are set from the tentacle's).
    pub ccd: CcdSolver,
    /// The FABRIK solver.
    pub fabrik: FabrikSolver,
    /// Iterations each solve may use ([`ITERATIONS`]).
    pub iterations: usize,
    /// Distance that counts as reached ([`THRESHOLD`]).
    pub threshold: f32,
    /// The joint limits (applied while [`Tentacle::constrained`]); change them with
    /// [`Tentacle::set_limits`].
    pub limits: Limits,
    /// Constraints are applied.
    pub constrained: bool,
    /// The target stands still (its clock stops; the panel and the view handle place it).
    pub paused: bool,
    /// Target clock, seconds.
    pub time: f32,
    /// The current target.
    pub target: Vec3,
    /// What the last solve did.
    pub result: SolveResult,
    solver: PhantomData<S>,
}

impl<S: ChainSolver> Tentacle<S> {
    /// The straight chain, constraints on, target at time `start`, `S`'s solver.
    ///
    /// # Errors
    /// Library errors (none expected for the built-in chain).
    pub fn new(start: f32) -> Result<Self, DemoError> {
        let mut t = Self {
            chain: straight_chain()?,
            kind: S::KIND,
            ccd: CcdSolver::new(ITERATIONS, THRESHOLD),
            fabrik: FabrikSolver::new(ITERATIONS, THRESHOLD),
            iterations: ITERATIONS,
            threshold: THRESHOLD,
            limits: Limits::default(),
            constrained: false,
            paused: false,
            time: start,
            target: target_at(start),
            result: SolveResult { solved: false, iterations: 0, distance: 0.0 },
            solver: PhantomData,
        };
        t.set_constrained(true)?;
        Ok(t)
    }

    /// Turns the constraints on or off.
    ///
    /// # Errors
    /// Library errors (none expected for the built-in constraints).
    pub fn set_constrained(&mut self, on: bool) -> Result<(), DemoError> {
        for i in 0..JOINTS {
            let c = if on { self.limits.constraint(i) } else { Constraint::Free };
            self.chain.set_constraint(i, c)?;
        }
        if on {
            // Start from a pose inside the limits.
            self.chain.apply_constraints();
        }
        self.constrained = on;
        Ok(())
    }

    /// New joint limits (applied at once when the constraints are on).
    ///
    /// # Errors
    /// Library errors (none expected for finite limits).
    pub fn set_limits(&mut self, limits: Limits) -> Result<(), DemoError> {
        self.limits = limits;
        if self.constrained { self.set_constrained(true) } else { Ok(()) }
    }

    /// Back to the straight chain (constraints kept).
    ///
    /// # Errors
    /// Library errors (none expected).
    pub fn reset(&mut self) -> Result<(), DemoError> {
        for (i, l) in straight_chain()?.locals().iter().enumerate() {
            self.chain.set_local(i, *l)?;
        }
        Ok(())
    }

    /// Advances the target along its path by `dt` (unless paused: then it stays where it
    /// is) and solves towards it with the current solver.
    ///
    /// # Errors
    /// A non-finite target.
    pub fn step(&mut self, dt: f32) -> Result<SolveResult, DemoError> {
        if !self.paused {
            self.time += dt;
            self.target = target_at(self.time);
        }
        // Start from last frame's solution: it becomes the chain's start pose (FABRIK turns
        // each joint from its start rotation, as it would from an animated pose).
        for i in 0..JOINTS {
            let l = self.chain.locals()[i];
            self.chain.set_local(i, l)?;
        }
        self.result = match self.kind {
            SolverKind::Ccd => {
                (self.ccd.iterations, self.ccd.threshold) = (self.iterations, self.threshold);
                self.ccd.solve(&mut self.chain, &self.target)?
            }
            SolverKind::Fabrik => {
                (self.fabrik.iterations, self.fabrik.threshold) = (self.iterations, self.threshold);
                self.fabrik.solve(&mut self.chain, &self.target)?
            }
        };
        Ok(self.result)
    }

    /// World rotation of chain joint `i`'s parent.
    fn parent_rotation(&self, i: usize) -> Quat {
        if i == 0 { self.chain.root().rotation } else { self.chain.worlds()[i - 1].rotation }
    }

    /// Angle between bone `i` (joint `i` to `i + 1`) and its ball constraint's reference,
    /// or the hinge angle of the hinge joint, radians; `None` for unconstrained joints.
    pub fn limit_angle(&self, i: usize) -> Option<f32> {
        let local = self.chain.locals().get(i)?;
        match self.limits.constraint(i) {
            Constraint::BallSocket { reference, .. } => {
                let r = reference.unwrap_or(local.translation);
                let bone = local.rotation * self.chain.locals().get(i + 1)?.translation;
                Some(quat::angle_between(&r, &bone))
            }
            Constraint::Hinge { axis, reference, .. } => {
                let q = (local.rotation * reference.inverse()).into_inner();
                let theta = 2.0 * q.imag().dot(&axis).atan2(q.w);
                Some(if theta > PI {
                    theta - 2.0 * PI
                } else if theta <= -PI {
                    theta + 2.0 * PI
                } else {
                    theta
                })
            }
            Constraint::Free => None,
        }
    }
}

/// A faceted bone shape from (0, 0, 0) to (0, 1, 0), widest at y = 0.18.
pub fn bone_mesh() -> Mesh {
    let w = 0.13;
    let mid = [Vec3::new(w, 0.18, 0.0), Vec3::new(0.0, 0.18, -w), Vec3::new(-w, 0.18, 0.0), Vec3::new(0.0, 0.18, w)];
    let (base, tip) = (Vec3::zeros(), Vec3::y());
    let mut mesh = Mesh::default();
    for k in 0..4 {
        let (a, b) = (mid[k], mid[(k + 1) % 4]);
        for tri in [[base, b, a], [tip, a, b]] {
            let n = (tri[1] - tri[0]).cross(&(tri[2] - tri[0])).normalize();
            for p in tri {
                mesh.indices.push(mesh.positions.len() as u32);
                mesh.positions.push(p);
                mesh.normals.push(n);
            }
        }
    }
    mesh
}

/// The demo scene.
#[derive(Debug)]
pub struct ChainDemo<S: ChainSolver> {
    /// The tentacle.
    pub tentacle: Tentacle<S>,
    bone: MeshId,
    /// Draw the limits.
    pub show_limits: bool,
    /// Draw the target's path.
    pub show_path: bool,
    toggle_constraints: bool,
    reset: bool,
    new_limits: Option<Limits>,
}

const GREEN: [f32; 4] = [0.35, 0.95, 0.45, 1.0];
const RED: [f32; 4] = [1.0, 0.3, 0.25, 1.0];

fn circle_basis(axis: &Vec3) -> (Vec3, Vec3) {
    let u = quat::any_orthogonal(axis).normalize();
    (u, axis.cross(&u).normalize())
}

impl<S: ChainSolver> ChainDemo<S> {
    fn draw_limits(&self, frame: &mut FrameData) {
        let t = &self.tentacle;
        let worlds = t.chain.worlds();
        for i in 0..JOINTS - 1 {
            let apex = worlds[i].translation;
            let size = BONE_LENGTHS[i] * 0.55;
            let at_limit = |angle: f32, max: f32| angle >= max - 2e-3;
            match t.limits.constraint(i) {
                Constraint::BallSocket { max_angle, reference } => {
                    let local_ref = reference.unwrap_or(t.chain.locals()[i].translation).normalize();
                    let axis = t.parent_rotation(i) * local_ref;
                    let color = if t.limit_angle(i).is_some_and(|a| at_limit(a, max_angle)) { RED } else { GREEN };
                    let (u, v) = circle_basis(&axis);
                    let (h, r) = (size * max_angle.cos(), size * max_angle.sin());
                    let centre = apex + axis * h;
                    let point = |k: usize| {
                        let a = 2.0 * PI * k as f32 / 20.0;
                        centre + (u * a.cos() + v * a.sin()) * r
                    };
                    for k in 0..20 {
                        frame.overlay_line(point(k), point(k + 1), color);
                    }
                    for k in (0..20).step_by(5) {
                        frame.overlay_line(apex, point(k), color);
                    }
                }
                Constraint::Hinge { axis, reference, limits } => {
                    let (lo, hi) = limits.unwrap_or((-PI, PI));
                    let p = t.parent_rotation(i);
                    let bone = t.chain.locals()[i + 1].translation.normalize() * (size * 1.5);
                    let dir = |theta: f32| apex + p * (Quat::from_axis_angle(&axis, theta) * reference * bone);
                    let color = if t.limit_angle(i).is_some_and(|a| at_limit(a.abs(), hi)) { RED } else { GREEN };
                    let n = 24;
                    for k in 0..n {
                        let a = lo + (hi - lo) * k as f32 / n as f32;
                        let b = lo + (hi - lo) * (k + 1) as f32 / n as f32;
                        frame.overlay_line(dir(a), dir(b), color);
                    }
                    frame.overlay_line(apex, dir(lo), color);
                    frame.overlay_line(apex, dir(hi), color);
                    let w_axis = p * axis.into_inner() * (size * 0.5);
                    frame.overlay_line(apex - w_axis, apex + w_axis, [1.0, 0.75, 0.2, 1.0]);
                }
                Constraint::Free => {}
            }
        }
    }
}

impl<S: ChainSolver> Scene for ChainDemo<S> {
    const NAME: &'static str = S::NAME;
    const ABOUT: &'static str = S::ABOUT;
    const CONTROLS: &'static [(&'static str, &'static str)] = &[
        ("c", "constraints on / off"),
        ("space", "pause the target"),
        ("l", "draw the limits"),
        ("t", "draw the target's path"),
        ("r", "straighten the chain"),
    ];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let bone = renderer.add_mesh(&bone_mesh(), &Coloring::Uniform([1.0, 1.0, 1.0]))?;
        Ok(Self {
            tentacle: Tentacle::new(args.start)?,
            bone,
            show_limits: true,
            show_path: true,
            toggle_constraints: false,
            reset: false,
            new_limits: None,
        })
    }

    fn focus(&self) -> (Vec3, f32) {
        (Vec3::new(0.0, 1.15, 0.0), 1.2)
    }

    fn view_angles(&self) -> (f32, f32) {
        (0.5, 0.2)
    }

    fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
        if std::mem::take(&mut self.toggle_constraints) {
            let on = !self.tentacle.constrained;
            self.tentacle.set_constrained(on)?;
        }
        if std::mem::take(&mut self.reset) {
            self.tentacle.reset()?;
        }
        if let Some(limits) = self.new_limits.take() {
            self.tentacle.set_limits(limits)?;
        }
        self.tentacle.step(dt)?;
        let t = &self.tentacle;
        let worlds = t.chain.worlds();
        for i in 0..JOINTS - 1 {
            let m = worlds[i].to_matrix() * Mat4::new_scaling(BONE_LENGTHS[i]);
            let tint = if t.constrained && i == HINGE_JOINT {
                [1.0, 0.7, 0.3]
            } else {
                let f = i as f32 / (JOINTS - 1) as f32;
                [0.35 + 0.3 * f, 0.6 + 0.2 * f, 0.85 - 0.3 * f]
            };
            frame.add_static(self.bone, m, tint);
        }
        // Joints as small crosses, the target as a yellow star, the line to it when missed.
        for w in worlds {
            let s = 0.03;
            for a in [Vec3::x(), Vec3::y(), Vec3::z()] {
                frame.overlay_line(w.translation - a * s, w.translation + a * s, [0.9, 0.9, 0.95, 1.0]);
            }
        }
        let s = 0.1;
        let yellow = [1.0, 0.9, 0.1, 1.0];
        for a in [Vec3::x(), Vec3::y(), Vec3::z(), Vec3::new(1.0, 1.0, 0.0).normalize()] {
            frame.overlay_line(t.target - a * s, t.target + a * s, yellow);
        }
        if !t.result.solved {
            frame.overlay_line(t.chain.end_position(), t.target, RED);
        }
        if self.show_path {
            let n = 90;
            let p = |k: usize| target_at(t.time - 3.0 + 6.0 * k as f32 / n as f32);
            for k in 0..n {
                frame.line(p(k), p(k + 1), [0.55, 0.5, 0.3, 1.0]);
            }
        }
        if self.show_limits && t.constrained {
            self.draw_limits(frame);
        }
        stage::ground(frame, 2.0, 0.0);
        Ok(())
    }

    fn key(&mut self, key: Key) {
        match key {
            Key::Char('c') => self.toggle_constraints = true,
            Key::Char('l') => self.show_limits = !self.show_limits,
            Key::Char('t') => self.show_path = !self.show_path,
            Key::Char('r') => self.reset = true,
            Key::Space => self.tentacle.paused = !self.tentacle.paused,
            _ => {}
        }
    }

    #[cfg(feature = "ui")]
    fn panel(&mut self, ui: &mut anim_render_vk::ui::egui::Ui, _view: &crate::ui::UiView<'_>) {
        use crate::ui::tag;
        use crate::widgets::{check, choice, grid, section, slider, value};
        let t = &mut self.tentacle;
        grid(ui, "chain-grid", |ui| {
            choice(
                ui,
                "solver",
                &mut t.kind,
                &[(SolverKind::Ccd, "CCD", "solver:ccd"), (SolverKind::Fabrik, "FABRIK", "solver:fabrik")],
            );
            slider(ui, "iterations", "iterations", &mut t.iterations, 1..=100, |s| s, |n| n.to_string());
            let mut mm = t.threshold * 1000.0;
            if slider(
                ui,
                "threshold",
                "threshold",
                &mut mm,
                0.01..=100.0,
                |s| s.logarithmic(true),
                |v| format!("{v:.2} mm"),
            ) {
                t.threshold = mm / 1000.0;
            }
            let r = t.result;
            value(
                ui,
                "last solve",
                format!(
                    "{} iterations, {:.2} mm{}",
                    r.iterations,
                    r.distance * 1000.0,
                    if r.solved { " (reached)" } else { "" }
                ),
            );
        });
        section(ui, "Constraints", "chain-limits", true, |ui| {
            grid(ui, "chain-limits-grid", |ui| {
                let mut on = t.constrained;
                if check(ui, "limits", "constraints", &mut on, "on (c)") {
                    self.toggle_constraints = true;
                }
                let mut l = t.limits;
                let deg = |v: f32| format!("{v:.0}°");
                let mut changed = false;
                for (label, name, v, max) in [
                    ("root cone", "limit:root", &mut l.root_cone, 90.0),
                    ("ball cones", "limit:ball", &mut l.ball_cone, 90.0),
                    ("hinge ±", "limit:hinge", &mut l.hinge_limit, 180.0),
                ] {
                    let mut d = v.to_degrees();
                    if slider(ui, label, name, &mut d, 1.0..=max, |s| s.step_by(1.0), deg) {
                        *v = d.to_radians();
                        changed = true;
                    }
                }
                if changed {
                    self.new_limits = Some(l);
                }
                check(ui, "draw", "show_limits", &mut self.show_limits, "cones and the hinge's arc (l)");
            });
        });
        section(ui, "Target", "chain-target", true, |ui| {
            grid(ui, "chain-target-grid", |ui| {
                let mut follow = !t.paused;
                if check(ui, "path", "follow", &mut follow, "follow the path (space)") {
                    t.paused = !follow;
                }
                for (k, (label, range)) in
                    [("x", -2.5..=2.5), ("y", 0.0..=3.0), ("z", -2.5..=2.5)].into_iter().enumerate()
                {
                    let name = format!("target:{label}");
                    if slider(ui, label, &name, &mut t.target[k], range, |s| s.step_by(0.01), |v| format!("{v:+.2} m"))
                    {
                        t.paused = true;
                    }
                }
                check(ui, "draw", "show_path", &mut self.show_path, "the path (t)");
            });
            ui.horizontal(|ui| {
                if tag(ui.button("straighten (r)"), "straighten").clicked() {
                    self.reset = true;
                }
                ui.weak("or drag the yellow star");
            });
        });
    }

    #[cfg(feature = "ui")]
    fn windows(&mut self, ctx: &anim_render_vk::ui::egui::Context, view: &crate::ui::UiView<'_>) {
        let t = &mut self.tentacle;
        if let Some(p) = crate::widgets::view_handle(ctx, view, &t.target, "target") {
            t.target = p;
            t.paused = true;
        }
    }

    fn status(&self) -> String {
        let t = &self.tentacle;
        format!(
            "{} | constraints {} | iterations {}/{} | distance {:.2} mm{} | target {}",
            t.kind.label(),
            if t.constrained { "on" } else { "off" },
            t.result.iterations,
            t.iterations,
            t.result.distance * 1000.0,
            if t.result.solved { " (reached)" } else { "" },
            if t.paused { "paused" } else { "moving" }
        )
    }
}
