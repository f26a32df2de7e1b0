//! What one frame in flight owns: its command buffer and fence, the staging and device
//! buffers of its frame's data, the compute skinning outputs and the bone texel view.

use crate::context::Context;
use crate::error::{RenderError, VkCall};
use crate::plan::PaletteBuffer;
use crate::resources::{Buffer, StagedBuffer};
use ash::vk;
use std::sync::Arc;

/// What one frame in flight owns.
pub(super) struct FrameSlot {
    pub(super) fence: vk::Fence,
    pub(super) cmd: vk::CommandBuffer,
    pub(super) bone_view: Option<(vk::Buffer, vk::BufferView)>,
    pub(super) compute_out: Vec<Buffer>,
    /// Per instance of the slot's frame: its compute output slot and vertex count, when it
    /// was skinned by the compute path (for [`Renderer::compute_skinned`]).
    ///
    /// [`Renderer::compute_skinned`]: crate::Renderer::compute_skinned
    pub(super) compute_of: Vec<Option<(u32, u32)>>,
    pub(super) camera: StagedBuffer,
    pub(super) matrices: StagedBuffer,
    pub(super) dual_quats: StagedBuffer,
    pub(super) dq_scales: StagedBuffer,
    pub(super) cpu_vertices: StagedBuffer,
    /// The plan's active morph-target lists.
    pub(super) morph_active: StagedBuffer,
    pub(super) lines: StagedBuffer,
}

impl FrameSlot {
    pub(super) fn new(ctx: &Arc<Context>, cmd: vk::CommandBuffer) -> Result<Self, RenderError> {
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let camera = StagedBuffer::new(ctx, 256, vk::BufferUsageFlags::UNIFORM_BUFFER, "camera")?;
        let matrices =
            StagedBuffer::new(ctx, 64 * 256, storage | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER, "palette matrices")?;
        let dual_quats = StagedBuffer::new(ctx, 32 * 256, storage, "palette dual quaternions")?;
        let dq_scales = StagedBuffer::new(ctx, 48 * 256, storage, "palette DQ scales")?;
        let cpu_vertices =
            StagedBuffer::new(ctx, 32 * 1024, vk::BufferUsageFlags::VERTEX_BUFFER, "CPU-skinned vertices")?;
        let lines = StagedBuffer::new(ctx, 28 * 1024, vk::BufferUsageFlags::VERTEX_BUFFER, "lines")?;
        let morph_active = StagedBuffer::new(ctx, 4096, storage, "active morph targets")?;
        // SAFETY: a valid device; the fence is destroyed in `Renderer::drop` (or below on
        // error, never having been used).
        let fence = unsafe {
            ctx.device().create_fence(&vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED), None)
        }
        .vk("vkCreateFence")?;
        Ok(Self {
            fence,
            cmd,
            bone_view: None,
            compute_out: Vec::new(),
            compute_of: Vec::new(),
            camera,
            matrices,
            dual_quats,
            dq_scales,
            cpu_vertices,
            morph_active,
            lines,
        })
    }

    /// The buffer of a palette range.
    pub(super) fn palette(&self, b: PaletteBuffer) -> vk::Buffer {
        match b {
            PaletteBuffer::Matrices => self.matrices.buffer().raw(),
            PaletteBuffer::DualQuats => self.dual_quats.buffer().raw(),
        }
    }

    /// Destroys the fence and bone view. The GPU must be done with the slot.
    pub(super) fn destroy(&mut self, d: &ash::Device) {
        // SAFETY: the caller waited for the device to be idle, so no submission uses the
        // view or the fence; both were created from `d`.
        unsafe {
            if let Some((_, v)) = self.bone_view.take() {
                d.destroy_buffer_view(v, None);
            }
            d.destroy_fence(self.fence, None);
        }
    }
}

/// Keeps the slot's RGBA32F view of its matrix buffer current (the buffer is replaced when
/// it grows).
pub(super) fn ensure_bone_view(ctx: &Context, slot: &mut FrameSlot) -> Result<(), RenderError> {
    let buf = slot.matrices.buffer();
    if slot.bone_view.is_some_and(|(b, _)| b == buf.raw()) {
        return Ok(());
    }
    let d = ctx.device();
    if let Some((_, v)) = slot.bone_view.take() {
        // SAFETY: the slot's previous frame has completed (fence waited in `prepare`), so no
        // submission uses the view.
        unsafe { d.destroy_buffer_view(v, None) };
    }
    let max = u64::from(ctx.limits().max_texel_buffer_elements) * 16;
    let range = buf.size().min(max) / 16 * 16;
    let info = vk::BufferViewCreateInfo::default()
        .buffer(buf.raw())
        .format(vk::Format::R32G32B32A32_SFLOAT)
        .offset(0)
        .range(range);
    // SAFETY: the buffer was created with UNIFORM_TEXEL_BUFFER usage and the range is a
    // multiple of the texel size within the buffer and the device's texel limit.
    let view = unsafe { d.create_buffer_view(&info, None) }.vk("vkCreateBufferView")?;
    slot.bone_view = Some((buf.raw(), view));
    Ok(())
}
