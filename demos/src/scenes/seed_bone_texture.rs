//! Seed 003 (the WebGL skinning article): a 2D grid skinned by three bones in a chain,
//! the bone matrices read in the vertex shader from a texel buffer (RGBA32F, four texels a
//! matrix) instead of a fixed-size uniform array. The seed's debug views, cycled with `v`:
//! weights as colours (bone 0 red, bone 1 green, bone 2 blue, blends in between), normals
//! as colours (`n · 0.5 + 0.5` of the bind normal: the flat grid faces +z, so it is
//! (0.5, 0.5, 1)), and joint indices as colours (the first three indices as red, green,
//! blue over the largest index: (0, 0.5, 1) where the grid's joints 0, 1, 2 all have
//! weight; a slot without weight names joint 0, so the columns bound to b0 and b1 only are
//! (0, 0.5, 0)).
//!
//! As in the seed: bones b0 at x = 0, b1 at x = 4, b2 at x = 8; grid columns at x = 0 and 8
//! follow one bone, x = 2 is half b0 / half b1, x = 4 is b1, x = 6 half b1 / half b2; columns
//! in between interpolate. Each bone rotates by `sin(t) · 0.8` about z relative to its parent.
//!
//! The panel picks the view and sets each bone's angle (a slider that pauses the clock).

use crate::DemoError;
use crate::app::{CommonArgs, Key, Scene};
use anim_core::pose::{JointDesc, Pose, Skeleton};
use anim_core::skin::{Influences, Mesh, Palette, Skin};
use anim_math::{Mat4, Quat, Transform, Vec3};
use anim_render_vk::{Coloring, FrameData, MeshId, Renderer, SkinPath};

/// Weights of (b0, b1, b2) at grid column x in [0, 8] (seed 003's table, interpolated).
pub fn seed_weights(x: f32) -> [f32; 3] {
    // The seed's columns: x = 0, 2, 4, 6, 8.
    let table = [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.5, 0.5], [0.0, 0.0, 1.0]];
    let f = (x / 2.0).clamp(0.0, 4.0);
    let i = (f.floor() as usize).min(3);
    let t = f - i as f32;
    std::array::from_fn(|k| table[i][k] * (1.0 - t) + table[i + 1][k] * t)
}

/// The grid (x in 0..8 every 0.5, y in −1..1 every 0.5) and its three-bone skeleton.
pub fn grid() -> Result<(Skeleton, Mesh), DemoError> {
    let step = |i| Transform::from_translation(Vec3::new(4.0 * i as f32, 0.0, 0.0));
    let skeleton = Skeleton::new(vec![
        JointDesc::new("b0", None, step(0)),
        JointDesc::new("b1", Some(0), step(1)),
        JointDesc::new("b2", Some(1), step(1)),
    ])?;
    let (cols, rows) = (17usize, 5usize);
    let mut positions = Vec::new();
    let mut joints = Vec::new();
    let mut weights = Vec::new();
    for c in 0..cols {
        let x = c as f32 * 0.5;
        let w = seed_weights(x);
        for r in 0..rows {
            positions.push(Vec3::new(x, -1.0 + r as f32 * 0.5, 0.0));
            joints.extend_from_slice(&[0u16, 1, 2, 0]);
            weights.extend_from_slice(&[w[0], w[1], w[2], 0.0]);
        }
    }
    let mut indices = Vec::new();
    for c in 0..cols as u32 - 1 {
        for r in 0..rows as u32 - 1 {
            let a = c * rows as u32 + r;
            let b = a + rows as u32;
            indices.extend_from_slice(&[a, b, b + 1, a, b + 1, a + 1]);
        }
    }
    let n = positions.len();
    let influences = Influences::new(4, joints, weights, 3)?;
    Ok((
        skeleton,
        Mesh { positions, normals: vec![Vec3::z(); n], uvs: Vec::new(), influences: Some(influences), indices },
    ))
}

/// A debug view of the seed's grid.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum View {
    /// Weights of bones 0, 1, 2 as red, green, blue ([`Coloring::WeightsRgb`]).
    #[default]
    Weights,
    /// Bind normals as colours ([`Coloring::Normals`]).
    Normals,
    /// Joint indices as colours ([`Coloring::JointIndices`]).
    JointIndices,
}

impl View {
    /// Every view, in the order `v` cycles them.
    pub const ALL: [View; 3] = [Self::Weights, Self::Normals, Self::JointIndices];

    /// The next view.
    pub fn next(self) -> Self {
        Self::ALL[(self as usize + 1) % Self::ALL.len()]
    }

    /// The colouring of the view.
    pub fn coloring(self) -> Coloring {
        match self {
            Self::Weights => Coloring::WeightsRgb,
            Self::Normals => Coloring::Normals,
            Self::JointIndices => Coloring::JointIndices,
        }
    }

    /// Short name.
    pub fn label(self) -> &'static str {
        match self {
            Self::Weights => "weights",
            Self::Normals => "normals",
            Self::JointIndices => "joint indices",
        }
    }
}

/// The scene.
#[derive(Debug)]
pub struct BoneTexture {
    skeleton: Skeleton,
    skin: Skin,
    /// The grid uploaded once per view, in [`View::ALL`] order.
    meshes: [MeshId; 3],
    /// The view shown.
    pub view: View,
    pose: Pose,
    model: Vec<Mat4>,
    palette: Palette,
    /// Seconds.
    pub time: f32,
    /// Time stands still.
    pub paused: bool,
    /// Each bone's angle about z relative to its parent, radians ([`BoneTexture::angle`]
    /// of the time while the clock runs).
    pub angles: [f32; 3],
}

impl BoneTexture {
    /// Bone angle at time `t` (the seed's `sin(t) · 0.8`).
    pub fn angle(t: f32) -> f32 {
        t.sin() * 0.8
    }
}

impl Scene for BoneTexture {
    const NAME: &'static str = "seed_bone_texture";
    const ABOUT: &'static str =
        "Seed 003: a grid skinned by 3 bones read from a texel buffer; weights, normals or joint indices as colours.";
    const CONTROLS: &'static [(&'static str, &'static str)] =
        &[("v", "view: weights / normals / joint indices as colours"), ("space", "pause")];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let (skeleton, mesh) = grid()?;
        let [a, b, c] = View::ALL.map(|v| renderer.add_mesh(&mesh, &v.coloring()));
        let meshes = [a?, b?, c?];
        let skin = Skin::from_skeleton(&skeleton);
        Ok(Self {
            pose: skeleton.rest_pose().clone(),
            model: vec![Mat4::identity(); 3],
            palette: Palette::Matrices(vec![Mat4::identity(); 3]),
            skin,
            skeleton,
            meshes,
            view: View::Weights,
            time: args.start,
            paused: false,
            angles: [Self::angle(args.start); 3],
        })
    }

    fn focus(&self) -> (Vec3, f32) {
        (Vec3::new(3.5, 2.5, 0.0), 5.8)
    }

    fn view_angles(&self) -> (f32, f32) {
        (0.0, 0.0)
    }

    fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
        if !self.paused {
            self.time += dt;
            self.angles = [Self::angle(self.time); 3];
        }
        self.pose.locals_mut().copy_from_slice(self.skeleton.rest_pose().locals());
        for (l, a) in self.pose.locals_mut().iter_mut().zip(self.angles) {
            l.rotation = Quat::from_axis_angle(&Vec3::z_axis(), a);
        }
        self.pose.local_to_model(&self.skeleton, &mut self.model)?;
        self.palette.update(&self.model, &self.skin)?;
        frame.clear_color = [0.08, 0.08, 0.1, 1.0];
        frame.add_skinned(self.meshes[self.view as usize], Mat4::identity(), SkinPath::BoneTexture, &self.palette)?;
        for j in 1..3 {
            let a = self.model[j - 1].column(3).xyz();
            let b = self.model[j].column(3).xyz();
            frame.overlay_line(a, b, [1.0, 1.0, 1.0, 1.0]);
        }
        Ok(())
    }

    fn key(&mut self, key: Key) {
        match key {
            Key::Space => self.paused = !self.paused,
            Key::Char('v') => self.view = self.view.next(),
            _ => {}
        }
    }

    #[cfg(feature = "ui")]
    fn panel(&mut self, ui: &mut anim_render_vk::ui::egui::Ui, _view: &crate::ui::UiView<'_>) {
        use crate::widgets::{check, choice, grid, slider};
        grid(ui, "bone-texture-grid", |ui| {
            choice(
                ui,
                "view",
                &mut self.view,
                &[
                    (View::Weights, "weights", "view:weights"),
                    (View::Normals, "normals", "view:normals"),
                    (View::JointIndices, "joint indices", "view:joint-indices"),
                ],
            );
            for (b, a) in self.angles.iter_mut().enumerate() {
                let mut deg = a.to_degrees();
                let (label, name) = (format!("bone b{b}"), format!("angle:{b}"));
                if slider(ui, &label, &name, &mut deg, -90.0..=90.0, |s| s.step_by(1.0), |d| format!("{d:+.0}°")) {
                    *a = deg.to_radians();
                    self.paused = true;
                }
            }
            let mut playing = !self.paused;
            if check(ui, "animate", "animate", &mut playing, "sin(t) · 0.8 (space)") {
                self.paused = !playing;
            }
        });
    }

    fn status(&self) -> String {
        let [a, b, c] = self.angles.map(f32::to_degrees);
        format!("bone angles {a:.0} {b:.0} {c:.0} deg | {}", self.view.label())
    }
}
