//! What one frame draws: the camera, instances of registered meshes (static, skinned on
//! the GPU by vertex shader, compute shader or from a bone texture, or skinned on the CPU),
//! their palettes and morph-target weights, and debug lines. A [`FrameData`] is plain data that the
//! application refills every frame; `clear` keeps its capacity, so a steady frame loop
//! allocates nothing.

use crate::crowd::CrowdDraw;
use crate::error::RenderError;
use crate::mesh::GpuVertex;
use crate::types::MAX_ACTIVE_MORPH_TARGETS;
pub use crate::types::{MeshId, SkinPath};
use anim_core::skin::{DqPalette, Palette, SkinMethod};
use anim_math::{DualQuat, Mat3, Mat4, Vec3};
use bytemuck::{Pod, Zeroable};

/// How an instance's vertices are deformed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Deform {
    /// Drawn as uploaded.
    Static,
    /// Skinned on the GPU with the palette at `palette_offset`: in [`FrameData::matrices`]
    /// for [`SkinMethod::Lbs`], in [`FrameData::dual_quats`] for [`SkinMethod::Dq`].
    Gpu {
        /// LBS or DQ.
        method: SkinMethod,
        /// Vertex shader, compute shader or bone texture.
        path: SkinPath,
        /// First palette entry.
        palette_offset: u32,
        /// DQ with scale: the first of the palette's scale matrices in
        /// [`FrameData::dq_scales`]. `None` for LBS and for a rigid DQ palette (the shaders
        /// then skip the scale work).
        scale_offset: Option<u32>,
        /// Morph-target weights in [`FrameData::morph_weights`], one a target of the mesh's
        /// [`crate::Renderer::add_morph_targets`]; `None` draws the bind vertices unmorphed.
        morph: Option<MorphRange>,
    },
    /// Vertices skinned on the CPU, at `vertex_offset` in [`FrameData::cpu_vertices`]
    /// (uploaded through staging every frame).
    Cpu {
        /// First vertex.
        vertex_offset: u32,
    },
}

/// The morph-target weights of one instance: `count` entries of
/// [`FrameData::morph_weights`] from `first`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MorphRange {
    /// First weight.
    pub first: u32,
    /// Weights (the mesh's target count).
    pub count: u32,
}

/// One drawn mesh.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Instance {
    /// The mesh.
    pub mesh: MeshId,
    /// Model matrix, applied after skinning.
    pub model: Mat4,
    /// Multiplies the vertex colours.
    pub tint: [f32; 3],
    /// Half-Lambert shading when true, flat vertex colours otherwise.
    pub lit: bool,
    /// Deformation.
    pub deform: Deform,
}

/// A line vertex: world position and colour (28 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct LineVertex {
    /// World position.
    pub position: [f32; 3],
    /// RGBA colour.
    pub color: [f32; 4],
}

/// Camera uniform data (`Camera` in `shaders/camera.glsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub(crate) struct CameraUniform {
    pub view_proj: [[f32; 4]; 4],
    pub light_dir: [f32; 4],
    pub eye: [f32; 4],
}

/// A perspective camera for Vulkan's clip space (y down in framebuffer, depth 0..1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Eye position.
    pub eye: Vec3,
    /// Point looked at.
    pub target: Vec3,
    /// World up direction.
    pub up: Vec3,
    /// Vertical field of view in radians.
    pub fov_y: f32,
    /// Near plane distance.
    pub near: f32,
    /// Far plane distance.
    pub far: f32,
    /// Unit direction towards the light.
    pub light_dir: Vec3,
}

impl Default for Camera {
    fn default() -> Self {
        Self {
            eye: Vec3::new(0.0, 1.5, 5.0),
            target: Vec3::new(0.0, 1.0, 0.0),
            up: Vec3::new(0.0, 1.0, 0.0),
            fov_y: 45f32.to_radians(),
            near: 0.05,
            far: 500.0,
            light_dir: Vec3::new(0.4, 0.8, 0.45).normalize(),
        }
    }
}

impl Camera {
    /// Right-handed view matrix.
    pub fn view(&self) -> Mat4 {
        Mat4::look_at_rh(&self.eye.into(), &self.target.into(), &self.up)
    }

    /// Projection into Vulkan clip space for `aspect = width / height`: right-handed view
    /// space, y flipped (framebuffer y points down), depth mapped to 0 (near) … 1 (far).
    pub fn projection(&self, aspect: f32) -> Mat4 {
        let f = 1.0 / (self.fov_y * 0.5).tan();
        let (n, fa) = (self.near, self.far);
        let mut m = Mat4::zeros();
        m[(0, 0)] = f / aspect;
        m[(1, 1)] = -f;
        m[(2, 2)] = fa / (n - fa);
        m[(2, 3)] = n * fa / (n - fa);
        m[(3, 2)] = -1.0;
        m
    }

    /// `projection · view`.
    pub fn view_proj(&self, aspect: f32) -> Mat4 {
        self.projection(aspect) * self.view()
    }

    /// Projects a world point to pixel coordinates (x right, y down) of a `width × height`
    /// target, or `None` behind the camera.
    pub fn project(&self, p: &Vec3, width: u32, height: u32) -> Option<[f32; 2]> {
        let c = self.view_proj(width as f32 / height as f32) * p.push(1.0);
        if c.w <= 1e-6 {
            return None;
        }
        let (x, y) = (c.x / c.w, c.y / c.w);
        Some([(x * 0.5 + 0.5) * width as f32, (y * 0.5 + 0.5) * height as f32])
    }

    pub(crate) fn uniform(&self, aspect: f32) -> CameraUniform {
        let vp = self.view_proj(aspect);
        CameraUniform {
            view_proj: vp.data.0,
            light_dir: [self.light_dir.x, self.light_dir.y, self.light_dir.z, 0.0],
            eye: [self.eye.x, self.eye.y, self.eye.z, 1.0],
        }
    }
}

/// Everything one frame draws. Fill it with the `add_*` methods (which check lengths), or
/// push [`Instance`]s and palette entries directly.
#[derive(Clone, Debug)]
pub struct FrameData {
    /// The camera.
    pub camera: Camera,
    /// Clear colour (linear RGBA).
    pub clear_color: [f32; 4],
    /// Drawn instances, in order.
    pub instances: Vec<Instance>,
    /// Matrix palettes of all LBS and bone-texture instances, concatenated.
    pub matrices: Vec<Mat4>,
    /// Dual-quaternion palettes of all DQ instances, concatenated: real (x, y, z, w) then
    /// dual (x, y, z, w) (see [`dq_words`]).
    pub dual_quats: Vec<[f32; 8]>,
    /// Bind-space scale matrices `Sᵢ` of the DQ palettes that are not rigid, concatenated:
    /// the three columns of each, as vec4 with w = 0 (see [`scale_words`]).
    pub dq_scales: Vec<[[f32; 4]; 3]>,
    /// CPU-skinned vertices of all [`Deform::Cpu`] instances, concatenated.
    pub cpu_vertices: Vec<GpuVertex>,
    /// Morph-target weights of all morphed GPU instances, concatenated (see
    /// [`FrameData::add_skinned_morphed`]).
    pub morph_weights: Vec<f32>,
    /// Depth-tested lines (two vertices a line).
    pub lines: Vec<LineVertex>,
    /// Lines drawn over everything (two vertices a line).
    pub overlay_lines: Vec<LineVertex>,
    /// Crowds drawn (each crowd at most once a frame), after the instances.
    pub crowds: Vec<CrowdDraw>,
}

impl Default for FrameData {
    fn default() -> Self {
        Self {
            camera: Camera::default(),
            clear_color: [0.16, 0.17, 0.20, 1.0],
            instances: Vec::new(),
            matrices: Vec::new(),
            dual_quats: Vec::new(),
            dq_scales: Vec::new(),
            cpu_vertices: Vec::new(),
            morph_weights: Vec::new(),
            lines: Vec::new(),
            overlay_lines: Vec::new(),
            crowds: Vec::new(),
        }
    }
}

fn offset(len: usize, what: &str) -> Result<u32, RenderError> {
    u32::try_from(len).map_err(|_| RenderError::Input(format!("more than 2^32 {what} in one frame")))
}

impl FrameData {
    /// Empties every list, keeping their capacity (camera and clear colour stay).
    pub fn clear(&mut self) {
        self.instances.clear();
        self.matrices.clear();
        self.dual_quats.clear();
        self.dq_scales.clear();
        self.cpu_vertices.clear();
        self.morph_weights.clear();
        self.lines.clear();
        self.overlay_lines.clear();
        self.crowds.clear();
    }

    /// Adds a crowd draw (see [`crate::crowd`]); checked against the renderer's crowds when
    /// the frame is rendered.
    pub fn add_crowd(&mut self, draw: CrowdDraw) {
        self.crowds.push(draw);
    }

    /// Adds a static instance.
    pub fn add_static(&mut self, mesh: MeshId, model: Mat4, tint: [f32; 3]) {
        self.instances.push(Instance { mesh, model, tint, lit: true, deform: Deform::Static });
    }

    /// Adds an instance skinned on the GPU along `path` with `palette`, whose variant picks
    /// the method ([`SkinMethod::Lbs`] for matrices, [`SkinMethod::Dq`] for dual
    /// quaternions; a DQ palette with scale also appends its scale matrices). The
    /// bone-texture path is drawn unlit (change it with [`FrameData::style_last`]).
    ///
    /// # Errors
    /// [`RenderError::Unsupported`] for a DQ palette on [`SkinPath::BoneTexture`], or too
    /// many palette entries in the frame.
    pub fn add_skinned(
        &mut self,
        mesh: MeshId,
        model: Mat4,
        path: SkinPath,
        palette: &Palette,
    ) -> Result<(), RenderError> {
        self.add_skinned_morphed(mesh, model, path, palette, &[])
    }

    /// [`FrameData::add_skinned`] of morphed vertices: the mesh's morph targets
    /// ([`crate::Renderer::add_morph_targets`]) are applied with `weights`, one a target,
    /// before skinning, `p + Σ wᵢ·Δᵢ` (normals likewise), on the vertex-shader and compute
    /// paths. Empty `weights` is [`FrameData::add_skinned`]. The weights are copied into
    /// [`FrameData::morph_weights`] (no allocation once it has grown).
    ///
    /// # Errors
    /// As [`FrameData::add_skinned`]; a non-finite weight ([`RenderError::Input`]); more
    /// than [`crate::MAX_ACTIVE_MORPH_TARGETS`] non-zero weights
    /// ([`RenderError::TooManyMorphTargets`]); non-zero weights on
    /// [`SkinPath::BoneTexture`], which does not morph ([`RenderError::MorphUnsupported`]).
    /// Whether the weights fit the mesh's targets is checked when the frame is rendered.
    pub fn add_skinned_morphed(
        &mut self,
        mesh: MeshId,
        model: Mat4,
        path: SkinPath,
        palette: &Palette,
        weights: &[f32],
    ) -> Result<(), RenderError> {
        let active = active_morph_targets(weights, "add_skinned_morphed")?;
        if active > 0 && path == SkinPath::BoneTexture {
            return Err(RenderError::MorphUnsupported { path });
        }
        let morph = if weights.is_empty() || path == SkinPath::BoneTexture {
            None
        } else {
            let first = offset(self.morph_weights.len(), "morph weights")?;
            let count = offset(weights.len(), "morph weights")?;
            Some(MorphRange { first, count })
        };
        let (palette_offset, scale_offset) = match palette {
            Palette::Matrices(m) => {
                let offset = offset(self.matrices.len(), "palette matrices")?;
                self.matrices.extend_from_slice(m);
                (offset, None)
            }
            Palette::DualQuats(_) if path == SkinPath::BoneTexture => {
                return Err(RenderError::Unsupported { path, method: SkinMethod::Dq });
            }
            Palette::DualQuats(d) => self.push_dq(d)?,
        };
        self.instances.push(Instance {
            mesh,
            model,
            tint: [1.0; 3],
            lit: path != SkinPath::BoneTexture,
            deform: Deform::Gpu { method: palette.method(), path, palette_offset, scale_offset, morph },
        });
        if morph.is_some() {
            self.morph_weights.extend_from_slice(weights);
        }
        Ok(())
    }

    fn push_dq(&mut self, d: &DqPalette) -> Result<(u32, Option<u32>), RenderError> {
        let palette_offset = offset(self.dual_quats.len(), "palette dual quaternions")?;
        let scale_offset = if d.is_rigid() {
            None
        } else {
            let at = offset(self.dq_scales.len(), "palette scale matrices")?;
            self.dq_scales.extend(d.scales().iter().map(scale_words));
            Some(at)
        };
        self.dual_quats.extend(d.dual_quats().iter().map(dq_words));
        Ok((palette_offset, scale_offset))
    }

    /// Adds an instance whose vertices were skinned on the CPU.
    ///
    /// # Errors
    /// Positions and normals differ in length.
    pub fn add_cpu(
        &mut self,
        mesh: MeshId,
        model: Mat4,
        positions: &[Vec3],
        normals: &[Vec3],
    ) -> Result<(), RenderError> {
        if positions.len() != normals.len() {
            return Err(RenderError::Input(format!("{} positions but {} normals", positions.len(), normals.len())));
        }
        let vertex_offset = offset(self.cpu_vertices.len(), "CPU-skinned vertices")?;
        self.cpu_vertices.extend(positions.iter().zip(normals).map(|(p, n)| GpuVertex::new(p, n)));
        self.instances.push(Instance { mesh, model, tint: [1.0; 3], lit: true, deform: Deform::Cpu { vertex_offset } });
        Ok(())
    }

    /// [`FrameData::add_cpu`] with the skinned tangents (xyz, bitangent sign in w), which
    /// normal-mapped materials read; without them they use a frame from screen-space
    /// derivatives.
    ///
    /// # Errors
    /// Positions, normals and tangents differ in length.
    pub fn add_cpu_with_tangents(
        &mut self,
        mesh: MeshId,
        model: Mat4,
        positions: &[Vec3],
        normals: &[Vec3],
        tangents: &[[f32; 4]],
    ) -> Result<(), RenderError> {
        if positions.len() != normals.len() || positions.len() != tangents.len() {
            return Err(RenderError::Input(format!(
                "{} positions, {} normals and {} tangents",
                positions.len(),
                normals.len(),
                tangents.len()
            )));
        }
        let vertex_offset = offset(self.cpu_vertices.len(), "CPU-skinned vertices")?;
        self.cpu_vertices
            .extend(positions.iter().zip(normals).zip(tangents).map(|((p, n), t)| GpuVertex::with_tangent(p, n, t)));
        self.instances.push(Instance { mesh, model, tint: [1.0; 3], lit: true, deform: Deform::Cpu { vertex_offset } });
        Ok(())
    }

    /// Sets the tint and lighting of the last added instance.
    pub fn style_last(&mut self, tint: [f32; 3], lit: bool) {
        if let Some(i) = self.instances.last_mut() {
            i.tint = tint;
            i.lit = lit;
        }
    }

    /// Adds a depth-tested line.
    #[inline]
    pub fn line(&mut self, a: Vec3, b: Vec3, color: [f32; 4]) {
        self.lines.push(LineVertex { position: [a.x, a.y, a.z], color });
        self.lines.push(LineVertex { position: [b.x, b.y, b.z], color });
    }

    /// Adds a line drawn over everything.
    #[inline]
    pub fn overlay_line(&mut self, a: Vec3, b: Vec3, color: [f32; 4]) {
        self.overlay_lines.push(LineVertex { position: [a.x, a.y, a.z], color });
        self.overlay_lines.push(LineVertex { position: [b.x, b.y, b.z], color });
    }
}

/// The number of non-zero `weights`, checked against [`crate::MAX_ACTIVE_MORPH_TARGETS`]
/// (`what` names the draw in the error).
///
/// # Errors
/// A non-finite weight ([`RenderError::Input`]), or too many non-zero ones
/// ([`RenderError::TooManyMorphTargets`]).
pub(crate) fn active_morph_targets(weights: &[f32], what: &str) -> Result<usize, RenderError> {
    if let Some(i) = weights.iter().position(|w| !w.is_finite()) {
        return Err(RenderError::Input(format!("{what}: morph weight {i} is not finite")));
    }
    let active = weights.iter().filter(|w| **w != 0.0).count();
    if active > MAX_ACTIVE_MORPH_TARGETS {
        return Err(RenderError::TooManyMorphTargets { what: what.to_owned(), active, max: MAX_ACTIVE_MORPH_TARGETS });
    }
    Ok(active)
}

/// A unit dual quaternion as the GPU palette stores it: real (x, y, z, w), dual (x, y, z, w).
#[inline]
pub fn dq_words(q: &DualQuat) -> [f32; 8] {
    let (r, d) = (&q.as_ref().real.coords, &q.as_ref().dual.coords);
    [r[0], r[1], r[2], r[3], d[0], d[1], d[2], d[3]]
}

/// A bind-space scale matrix as the GPU stores it: its three columns, each (x, y, z, 0).
#[inline]
pub fn scale_words(m: &Mat3) -> [[f32; 4]; 3] {
    let c = |i: usize| [m[(0, i)], m[(1, i)], m[(2, i)], 0.0];
    [c(0), c(1), c(2)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_maps_near_far_and_flips_y() {
        let cam = Camera {
            eye: Vec3::new(0.0, 0.0, 10.0),
            target: Vec3::zeros(),
            near: 1.0,
            far: 100.0,
            ..Camera::default()
        };
        let vp = cam.view_proj(2.0);
        let clip = |p: Vec3| {
            let c = vp * p.push(1.0);
            Vec3::new(c.x / c.w, c.y / c.w, c.z / c.w)
        };
        // Near plane at depth 0, far plane at depth 1 (points 1 and 100 in front of the eye).
        assert!(clip(Vec3::new(0.0, 0.0, 9.0)).z.abs() < 1e-6);
        assert!((clip(Vec3::new(0.0, 0.0, -90.0)).z - 1.0).abs() < 1e-5);
        // World up is framebuffer up: negative clip y.
        assert!(clip(Vec3::new(0.0, 1.0, 0.0)).y < 0.0);
        // The top of the view cone at distance 10 reaches y = 10 tan(fov/2): clip y = -1.
        let top = 10.0 * (cam.fov_y * 0.5).tan();
        assert!((clip(Vec3::new(0.0, top, 0.0)).y + 1.0).abs() < 1e-5);
        // Aspect 2: x = 2 · top projects to the right edge.
        assert!((clip(Vec3::new(2.0 * top, 0.0, 0.0)).x - 1.0).abs() < 1e-5);
        // Pixel coordinates: the target lands at the centre, behind the eye gives None.
        assert_eq!(cam.project(&Vec3::zeros(), 200, 100), Some([100.0, 50.0]));
        assert_eq!(cam.project(&Vec3::new(0.0, 0.0, 20.0), 200, 100), None);
    }

    #[test]
    fn frame_lists_and_offsets() {
        let mut f = FrameData::default();
        let lbs = |n| Palette::Matrices(vec![Mat4::identity(); n]);
        f.add_skinned(MeshId(0), Mat4::identity(), SkinPath::Compute, &lbs(3)).unwrap();
        f.add_skinned(MeshId(1), Mat4::identity(), SkinPath::VertexShader, &lbs(2)).unwrap();
        let rigid = Palette::DualQuats(DqPalette::from_rigid(&[DualQuat::identity()]));
        f.add_skinned(MeshId(0), Mat4::identity(), SkinPath::Compute, &rigid).unwrap();
        let scaled = Palette::DualQuats(DqPalette::from_matrices(&[
            Mat4::identity(),
            Mat4::new_nonuniform_scaling(&Vec3::new(2.0, 1.0, 0.5)),
        ]));
        f.add_skinned(MeshId(0), Mat4::identity(), SkinPath::VertexShader, &scaled).unwrap();
        f.add_skinned(MeshId(0), Mat4::identity(), SkinPath::BoneTexture, &lbs(1)).unwrap();
        assert!(matches!(
            f.add_skinned(MeshId(0), Mat4::identity(), SkinPath::BoneTexture, &rigid),
            Err(RenderError::Unsupported { path: SkinPath::BoneTexture, method: SkinMethod::Dq })
        ));
        assert_eq!(f.instances.len(), 5);
        assert_eq!(f.matrices.len(), 6);
        assert!(matches!(f.instances[1].deform, Deform::Gpu { palette_offset: 3, .. }));
        let dq = |i: usize| match f.instances[i].deform {
            Deform::Gpu { method: SkinMethod::Dq, palette_offset, scale_offset, .. } => (palette_offset, scale_offset),
            d => panic!("{d:?}"),
        };
        assert_eq!(dq(2), (0, None));
        assert_eq!(dq(3), (1, Some(0)));
        assert!(!f.instances[4].lit);
        assert_eq!(f.dual_quats.len(), 3);
        assert_eq!(
            f.dq_scales,
            vec![scale_words(&Mat3::identity()), [[2.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.5, 0.0]]]
        );
        assert_eq!(f.dual_quats[0], [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
        assert!(f.add_cpu(MeshId(0), Mat4::identity(), &[Vec3::zeros()], &[]).is_err());
        // Morph weights: each instance's range in the shared list; none for empty weights.
        f.add_skinned_morphed(MeshId(0), Mat4::identity(), SkinPath::Compute, &lbs(1), &[0.5, 0.0]).unwrap();
        f.add_skinned_morphed(MeshId(0), Mat4::identity(), SkinPath::VertexShader, &rigid, &[0.0, 1.0, 2.0]).unwrap();
        f.add_skinned_morphed(MeshId(0), Mat4::identity(), SkinPath::VertexShader, &lbs(1), &[]).unwrap();
        fn morph(f: &FrameData, i: usize) -> Option<MorphRange> {
            match f.instances[i].deform {
                Deform::Gpu { morph, .. } => morph,
                d => panic!("{d:?}"),
            }
        }
        assert_eq!(morph(&f, 5), Some(MorphRange { first: 0, count: 2 }));
        assert_eq!(morph(&f, 6), Some(MorphRange { first: 2, count: 3 }));
        assert_eq!(morph(&f, 7), None);
        assert_eq!(f.morph_weights, [0.5, 0.0, 0.0, 1.0, 2.0]);
        // All-zero weights on the bone texture draw unmorphed; non-zero ones are refused.
        f.add_skinned_morphed(MeshId(0), Mat4::identity(), SkinPath::BoneTexture, &lbs(1), &[0.0]).unwrap();
        assert_eq!(morph(&f, 8), None);
        assert!(matches!(
            f.add_skinned_morphed(MeshId(0), Mat4::identity(), SkinPath::BoneTexture, &lbs(1), &[1.0]),
            Err(RenderError::MorphUnsupported { path: SkinPath::BoneTexture })
        ));
        let cap = f.instances.capacity();
        f.clear();
        assert!(
            f.instances.is_empty() && f.matrices.is_empty() && f.dq_scales.is_empty() && f.morph_weights.is_empty()
        );
        assert_eq!(f.instances.capacity(), cap);
    }
}
