//! Seed 004 (a small engine's skinned mesh renderer): a box made of two parts, each bound
//! rigidly to one of two bones; every frame the CPU transforms the vertices (each by its one
//! bone's skinning matrix) and re-uploads the vertex buffer as dynamic data (staging copy
//! in the frame's command buffer). The seam between the parts opens when the upper bone
//! turns: the crack that smooth skinning closes.
//!
//! The panel sets both bones' angles (sliders that pause the clock).

use crate::DemoError;
use crate::app::{CommonArgs, Key, Scene};
use anim_core::pose::{JointDesc, Pose, Skeleton};
use anim_core::skin::skinning;
use anim_core::skin::skinning::{SkinningInput, SkinningOutput};
use anim_core::skin::{Influences, Mesh, Skin, palette};
use anim_math::{Mat4, Quat, Transform, Vec3};
use anim_render_vk::{Coloring, FrameData, MeshId, Renderer, lines};

/// A cuboid from `lo` to `hi` (24 vertices with face normals, 12 triangles) appended to the
/// lists, bound to `joint`.
fn cuboid(
    lo: Vec3,
    hi: Vec3,
    joint: u16,
    color: [f32; 4],
    m: &mut Mesh,
    joints: &mut Vec<u16>,
    colors: &mut Vec<[f32; 4]>,
) {
    let faces: [(Vec3, [Vec3; 4]); 6] = [
        (
            Vec3::x(),
            [
                Vec3::new(hi.x, lo.y, lo.z),
                Vec3::new(hi.x, hi.y, lo.z),
                Vec3::new(hi.x, hi.y, hi.z),
                Vec3::new(hi.x, lo.y, hi.z),
            ],
        ),
        (
            -Vec3::x(),
            [
                Vec3::new(lo.x, lo.y, hi.z),
                Vec3::new(lo.x, hi.y, hi.z),
                Vec3::new(lo.x, hi.y, lo.z),
                Vec3::new(lo.x, lo.y, lo.z),
            ],
        ),
        (
            Vec3::y(),
            [
                Vec3::new(lo.x, hi.y, lo.z),
                Vec3::new(lo.x, hi.y, hi.z),
                Vec3::new(hi.x, hi.y, hi.z),
                Vec3::new(hi.x, hi.y, lo.z),
            ],
        ),
        (
            -Vec3::y(),
            [
                Vec3::new(lo.x, lo.y, hi.z),
                Vec3::new(lo.x, lo.y, lo.z),
                Vec3::new(hi.x, lo.y, lo.z),
                Vec3::new(hi.x, lo.y, hi.z),
            ],
        ),
        (
            Vec3::z(),
            [
                Vec3::new(lo.x, lo.y, hi.z),
                Vec3::new(hi.x, lo.y, hi.z),
                Vec3::new(hi.x, hi.y, hi.z),
                Vec3::new(lo.x, hi.y, hi.z),
            ],
        ),
        (
            -Vec3::z(),
            [
                Vec3::new(hi.x, lo.y, lo.z),
                Vec3::new(lo.x, lo.y, lo.z),
                Vec3::new(lo.x, hi.y, lo.z),
                Vec3::new(hi.x, hi.y, lo.z),
            ],
        ),
    ];
    for (n, quad) in faces {
        let base = m.positions.len() as u32;
        for p in quad {
            m.positions.push(p);
            m.normals.push(n);
            joints.push(joint);
            colors.push(color);
        }
        m.indices.extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
    }
}

/// The two-part box (lower part y 0..2 on bone 0, upper part y 2..3 on bone 1, as in the
/// seed's two quads, made solid), its skeleton, and per-vertex colours.
pub fn two_bone_box() -> Result<(Skeleton, Mesh, Vec<[f32; 4]>), DemoError> {
    let skeleton = Skeleton::new(vec![
        JointDesc::new("Bone", None, Transform::IDENTITY),
        JointDesc::new("Bone.001", Some(0), Transform::from_translation(Vec3::new(0.0, 2.0, 0.0))),
    ])?;
    let mut mesh = Mesh::default();
    let mut joints = Vec::new();
    let mut colors = Vec::new();
    let (lower, upper) = ([0.85, 0.55, 0.3, 1.0], [0.35, 0.65, 0.9, 1.0]);
    cuboid(Vec3::new(-0.2, 0.0, -0.2), Vec3::new(0.2, 2.0, 0.2), 0, lower, &mut mesh, &mut joints, &mut colors);
    cuboid(Vec3::new(-0.2, 2.0, -0.2), Vec3::new(0.2, 3.0, 0.2), 1, upper, &mut mesh, &mut joints, &mut colors);
    let n = joints.len();
    mesh.influences = Some(Influences::new(1, joints, vec![1.0; n], 2)?);
    Ok((skeleton, mesh, colors))
}

/// The scene.
#[derive(Debug)]
pub struct RigidBox {
    skeleton: Skeleton,
    skin: Skin,
    mesh: Mesh,
    id: MeshId,
    pose: Pose,
    model: Vec<Mat4>,
    palette: Vec<Mat4>,
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    /// Seconds.
    pub time: f32,
    /// Time stands still.
    pub paused: bool,
    /// The lower and the upper bone's angle about z, radians (a fifth of
    /// [`RigidBox::angle`] and all of it while the clock runs).
    pub angles: [f32; 2],
}

impl RigidBox {
    /// Angle of the upper bone at time `t`, radians (±60°).
    pub fn angle(t: f32) -> f32 {
        (t * 1.5).sin() * 60f32.to_radians()
    }

    /// The lower and the upper bone's angle at time `t`.
    pub fn angles_at(t: f32) -> [f32; 2] {
        [Self::angle(t) * 0.2, Self::angle(t)]
    }
}

impl Scene for RigidBox {
    const NAME: &'static str = "seed_rigid_box";
    const ABOUT: &'static str =
        "Seed 004: a two-bone box skinned rigidly on the CPU, vertex buffer re-uploaded every frame.";
    const CONTROLS: &'static [(&'static str, &'static str)] = &[("space", "pause")];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let (skeleton, mesh, colors) = two_bone_box()?;
        let id = renderer.add_mesh(&mesh, &Coloring::PerVertex(colors))?;
        let n = mesh.vertex_count();
        Ok(Self {
            skin: Skin::from_skeleton(&skeleton),
            pose: skeleton.rest_pose().clone(),
            model: vec![Mat4::identity(); 2],
            palette: vec![Mat4::identity(); 2],
            positions: vec![Vec3::zeros(); n],
            normals: vec![Vec3::zeros(); n],
            skeleton,
            mesh,
            id,
            time: args.start.max(0.0) + 0.9,
            paused: false,
            angles: Self::angles_at(args.start.max(0.0) + 0.9),
        })
    }

    fn focus(&self) -> (Vec3, f32) {
        (Vec3::new(0.0, 1.5, 0.0), 2.0)
    }

    fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
        if !self.paused {
            self.time += dt;
            self.angles = Self::angles_at(self.time);
        }
        self.pose.locals_mut().copy_from_slice(self.skeleton.rest_pose().locals());
        for (l, a) in self.pose.locals_mut().iter_mut().zip(self.angles) {
            l.rotation = Quat::from_axis_angle(&Vec3::z_axis(), a);
        }
        self.pose.local_to_model(&self.skeleton, &mut self.model)?;
        palette::skinning_matrices(&self.model, &self.skin, &mut self.palette)?;
        let inf = self.mesh.influences.as_ref().expect("built with influences");
        let input =
            SkinningInput { influences: inf, positions: &self.mesh.positions, normals: Some(&self.mesh.normals) };
        let mut out = SkinningOutput { positions: &mut self.positions, normals: Some(&mut self.normals) };
        skinning::rigid(&input, &self.palette, &mut out)?;
        frame.add_cpu(self.id, Mat4::identity(), &self.positions, &self.normals)?;
        lines::grid(frame, 6, 0.5, 0.0);
        let top = (self.model[1] * Vec3::new(0.0, 1.0, 0.0).push(1.0)).xyz();
        frame.overlay_line(self.model[0].column(3).xyz(), self.model[1].column(3).xyz(), [1.0, 1.0, 1.0, 1.0]);
        frame.overlay_line(self.model[1].column(3).xyz(), top, [1.0, 1.0, 1.0, 1.0]);
        Ok(())
    }

    fn key(&mut self, key: Key) {
        if key == Key::Space {
            self.paused = !self.paused;
        }
    }

    #[cfg(feature = "ui")]
    fn panel(&mut self, ui: &mut anim_render_vk::ui::egui::Ui, _view: &crate::ui::UiView<'_>) {
        use crate::widgets::{check, grid, slider};
        grid(ui, "rigid-box-grid", |ui| {
            for (b, (a, label)) in self.angles.iter_mut().zip(["lower bone", "upper bone"]).enumerate() {
                let mut deg = a.to_degrees();
                let name = format!("angle:{b}");
                if slider(ui, label, &name, &mut deg, -90.0..=90.0, |s| s.step_by(1.0), |d| format!("{d:+.0}°")) {
                    *a = deg.to_radians();
                    self.paused = true;
                }
            }
            let mut playing = !self.paused;
            if check(ui, "animate", "animate", &mut playing, "upper ±60°, lower a fifth (space)") {
                self.paused = !playing;
            }
        });
        ui.weak("Each vertex follows one bone: the seam opens as the upper bone turns.");
    }

    fn status(&self) -> String {
        format!("upper bone {:.0} deg, rigid CPU skinning, dynamic vertex upload", self.angles[1].to_degrees())
    }
}
