//! Seed 003 (the WebGL skinning article): a 2D grid skinned by three bones in a chain,
//! the bone matrices read in the vertex shader from a texel buffer (RGBA32F, four texels a
//! matrix) instead of a fixed-size uniform array; weights shown as colours (bone 0 red,
//! bone 1 green, bone 2 blue, blends in between).
//!
//! As in the seed: bones b0 at x = 0, b1 at x = 4, b2 at x = 8; grid columns at x = 0 and 8
//! follow one bone, x = 2 is half b0 / half b1, x = 4 is b1, x = 6 half b1 / half b2; columns
//! in between interpolate. Each bone rotates by `sin(t) · 0.8` about z relative to its parent.

use crate::DemoError;
use crate::app::{CommonArgs, Key, Scene};
use anim_core::{Influences, JointDesc, Mesh, Palette, Pose, Skeleton, Skin};
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

/// The scene.
#[derive(Debug)]
pub struct BoneTexture {
    skeleton: Skeleton,
    skin: Skin,
    mesh: MeshId,
    pose: Pose,
    model: Vec<Mat4>,
    palette: Palette,
    /// Seconds.
    pub time: f32,
    /// Time stands still.
    pub paused: bool,
}

impl BoneTexture {
    /// Bone angle at time `t` (the seed's `sin(t) · 0.8`).
    pub fn angle(t: f32) -> f32 {
        t.sin() * 0.8
    }
}

impl Scene for BoneTexture {
    const NAME: &'static str = "seed_bone_texture";
    const ABOUT: &'static str = "Seed 003: a grid skinned by 3 bones read from a texel buffer; weights as colours.";
    const CONTROLS: &'static [(&'static str, &'static str)] = &[("space", "pause")];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let (skeleton, mesh) = grid()?;
        let id = renderer.add_mesh(&mesh, &Coloring::WeightsRgb)?;
        let skin = Skin::from_skeleton(&skeleton);
        Ok(Self {
            pose: skeleton.rest_pose().clone(),
            model: vec![Mat4::identity(); 3],
            palette: Palette::Matrices(vec![Mat4::identity(); 3]),
            skin,
            skeleton,
            mesh: id,
            time: args.start,
            paused: false,
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
        }
        let rot = Quat::from_axis_angle(&Vec3::z_axis(), Self::angle(self.time));
        self.pose.locals_mut().copy_from_slice(self.skeleton.rest_pose().locals());
        for l in self.pose.locals_mut() {
            l.rotation = rot;
        }
        self.pose.local_to_model(&self.skeleton, &mut self.model)?;
        self.palette.update(&self.model, &self.skin)?;
        frame.clear_color = [0.08, 0.08, 0.1, 1.0];
        frame.add_skinned(self.mesh, Mat4::identity(), SkinPath::BoneTexture, &self.palette)?;
        for j in 1..3 {
            let a = self.model[j - 1].column(3).xyz();
            let b = self.model[j].column(3).xyz();
            frame.overlay_line(a, b, [1.0, 1.0, 1.0, 1.0]);
        }
        Ok(())
    }

    fn key(&mut self, key: Key) {
        if key == Key::Space {
            self.paused = !self.paused;
        }
    }

    fn status(&self) -> String {
        format!("bone angle {:.0} deg", Self::angle(self.time).to_degrees())
    }
}
