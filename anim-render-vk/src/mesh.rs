//! Meshes on the GPU: bind-pose vertices (with tangents), colours, texture coordinates,
//! indices and skinning influences in device-local buffers (uploaded once through
//! staging), the material that shades them, plus the debug colourings. Morph
//! targets ([`crate::Renderer::add_morph_targets`]) add one storage buffer of deltas, read
//! by the vertex-shader and compute skinning passes before skinning.

use crate::context::Context;
use crate::error::RenderError;
use crate::material::Surface;
use crate::resources::Buffer;
use anim_core::skin::{Influences, Mesh, MorphTargets};
use anim_math::Vec3;
use ash::vk;
use bytemuck::{Pod, Zeroable};
use std::sync::Arc;

/// A vertex as the GPU stores it (`Vertex` in `shaders/common.glsl`): the position, whose
/// w holds the bits of the unit tangent octahedrally encoded (two snorm16), and the normal,
/// whose w is the bitangent sign (±1, or 0 when the vertex has no tangent); the layout of
/// compute-skinning output and of CPU-skinned uploads.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuVertex {
    /// Position (x, y, z) and the encoded tangent's bits.
    pub position: [f32; 4],
    /// Normal (x, y, z) and the bitangent sign.
    pub normal: [f32; 4],
}

impl GpuVertex {
    /// From a position and a normal, without a tangent.
    #[inline]
    pub fn new(p: &Vec3, n: &Vec3) -> Self {
        Self { position: [p.x, p.y, p.z, 0.0], normal: [n.x, n.y, n.z, 0.0] }
    }

    /// From a position, a normal and a tangent (xyz unit, w the bitangent sign ±1).
    #[inline]
    pub fn with_tangent(p: &Vec3, n: &Vec3, t: &[f32; 4]) -> Self {
        let sign = if t[3] < 0.0 { -1.0 } else { 1.0 };
        let bits = encode_octahedral([t[0], t[1], t[2]]);
        Self { position: [p.x, p.y, p.z, f32::from_bits(bits)], normal: [n.x, n.y, n.z, sign] }
    }

    /// The tangent (xyz, bitangent sign in w), `None` without one.
    pub fn tangent(&self) -> Option<[f32; 4]> {
        (self.normal[3] != 0.0).then(|| {
            let [x, y, z] = decode_octahedral(self.position[3].to_bits());
            [x, y, z, self.normal[3]]
        })
    }
}

/// A unit vector octahedrally encoded into two snorm16 (`encode_octahedral` in
/// `shaders/octahedral.glsl`, GLSL's `packSnorm2x16`).
pub(crate) fn encode_octahedral(v: [f32; 3]) -> u32 {
    let l1 = (v[0].abs() + v[1].abs() + v[2].abs()).max(1e-20);
    let (x, y, z) = (v[0] / l1, v[1] / l1, v[2] / l1);
    let (mut ex, mut ey) = (x, y);
    if z < 0.0 {
        ex = (1.0 - y.abs()) * if x >= 0.0 { 1.0 } else { -1.0 };
        ey = (1.0 - x.abs()) * if y >= 0.0 { 1.0 } else { -1.0 };
    }
    let snorm = |c: f32| ((c.clamp(-1.0, 1.0) * 32767.0).round() as i16) as u16 as u32;
    snorm(ex) | (snorm(ey) << 16)
}

/// The inverse of [`encode_octahedral`], normalized.
pub(crate) fn decode_octahedral(bits: u32) -> [f32; 3] {
    let unorm = |h: u32| (f32::from(h as u16 as i16) / 32767.0).max(-1.0);
    let (ex, ey) = (unorm(bits & 0xFFFF), unorm(bits >> 16));
    let z = 1.0 - ex.abs() - ey.abs();
    let t = (-z).max(0.0);
    let x = ex + if ex >= 0.0 { -t } else { t };
    let y = ey + if ey >= 0.0 { -t } else { t };
    let l = (x * x + y * y + z * z).sqrt().max(1e-20);
    [x / l, y / l, z / l]
}

/// How a mesh's vertices are coloured (then shaded, unless drawn unlit).
#[derive(Clone, Debug, PartialEq)]
pub enum Coloring {
    /// One colour for every vertex.
    Uniform([f32; 3]),
    /// Seed 003's debug view: each vertex gets the colour of its strongest joint, so the
    /// regions each joint drives show as patches.
    ByJoint,
    /// Seed 003's debug view: the weights of joints 0, 1 and 2 of the skin as red, green and
    /// blue (the "weights as colours" image for a three-bone mesh).
    WeightsRgb,
    /// Heat map of the weight of one joint (blue = 0, red = 1).
    WeightOf(u16),
    /// Seed 003's debug view: the bind-pose normal as a colour, `n · 0.5 + 0.5` (a face
    /// towards +z is (0.5, 0.5, 1)).
    Normals,
    /// Seed 003's debug view: the joint indices of a vertex's first three influences as
    /// red, green and blue, each divided by the largest joint index of the mesh (a vertex
    /// bound to joints 0, 1 and 2 of a three-joint mesh is (0, 0.5, 1); a slot without
    /// weight names joint 0, as [`Influences`] stores it).
    JointIndices,
    /// Explicit colours, one a vertex.
    PerVertex(Vec<[f32; 4]>),
    /// Shaded by the mesh's material ([`crate::material`]), its vertex colours `COLOR_0`
    /// (white without them): what [`crate::Renderer::add_surface_mesh`] registers.
    Material,
}

/// A distinct colour for a joint index (golden-angle hue walk).
pub fn joint_color(joint: usize) -> [f32; 4] {
    let h = (joint as f32 * 0.618_034).fract() * 6.0;
    let x = 1.0 - ((h % 2.0) - 1.0).abs();
    let (r, g, b) = match h as u32 {
        0 => (1.0, x, 0.0),
        1 => (x, 1.0, 0.0),
        2 => (0.0, 1.0, x),
        3 => (0.0, x, 1.0),
        4 => (x, 0.0, 1.0),
        _ => (1.0, 0.0, x),
    };
    [0.25 + 0.75 * r, 0.25 + 0.75 * g, 0.25 + 0.75 * b, 1.0]
}

fn heat(w: f32) -> [f32; 4] {
    let w = w.clamp(0.0, 1.0);
    [w, 1.0 - (2.0 * w - 1.0).abs(), 1.0 - w, 1.0]
}

/// Per-vertex colours for `coloring` (influence-based colourings need influences,
/// [`Coloring::Normals`] the `n` bind-pose `normals`).
///
/// # Errors
/// A debug colouring without influences, or explicit colours or normals of the wrong count.
pub fn vertex_colors(
    coloring: &Coloring,
    n: usize,
    influences: Option<&Influences>,
    normals: &[Vec3],
) -> Result<Vec<[f32; 4]>, RenderError> {
    let need = || influences.ok_or_else(|| RenderError::Input("debug colouring of a mesh without influences".into()));
    Ok(match coloring {
        Coloring::Uniform(c) => vec![[c[0], c[1], c[2], 1.0]; n],
        Coloring::Material => vec![[1.0; 4]; n],
        Coloring::PerVertex(c) => {
            if c.len() != n {
                return Err(RenderError::Input(format!("{} colours for {n} vertices", c.len())));
            }
            c.clone()
        }
        Coloring::ByJoint => {
            let inf = need()?;
            let per = inf.per_vertex();
            inf.joints()
                .chunks_exact(per)
                .zip(inf.weights().chunks_exact(per))
                .map(|(js, ws)| {
                    let best = (0..per).fold(0, |b, k| if ws[k] > ws[b] { k } else { b });
                    joint_color(usize::from(js[best]))
                })
                .collect()
        }
        Coloring::WeightsRgb => {
            let inf = need()?;
            let per = inf.per_vertex();
            inf.joints()
                .chunks_exact(per)
                .zip(inf.weights().chunks_exact(per))
                .map(|(js, ws)| {
                    let mut c = [0.0, 0.0, 0.0, 1.0];
                    for (j, w) in js.iter().zip(ws) {
                        if usize::from(*j) < 3 {
                            c[usize::from(*j)] += w;
                        }
                    }
                    c
                })
                .collect()
        }
        Coloring::WeightOf(joint) => {
            let inf = need()?;
            let per = inf.per_vertex();
            inf.joints()
                .chunks_exact(per)
                .zip(inf.weights().chunks_exact(per))
                .map(|(js, ws)| heat(js.iter().zip(ws).filter(|(j, _)| **j == *joint).map(|(_, w)| *w).sum()))
                .collect()
        }
        Coloring::Normals => {
            if normals.len() != n {
                return Err(RenderError::Input(format!("{} normals for {n} vertices", normals.len())));
            }
            normals.iter().map(|v| [v.x * 0.5 + 0.5, v.y * 0.5 + 0.5, v.z * 0.5 + 0.5, 1.0]).collect()
        }
        Coloring::JointIndices => {
            let inf = need()?;
            let scale = 1.0 / inf.joints().iter().copied().max().unwrap_or(0).max(1) as f32;
            inf.joints()
                .chunks_exact(inf.per_vertex())
                .map(|js| {
                    let mut c = [0.0, 0.0, 0.0, 1.0];
                    for (o, j) in c.iter_mut().zip(js.iter().take(3)) {
                        *o = f32::from(*j) * scale;
                    }
                    c
                })
                .collect()
        }
    })
}

fn color_buffer(ctx: &Arc<Context>, colors: &[[f32; 4]]) -> Result<Buffer, RenderError> {
    Buffer::device_local(
        ctx,
        bytemuck::cast_slice(colors),
        vk::BufferUsageFlags::VERTEX_BUFFER,
        vk::PipelineStageFlags2::VERTEX_ATTRIBUTE_INPUT,
        vk::AccessFlags2::VERTEX_ATTRIBUTE_READ,
        "mesh colours",
    )
}

/// A mesh in device-local buffers.
#[derive(Debug)]
pub struct GpuMesh {
    pub(crate) vertices: Buffer,
    pub(crate) colors: Buffer,
    /// Both texture coordinate sets, one vec4 a vertex (zeros where the mesh has none).
    pub(crate) uvs: Buffer,
    /// Index of the material in the renderer (0: the default).
    pub(crate) material: usize,
    /// Shaded by the material (the colouring is [`Coloring::Material`]).
    pub(crate) shaded: bool,
    /// `COLOR_0`, for [`Coloring::Material`].
    material_colors: Vec<[f32; 4]>,
    pub(crate) indices: Buffer,
    pub(crate) joints: Option<Buffer>,
    pub(crate) weights: Option<Buffer>,
    vertex_count: u32,
    index_count: u32,
    per_vertex: u32,
    joint_bound: usize,
    bind_positions: Vec<Vec3>,
    bind_normals: Vec<Vec3>,
    influences: Option<Influences>,
    /// Morph-target deltas (two vec4 a target and vertex, target-major: position, normal;
    /// `MorphDeltas` in `shaders/skin_inputs.glsl`) and the target count.
    pub(crate) morph: Option<(Buffer, u32)>,
}

impl GpuMesh {
    /// Uploads `mesh` (normals computed from the triangles when it has none).
    ///
    /// # Errors
    /// Indices out of range, bad colours, or a failing upload.
    pub fn new(ctx: &Arc<Context>, mesh: &Mesh, coloring: &Coloring) -> Result<Self, RenderError> {
        Self::with_surface(ctx, mesh, coloring, &Surface::of(crate::material::MaterialId::DEFAULT))
    }

    /// Uploads `mesh` with the surface attributes and material of `surface` (tangents,
    /// `COLOR_0`, second texture coordinates), coloured by `coloring`
    /// ([`Coloring::Material`] to shade it with the material). The material is not checked
    /// here ([`crate::Renderer::add_surface_mesh`] does).
    ///
    /// # Errors
    /// As [`GpuMesh::new`]; surface attributes that are neither empty nor one a vertex.
    pub(crate) fn with_surface(
        ctx: &Arc<Context>,
        mesh: &Mesh,
        coloring: &Coloring,
        surface: &Surface<'_>,
    ) -> Result<Self, RenderError> {
        let n = mesh.positions.len();
        for (what, len) in [
            ("tangents", surface.tangents.len()),
            ("colours", surface.colors.len()),
            ("second texture coordinates", surface.uvs1.len()),
            ("texture coordinates", mesh.uvs.len()),
        ] {
            if len != 0 && len != n {
                return Err(RenderError::Input(format!("{len} {what} for {n} vertices")));
            }
        }
        if let Some((i, &v)) = mesh.indices.iter().enumerate().find(|(_, v)| **v as usize >= n) {
            return Err(RenderError::Input(format!("index {i} names vertex {v} of {n}")));
        }
        if !mesh.indices.len().is_multiple_of(3) {
            return Err(RenderError::Input(format!("{} indices do not make whole triangles", mesh.indices.len())));
        }
        if let Some(inf) = &mesh.influences
            && inf.vertex_count() != n
        {
            return Err(RenderError::Input(format!("{} influence vertices for {n} positions", inf.vertex_count())));
        }
        let normals = if mesh.normals.len() == n { mesh.normals.clone() } else { mesh.smooth_normals() };
        let verts: Vec<GpuVertex> = (0..n)
            .map(|i| match surface.tangents.get(i) {
                Some(t) => GpuVertex::with_tangent(&mesh.positions[i], &normals[i], t),
                None => GpuVertex::new(&mesh.positions[i], &normals[i]),
            })
            .collect();
        let material_colors = surface.colors.to_vec();
        let colors = match coloring {
            Coloring::Material if !material_colors.is_empty() => material_colors.clone(),
            _ => vertex_colors(coloring, n, mesh.influences.as_ref(), &normals)?,
        };
        let uv = |set: &[[f32; 2]], i: usize| set.get(i).copied().unwrap_or([0.0; 2]);
        let uvs: Vec<[f32; 4]> = (0..n)
            .map(|i| {
                let ([a, b], [c, d]) = (uv(&mesh.uvs, i), uv(surface.uvs1, i));
                [a, b, c, d]
            })
            .collect();
        let vs = vk::PipelineStageFlags2::VERTEX_ATTRIBUTE_INPUT
            | vk::PipelineStageFlags2::VERTEX_SHADER
            | vk::PipelineStageFlags2::COMPUTE_SHADER;
        let read = vk::AccessFlags2::VERTEX_ATTRIBUTE_READ | vk::AccessFlags2::SHADER_STORAGE_READ;
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let vertices = Buffer::device_local(
            ctx,
            bytemuck::cast_slice(&verts),
            vk::BufferUsageFlags::VERTEX_BUFFER | storage,
            vs,
            read,
            "mesh vertices",
        )?;
        let colors = color_buffer(ctx, &colors)?;
        let uvs = Buffer::device_local(
            ctx,
            bytemuck::cast_slice(&uvs),
            vk::BufferUsageFlags::VERTEX_BUFFER,
            vk::PipelineStageFlags2::VERTEX_ATTRIBUTE_INPUT,
            vk::AccessFlags2::VERTEX_ATTRIBUTE_READ,
            "mesh texture coordinates",
        )?;
        let indices = Buffer::device_local(
            ctx,
            bytemuck::cast_slice(&mesh.indices),
            vk::BufferUsageFlags::INDEX_BUFFER,
            vk::PipelineStageFlags2::INDEX_INPUT,
            vk::AccessFlags2::INDEX_READ,
            "mesh indices",
        )?;
        let (joints, weights, per_vertex, joint_bound) = match &mesh.influences {
            Some(inf) => {
                let j: Vec<u32> = inf.joints().iter().map(|&j| u32::from(j)).collect();
                let sr = vk::AccessFlags2::SHADER_STORAGE_READ;
                let st = vk::PipelineStageFlags2::VERTEX_SHADER | vk::PipelineStageFlags2::COMPUTE_SHADER;
                (
                    Some(Buffer::device_local(ctx, bytemuck::cast_slice(&j), storage, st, sr, "mesh joints")?),
                    Some(Buffer::device_local(
                        ctx,
                        bytemuck::cast_slice(inf.weights()),
                        storage,
                        st,
                        sr,
                        "mesh weights",
                    )?),
                    inf.per_vertex() as u32,
                    inf.joint_bound(),
                )
            }
            None => (None, None, 0, 0),
        };
        Ok(Self {
            vertices,
            colors,
            uvs,
            material: surface.material.0,
            shaded: *coloring == Coloring::Material,
            material_colors,
            indices,
            joints,
            weights,
            vertex_count: n as u32,
            index_count: mesh.indices.len() as u32,
            per_vertex,
            joint_bound,
            bind_positions: mesh.positions.clone(),
            bind_normals: normals,
            influences: mesh.influences.clone(),
            morph: None,
        })
    }

    /// Uploads the deltas of `targets` (replacing earlier ones). The caller makes sure no
    /// frame using the mesh is in flight (see [`crate::Renderer::add_morph_targets`]).
    ///
    /// # Errors
    /// Targets for another vertex count, more than 2^32 targets, or a failing upload.
    pub(crate) fn set_morph_targets(&mut self, ctx: &Arc<Context>, targets: &MorphTargets) -> Result<(), RenderError> {
        let n = self.vertex_count as usize;
        if targets.vertex_count() != n {
            return Err(RenderError::Input(format!(
                "morph targets for {} vertices, the mesh has {n}",
                targets.vertex_count()
            )));
        }
        let count = u32::try_from(targets.target_count())
            .map_err(|_| RenderError::Input("more than 2^32 morph targets".into()))?;
        if count == 0 {
            self.morph = None;
            return Ok(());
        }
        let (pd, nd) = (targets.position_deltas(), targets.normal_deltas());
        let deltas: Vec<[f32; 4]> = (0..n * count as usize)
            .flat_map(|i| {
                let p = pd.get(i).copied().unwrap_or_else(Vec3::zeros);
                let q = nd.get(i).copied().unwrap_or_else(Vec3::zeros);
                [[p.x, p.y, p.z, 0.0], [q.x, q.y, q.z, 0.0]]
            })
            .collect();
        let buffer = Buffer::device_local(
            ctx,
            bytemuck::cast_slice(&deltas),
            vk::BufferUsageFlags::STORAGE_BUFFER,
            vk::PipelineStageFlags2::VERTEX_SHADER | vk::PipelineStageFlags2::COMPUTE_SHADER,
            vk::AccessFlags2::SHADER_STORAGE_READ,
            "mesh morph deltas",
        )?;
        self.morph = Some((buffer, count));
        Ok(())
    }

    /// Morph targets uploaded with [`crate::Renderer::add_morph_targets`] (0 without).
    #[inline]
    pub fn morph_target_count(&self) -> u32 {
        self.morph.as_ref().map_or(0, |(_, c)| *c)
    }

    /// Replaces the vertex colours. The caller makes sure no frame using the mesh is in
    /// flight (see [`crate::Renderer::recolor`]).
    ///
    /// # Errors
    /// Bad colours for this mesh, or a failing upload.
    pub(crate) fn recolor(&mut self, ctx: &Arc<Context>, coloring: &Coloring) -> Result<(), RenderError> {
        let colors = match coloring {
            Coloring::Material if !self.material_colors.is_empty() => self.material_colors.clone(),
            _ => vertex_colors(coloring, self.vertex_count as usize, self.influences.as_ref(), &self.bind_normals)?,
        };
        self.colors = color_buffer(ctx, &colors)?;
        self.shaded = *coloring == Coloring::Material;
        Ok(())
    }

    /// True when the mesh is drawn with its material ([`Coloring::Material`]).
    #[inline]
    pub fn is_shaded_by_material(&self) -> bool {
        self.shaded
    }

    /// Number of vertices.
    #[inline]
    pub fn vertex_count(&self) -> u32 {
        self.vertex_count
    }

    /// Number of indices.
    #[inline]
    pub fn index_count(&self) -> u32 {
        self.index_count
    }

    /// Influences a vertex (0 for a static mesh).
    #[inline]
    pub fn influences_per_vertex(&self) -> u32 {
        self.per_vertex
    }

    /// The shortest palette the mesh can be skinned with.
    #[inline]
    pub fn joint_bound(&self) -> usize {
        self.joint_bound
    }

    /// True when the mesh has influences.
    #[inline]
    pub fn is_skinned(&self) -> bool {
        self.joints.is_some()
    }

    /// Bind-pose positions as uploaded.
    #[inline]
    pub fn bind_positions(&self) -> &[Vec3] {
        &self.bind_positions
    }

    /// Normals as uploaded (computed when the mesh had none).
    #[inline]
    pub fn bind_normals(&self) -> &[Vec3] {
        &self.bind_normals
    }
}
