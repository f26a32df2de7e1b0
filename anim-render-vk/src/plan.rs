//! The frame plan: a [`FrameData`] resolved once, before anything is recorded, into one
//! [`PlanItem`] per instance that names its graphics pipeline, the buffers its shaders read,
//! where its vertices come from, its compute work (pipeline and output slot) and its palette
//! range. Uploading, compute recording and pass recording then only read the plan; none of
//! them looks at [`Deform`] again.
//!
//! A new kind of deformation is one arm in [`FramePlan::build`] (checks, pipeline, bindings,
//! vertex source), plus its pipeline and any new [`Res`] it reads.

use crate::error::RenderError;
use crate::frame::{Deform, FrameData, MorphRange, SkinPath, active_morph_targets};
use crate::mesh::{GpuMesh, GpuVertex};
use crate::pipelines::{FLAG_DQ_SCALE, FLAG_MATERIAL, Push, binding};
use crate::texture::GpuMaterial;
use anim_core::skin::SkinMethod;
use ash::vk;

/// A graphics pipeline of [`crate::pipelines::GraphicsPipelines`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Gfx {
    /// Vertex buffer input (static, CPU-skinned and compute-skinned vertices).
    Mesh,
    /// Vertex-shader linear blend skinning (vertices pulled from storage).
    SkinLbs,
    /// Vertex-shader dual-quaternion skinning (vertices pulled from storage).
    SkinDq,
    /// [`Gfx::SkinLbs`] of morphed vertices.
    SkinLbsMorph,
    /// [`Gfx::SkinDq`] of morphed vertices.
    SkinDqMorph,
    /// Linear blend skinning from a texel buffer of bone matrices.
    BoneTexture,
}

/// A compute pipeline of [`crate::pipelines::ComputePipelines`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Comp {
    /// Linear blend skinning.
    Lbs,
    /// Dual-quaternion skinning.
    Dq,
    /// Linear blend skinning of morphed vertices.
    LbsMorph,
    /// Dual-quaternion skinning of morphed vertices.
    DqMorph,
}

/// A buffer a plan item's shaders read, resolved to a handle of the frame slot or mesh when
/// recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Res {
    /// The mesh's bind-pose vertices.
    BindVertices,
    /// The mesh's joint indices.
    Joints,
    /// The mesh's weights.
    Weights,
    /// The buffer of the item's palette range.
    Palette,
    /// The compute output of the item's slot.
    ComputeOut,
    /// The frame's matrices as an RGBA32F texel view.
    BoneTexels,
    /// The frame's DQ scale matrices (bound for every DQ draw; read only with
    /// `FLAG_DQ_SCALE`).
    DqScales,
    /// The mesh's morph-target deltas.
    MorphDeltas,
    /// The item's range of the frame's active morph-target lists.
    MorphActive,
}

const BIND_VERTICES: (u32, Res) = (binding::BIND_VERTICES, Res::BindVertices);
const JOINTS: (u32, Res) = (binding::JOINTS, Res::Joints);
const WEIGHTS: (u32, Res) = (binding::WEIGHTS, Res::Weights);
const PALETTE: (u32, Res) = (binding::PALETTE, Res::Palette);
const OUT: (u32, Res) = (binding::OUT_VERTICES, Res::ComputeOut);
const SCALES: (u32, Res) = (binding::DQ_SCALES, Res::DqScales);
/// LBS skinning inputs read by vertex index.
const LBS_INPUTS: &[(u32, Res)] = &[BIND_VERTICES, JOINTS, WEIGHTS, PALETTE];
/// DQ skinning inputs read by vertex index.
const DQ_INPUTS: &[(u32, Res)] = &[BIND_VERTICES, JOINTS, WEIGHTS, PALETTE, SCALES];
/// LBS compute skinning: the inputs and the output.
const LBS_COMPUTE: &[(u32, Res)] = &[BIND_VERTICES, JOINTS, WEIGHTS, PALETTE, OUT];
/// DQ compute skinning: the inputs and the output.
const DQ_COMPUTE: &[(u32, Res)] = &[BIND_VERTICES, JOINTS, WEIGHTS, PALETTE, SCALES, OUT];
const DELTAS: (u32, Res) = (binding::MORPH_DELTAS, Res::MorphDeltas);
const ACTIVE: (u32, Res) = (binding::MORPH_ACTIVE, Res::MorphActive);
/// [`LBS_INPUTS`] and the morph data.
const LBS_MORPH_INPUTS: &[(u32, Res)] = &[BIND_VERTICES, JOINTS, WEIGHTS, PALETTE, DELTAS, ACTIVE];
/// [`DQ_INPUTS`] and the morph data.
const DQ_MORPH_INPUTS: &[(u32, Res)] = &[BIND_VERTICES, JOINTS, WEIGHTS, PALETTE, SCALES, DELTAS, ACTIVE];
/// [`LBS_COMPUTE`] and the morph data.
const LBS_MORPH_COMPUTE: &[(u32, Res)] = &[BIND_VERTICES, JOINTS, WEIGHTS, PALETTE, OUT, DELTAS, ACTIVE];
/// [`DQ_COMPUTE`] and the morph data.
const DQ_MORPH_COMPUTE: &[(u32, Res)] = &[BIND_VERTICES, JOINTS, WEIGHTS, PALETTE, SCALES, OUT, DELTAS, ACTIVE];
/// Joints, weights and the bone texels.
const BONE_TEXTURE: &[(u32, Res)] =
    &[(binding::JOINTS, Res::Joints), (binding::WEIGHTS, Res::Weights), (binding::BONES, Res::BoneTexels)];

/// A per-frame palette buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PaletteBuffer {
    /// [`FrameData::matrices`].
    Matrices,
    /// [`FrameData::dual_quats`].
    DualQuats,
}

/// The palette entries an item reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PaletteRange {
    /// Which buffer.
    pub buffer: PaletteBuffer,
    /// First entry (also `Push::palette_offset`).
    pub first: u32,
    /// Entries the mesh can index.
    pub len: u32,
}

/// Where a draw's vertex buffer binding 0 comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VertexSource {
    /// The mesh's bind-pose vertices.
    Mesh,
    /// The frame's CPU-skinned vertices, from this byte offset.
    CpuVertices(u64),
    /// The compute output of the item's slot.
    ComputeOut,
    /// None: the vertex shader pulls vertices from storage (only colours are bound).
    Pulled,
}

/// Compute work recorded before the pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ComputeWork {
    /// The pipeline.
    pub pipeline: Comp,
    /// Its descriptors.
    pub bindings: &'static [(u32, Res)],
    /// Index of the output buffer in the frame slot.
    pub slot: u32,
}

/// One instance, resolved.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PlanItem {
    /// Index of the mesh in the renderer.
    pub mesh: usize,
    /// Graphics pipeline of the draw.
    pub pipeline: Gfx,
    /// Descriptors of the draw besides the camera.
    pub bindings: &'static [(u32, Res)],
    /// Vertex buffer binding 0.
    pub vertices: VertexSource,
    /// Skinning in a compute pass first.
    pub compute: Option<ComputeWork>,
    /// The palette read by the draw or the compute pass.
    pub palette: Option<PaletteRange>,
    /// Push constants of the draw (the compute pass uses them too).
    pub push: Push,
    /// The item's active morph-target list in [`FramePlan::morph_list`]: byte offset and
    /// length (`None`: not morphed, or no target with a non-zero weight).
    pub morph: Option<(u64, u64)>,
    /// The material whose block and textures the draw binds (the default one for a debug
    /// colouring, which does not read them).
    pub material: usize,
    /// Drawn by the blending pipeline, after the opaque items.
    pub blend: bool,
    /// Cull mode of the draw: back faces for a single-sided material, none otherwise.
    pub cull: vk::CullModeFlags,
    /// Front face: counter-clockwise, clockwise under a model matrix that mirrors.
    pub front_face: vk::FrontFace,
}

/// A frame, resolved. Kept by the renderer and rebuilt every frame without allocating once
/// its vector has grown to the frame's instance count.
#[derive(Debug, Default)]
pub(crate) struct FramePlan {
    /// One item per instance, in instance order.
    pub items: Vec<PlanItem>,
    /// Item indices in draw order: opaque items as given, then blended ones farthest
    /// first.
    pub order: Vec<u32>,
    /// Blended items and their squared distance from the eye (sorting scratch).
    blended: Vec<(f32, u32)>,
    /// Compute output buffers needed (slots `0..compute_slots`).
    pub compute_slots: u32,
    /// Bytes each compute slot needs.
    pub compute_bytes: Vec<u64>,
    /// The active morph-target lists of the morphed items (`MorphList` in
    /// `shaders/skin_inputs.glsl`: count and vertex count, two padding words, then (target,
    /// weight bits) pairs), each starting at a multiple of the device's storage-buffer
    /// offset alignment. Staged into the frame slot.
    pub morph_list: Vec<[u32; 2]>,
    /// Depth-tested line vertices (first in the line buffer).
    pub line_vertices: u32,
    /// Overlay line vertices (after the depth-tested ones).
    pub overlay_vertices: u32,
    /// Clear colour.
    pub clear_color: [f32; 4],
}

impl FramePlan {
    /// Resolves `frame` against `meshes`, checking that every instance fits the registered
    /// meshes and the frame's palettes. `max_texels` is the device's texel buffer limit.
    ///
    /// # Errors
    /// An instance that names an unknown mesh, skins a mesh without influences, or reads
    /// palette entries or CPU vertices the frame does not have; the message names it.
    /// Morph weights that do not fit the mesh's targets ([`RenderError::Input`]), or more
    /// than [`crate::MAX_ACTIVE_MORPH_TARGETS`] non-zero ones
    /// ([`RenderError::TooManyMorphTargets`]). `storage_align` is the device's
    /// `minStorageBufferOffsetAlignment`.
    pub(crate) fn build(
        &mut self,
        frame: &FrameData,
        meshes: &[GpuMesh],
        materials: &[GpuMaterial],
        max_texels: u32,
        storage_align: u64,
    ) -> Result<(), RenderError> {
        self.items.clear();
        self.order.clear();
        self.blended.clear();
        self.compute_bytes.clear();
        self.morph_list.clear();
        // Each list starts at a multiple of the alignment (in 8-byte entries).
        let align = (storage_align.max(16) / 8) as usize;
        self.compute_slots = 0;
        self.line_vertices = count(frame.lines.len(), "line vertices")?;
        self.overlay_vertices = count(frame.overlay_lines.len(), "overlay line vertices")?;
        self.clear_color = frame.clear_color;
        for (i, inst) in frame.instances.iter().enumerate() {
            let mesh = meshes
                .get(inst.mesh.0)
                .ok_or_else(|| RenderError::Input(format!("instance {i}: unknown mesh {}", inst.mesh.0)))?;
            let skinned = |what: &str| {
                if mesh.is_skinned() {
                    Ok(())
                } else {
                    Err(RenderError::Input(format!("instance {i}: {what} of a mesh without influences")))
                }
            };
            let range = |offset: u32, need: usize, len: usize, what: &str| {
                if offset as usize + need > len {
                    Err(RenderError::Input(format!(
                        "instance {i}: {what} at {offset} needs {need} entries, the frame has {len}"
                    )))
                } else {
                    Ok(())
                }
            };
            let palette = |buffer, first| PaletteRange { buffer, first, len: mesh.joint_bound() as u32 };
            let material = if mesh.shaded { mesh.material } else { 0 };
            let m = materials.get(material).ok_or_else(|| {
                RenderError::Input(format!("instance {i}: mesh {} names unknown material {material}", inst.mesh.0))
            })?;
            let mirrored = inst.model.fixed_view::<3, 3>(0, 0).determinant() < 0.0;
            let mut item = PlanItem {
                mesh: inst.mesh.0,
                pipeline: Gfx::Mesh,
                bindings: &[],
                vertices: VertexSource::Mesh,
                compute: None,
                palette: None,
                push: Push {
                    model: inst.model.data.0,
                    tint: [inst.tint[0], inst.tint[1], inst.tint[2], if inst.lit { 1.0 } else { 0.0 }],
                    palette_offset: 0,
                    influences: mesh.influences_per_vertex(),
                    vertex_count: mesh.vertex_count(),
                    out_offset: 0,
                    flags: 0,
                    scale_offset: 0,
                },
                morph: None,
                material,
                blend: mesh.shaded && m.blend,
                cull: if mesh.shaded && !m.double_sided { vk::CullModeFlags::BACK } else { vk::CullModeFlags::NONE },
                front_face: if mirrored { vk::FrontFace::CLOCKWISE } else { vk::FrontFace::COUNTER_CLOCKWISE },
            };
            if mesh.shaded {
                item.push.flags |= FLAG_MATERIAL;
            }
            match inst.deform {
                Deform::Static => {}
                Deform::Cpu { vertex_offset } => {
                    range(vertex_offset, mesh.vertex_count() as usize, frame.cpu_vertices.len(), "CPU vertices")?;
                    let stride = std::mem::size_of::<GpuVertex>() as u64;
                    item.vertices = VertexSource::CpuVertices(u64::from(vertex_offset) * stride);
                }
                Deform::Gpu { method, path, palette_offset, scale_offset, morph } => {
                    skinned("GPU skinning")?;
                    if let Some(m) = morph {
                        item.morph = self.morph_range(i, frame, mesh, path, m, align)?;
                    }
                    let morphed = item.morph.is_some();
                    // Per method: palette buffer and length, vertex-shader pipeline and
                    // bindings, compute pipeline and bindings.
                    let (buffer, len, (gfx, draw), compute) = match (method, morphed) {
                        (SkinMethod::Lbs, false) => (
                            PaletteBuffer::Matrices,
                            frame.matrices.len(),
                            (Gfx::SkinLbs, LBS_INPUTS),
                            (Comp::Lbs, LBS_COMPUTE),
                        ),
                        (SkinMethod::Dq, false) => (
                            PaletteBuffer::DualQuats,
                            frame.dual_quats.len(),
                            (Gfx::SkinDq, DQ_INPUTS),
                            (Comp::Dq, DQ_COMPUTE),
                        ),
                        (SkinMethod::Lbs, true) => (
                            PaletteBuffer::Matrices,
                            frame.matrices.len(),
                            (Gfx::SkinLbsMorph, LBS_MORPH_INPUTS),
                            (Comp::LbsMorph, LBS_MORPH_COMPUTE),
                        ),
                        (SkinMethod::Dq, true) => (
                            PaletteBuffer::DualQuats,
                            frame.dual_quats.len(),
                            (Gfx::SkinDqMorph, DQ_MORPH_INPUTS),
                            (Comp::DqMorph, DQ_MORPH_COMPUTE),
                        ),
                    };
                    range(palette_offset, mesh.joint_bound(), len, "palette")?;
                    item.palette = Some(palette(buffer, palette_offset));
                    item.push.palette_offset = palette_offset;
                    if let Some(at) = scale_offset {
                        if method != SkinMethod::Dq {
                            return Err(RenderError::Input(format!("instance {i}: scale matrices for {method:?}")));
                        }
                        range(at, mesh.joint_bound(), frame.dq_scales.len(), "DQ scales")?;
                        item.push.flags |= FLAG_DQ_SCALE;
                        item.push.scale_offset = at;
                    }
                    match path {
                        SkinPath::VertexShader => {
                            item.pipeline = gfx;
                            item.bindings = draw;
                            item.vertices = VertexSource::Pulled;
                        }
                        SkinPath::Compute => {
                            let (pipeline, bindings) = compute;
                            item.compute = Some(ComputeWork { pipeline, bindings, slot: self.compute_slots });
                            item.vertices = VertexSource::ComputeOut;
                            self.compute_slots += 1;
                            self.compute_bytes.push(u64::from(mesh.vertex_count()) * 32);
                        }
                        SkinPath::BoneTexture => {
                            if method != SkinMethod::Lbs {
                                return Err(RenderError::Unsupported { path, method });
                            }
                            let texels = (palette_offset as usize + mesh.joint_bound()) * 4;
                            if texels > max_texels as usize {
                                return Err(RenderError::Input(format!(
                                    "instance {i}: bone texture beyond the texel limit"
                                )));
                            }
                            item.pipeline = Gfx::BoneTexture;
                            item.bindings = BONE_TEXTURE;
                        }
                    }
                }
            }
            if item.blend {
                let at = inst.model.column(3).xyz() - frame.camera.eye;
                self.blended.push((at.norm_squared(), i as u32));
            } else {
                self.order.push(i as u32);
            }
            self.items.push(item);
        }
        // Blended items back to front (an unstable sort of a reused vector allocates
        // nothing; ties keep instance order).
        self.blended.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        self.order.extend(self.blended.iter().map(|(_, i)| *i));
        Ok(())
    }

    /// Checks instance `i`'s morph weights `m` against `mesh` and appends its active list
    /// to [`FramePlan::morph_list`]: its byte range, or `None` when no weight is non-zero
    /// (the item is then drawn by the plain passes).
    fn morph_range(
        &mut self,
        i: usize,
        frame: &FrameData,
        mesh: &GpuMesh,
        path: SkinPath,
        m: MorphRange,
        align: usize,
    ) -> Result<Option<(u64, u64)>, RenderError> {
        let end = m.first as usize + m.count as usize;
        let weights = frame.morph_weights.get(m.first as usize..end).ok_or_else(|| {
            RenderError::Input(format!(
                "instance {i}: morph weights {}..{end}, the frame has {}",
                m.first,
                frame.morph_weights.len()
            ))
        })?;
        if m.count != mesh.morph_target_count() {
            return Err(RenderError::Input(format!(
                "instance {i}: {} morph weights, the mesh has {} morph targets",
                m.count,
                mesh.morph_target_count()
            )));
        }
        // Only the error path formats the instance's name.
        let active = match active_morph_targets(weights, "") {
            Ok(a) => a,
            Err(RenderError::TooManyMorphTargets { active, max, .. }) => {
                return Err(RenderError::TooManyMorphTargets { what: format!("instance {i}"), active, max });
            }
            Err(RenderError::Input(e)) => return Err(RenderError::Input(format!("instance {i}{e}"))),
            Err(e) => return Err(e),
        };
        if active == 0 {
            return Ok(None);
        }
        if path == SkinPath::BoneTexture {
            return Err(RenderError::MorphUnsupported { path });
        }
        let pad = self.morph_list.len().next_multiple_of(align);
        self.morph_list.resize(pad, [0, 0]);
        let start = self.morph_list.len();
        self.morph_list.push([active as u32, mesh.vertex_count()]);
        self.morph_list.push([0, 0]);
        self.morph_list
            .extend(weights.iter().enumerate().filter(|(_, w)| **w != 0.0).map(|(t, w)| [t as u32, w.to_bits()]));
        let entry = std::mem::size_of::<[u32; 2]>() as u64;
        Ok(Some((start as u64 * entry, (self.morph_list.len() - start) as u64 * entry)))
    }

    /// The items with compute work, in order.
    pub(crate) fn compute_items(&self) -> impl Iterator<Item = (&PlanItem, ComputeWork)> {
        self.items.iter().filter_map(|i| i.compute.map(|c| (i, c)))
    }
}

fn count(len: usize, what: &str) -> Result<u32, RenderError> {
    u32::try_from(len).map_err(|_| RenderError::Input(format!("more than 2^32 {what} in one frame")))
}
