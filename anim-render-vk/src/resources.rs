//! Buffers and images that own their memory (released in `Drop`), barrier helpers, and
//! uploads structured for discrete GPUs: device-local memory filled from a host-visible
//! staging buffer by a copy, followed by a barrier towards the consuming stages.

use crate::context::Context;
use crate::error::{RenderError, VkCall};
use ash::vk;
use gpu_allocator::MemoryLocation;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use std::sync::Arc;

/// A buffer and its memory.
pub struct Buffer {
    ctx: Arc<Context>,
    raw: vk::Buffer,
    allocation: Option<Allocation>,
    size: u64,
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer").field("raw", &self.raw).field("size", &self.size).finish()
    }
}

impl Buffer {
    /// Creates a buffer of `size` bytes (at least 16) in `location`.
    ///
    /// # Errors
    /// [`RenderError::DeviceLimit`] above `maxBufferSize` or `maxMemoryAllocationSize`,
    /// [`RenderError::OutOfDeviceMemory`] above the heap or when memory runs out (all named
    /// `name`), or a failing call.
    pub fn new(
        ctx: &Arc<Context>,
        size: u64,
        usage: vk::BufferUsageFlags,
        location: MemoryLocation,
        name: &str,
    ) -> Result<Self, RenderError> {
        let size = size.max(16);
        let max = ctx.max_buffer_size();
        if size > max {
            return Err(RenderError::DeviceLimit { what: name.into(), limit: "maxBufferSize", requested: size, max });
        }
        let d = ctx.device();
        let info = vk::BufferCreateInfo::default().size(size).usage(usage).sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: a valid device; the create info has a non-zero size within `maxBufferSize`
        // and exclusive sharing.
        let raw = unsafe { d.create_buffer(&info, None) }.vk("vkCreateBuffer")?;
        // SAFETY: `raw` is a live buffer of this device.
        let requirements = unsafe { d.get_buffer_memory_requirements(raw) };
        if let Err(e) = ctx.check_memory(name, &requirements) {
            // SAFETY: the buffer has no memory and is not in use.
            unsafe { d.destroy_buffer(raw, None) };
            return Err(e);
        }
        let allocation = ctx.with_allocator(|a| {
            a.allocate(&AllocationCreateDesc {
                name,
                requirements,
                location,
                linear: true,
                allocation_scheme: AllocationScheme::GpuAllocatorManaged,
            })
        });
        let allocation = match allocation {
            Ok(a) => a,
            Err(source) => {
                // SAFETY: the buffer has no memory and is not in use.
                unsafe { d.destroy_buffer(raw, None) };
                return Err(RenderError::from_allocation(name, source));
            }
        };
        // SAFETY: memory and offset come from an allocation made for these requirements.
        if let Err(result) = unsafe { d.bind_buffer_memory(raw, allocation.memory(), allocation.offset()) } {
            // SAFETY: the buffer was never bound or used.
            unsafe { d.destroy_buffer(raw, None) };
            let _ = ctx.with_allocator(|a| a.free(allocation));
            return Err(RenderError::from_vk("vkBindBufferMemory", result));
        }
        Ok(Self { ctx: ctx.clone(), raw, allocation: Some(allocation), size })
    }

    /// A device-local buffer holding `bytes`, filled through a staging buffer and a copy; a
    /// barrier makes the data visible to `dst_stage`/`dst_access`. Waits for the copy.
    ///
    /// # Errors
    /// Creation, allocation or submission failed.
    pub fn device_local(
        ctx: &Arc<Context>,
        bytes: &[u8],
        usage: vk::BufferUsageFlags,
        dst_stage: vk::PipelineStageFlags2,
        dst_access: vk::AccessFlags2,
        name: &str,
    ) -> Result<Self, RenderError> {
        let dst = Self::new(
            ctx,
            bytes.len() as u64,
            usage | vk::BufferUsageFlags::TRANSFER_DST,
            MemoryLocation::GpuOnly,
            name,
        )?;
        if bytes.is_empty() {
            return Ok(dst);
        }
        let mut staging = Self::new(
            ctx,
            bytes.len() as u64,
            vk::BufferUsageFlags::TRANSFER_SRC,
            MemoryLocation::CpuToGpu,
            &format!("{name} (staging)"),
        )?;
        staging.write_bytes(0, bytes)?;
        ctx.run_once(|cmd| {
            copy_buffer(ctx.device(), cmd, &staging, &dst, bytes.len() as u64);
            buffer_barrier(
                ctx.device(),
                cmd,
                dst.raw,
                (vk::PipelineStageFlags2::COPY, vk::AccessFlags2::TRANSFER_WRITE),
                (dst_stage, dst_access),
            );
        })?;
        Ok(dst)
    }

    /// The Vulkan handle.
    #[inline]
    pub fn raw(&self) -> vk::Buffer {
        self.raw
    }

    /// Size in bytes.
    #[inline]
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Copies `bytes` into a host-visible buffer at byte `offset`.
    ///
    /// # Errors
    /// The buffer is not host visible or the range does not fit.
    pub fn write_bytes(&mut self, offset: usize, bytes: &[u8]) -> Result<(), RenderError> {
        let size = self.size;
        let map = self
            .allocation
            .as_mut()
            .and_then(Allocation::mapped_slice_mut)
            .ok_or_else(|| RenderError::Input("write to a buffer that is not host visible".into()))?;
        let end = offset
            .checked_add(bytes.len())
            .filter(|e| *e as u64 <= size)
            .ok_or_else(|| RenderError::Input(format!("write of {} bytes at {offset} into {size}", bytes.len())))?;
        map[offset..end].copy_from_slice(bytes);
        Ok(())
    }

    /// The contents of a host-visible buffer.
    ///
    /// # Errors
    /// The buffer is not host visible.
    pub fn mapped(&self) -> Result<&[u8], RenderError> {
        self.allocation
            .as_ref()
            .and_then(Allocation::mapped_slice)
            .map(|s| &s[..self.size as usize])
            .ok_or_else(|| RenderError::Input("read of a buffer that is not host visible".into()))
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: the owner guarantees the GPU no longer uses the buffer (frames wait for
        // their fence before resources are replaced); buffer first, then its memory.
        unsafe { self.ctx.device().destroy_buffer(self.raw, None) };
        if let Some(a) = self.allocation.take() {
            let _ = self.ctx.with_allocator(|al| al.free(a));
        }
    }
}

/// Records a copy of the first `size` bytes of `src` into `dst`.
pub fn copy_buffer(d: &ash::Device, cmd: vk::CommandBuffer, src: &Buffer, dst: &Buffer, size: u64) {
    if size == 0 {
        return;
    }
    let region = [vk::BufferCopy { src_offset: 0, dst_offset: 0, size }];
    assert!(size <= src.size && size <= dst.size, "copy of {size} bytes between {} and {}", src.size, dst.size);
    // SAFETY: callers pass a command buffer in the recording state, outside a render pass;
    // both buffers are alive (borrowed) and hold `size` bytes (asserted above).
    unsafe { d.cmd_copy_buffer(cmd, src.raw, dst.raw, &region) };
}

/// Records a buffer memory barrier (synchronization2) over the whole buffer.
pub fn buffer_barrier(
    d: &ash::Device,
    cmd: vk::CommandBuffer,
    buffer: vk::Buffer,
    src: (vk::PipelineStageFlags2, vk::AccessFlags2),
    dst: (vk::PipelineStageFlags2, vk::AccessFlags2),
) {
    let b = [vk::BufferMemoryBarrier2::default()
        .buffer(buffer)
        .offset(0)
        .size(vk::WHOLE_SIZE)
        .src_stage_mask(src.0)
        .src_access_mask(src.1)
        .dst_stage_mask(dst.0)
        .dst_access_mask(dst.1)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)];
    // SAFETY: callers pass a command buffer in the recording state, outside a render pass,
    // and a buffer of this device; the barrier covers the whole buffer on one queue family.
    unsafe { d.cmd_pipeline_barrier2(cmd, &vk::DependencyInfo::default().buffer_memory_barriers(&b)) };
}

/// Records an image layout transition with a memory barrier.
#[allow(clippy::too_many_arguments)]
pub fn image_barrier(
    d: &ash::Device,
    cmd: vk::CommandBuffer,
    image: vk::Image,
    aspect: vk::ImageAspectFlags,
    layouts: (vk::ImageLayout, vk::ImageLayout),
    src: (vk::PipelineStageFlags2, vk::AccessFlags2),
    dst: (vk::PipelineStageFlags2, vk::AccessFlags2),
) {
    let b = [vk::ImageMemoryBarrier2::default()
        .image(image)
        .old_layout(layouts.0)
        .new_layout(layouts.1)
        .src_stage_mask(src.0)
        .src_access_mask(src.1)
        .dst_stage_mask(dst.0)
        .dst_access_mask(dst.1)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .subresource_range(vk::ImageSubresourceRange {
            aspect_mask: aspect,
            base_mip_level: 0,
            level_count: 1,
            base_array_layer: 0,
            layer_count: 1,
        })];
    // SAFETY: callers pass a command buffer in the recording state, outside a render pass,
    // an image of this device whose current layout is `layouts.0` (or UNDEFINED, which
    // discards), and an `aspect` the image's format has.
    unsafe { d.cmd_pipeline_barrier2(cmd, &vk::DependencyInfo::default().image_memory_barriers(&b)) };
}

/// Per-frame data for the GPU: written on the host into a staging buffer, copied into a
/// device-local buffer by the frame's command buffer, then a barrier towards the consumers.
/// Grows (reallocating both buffers) only when a frame needs more room than any before.
pub struct StagedBuffer {
    name: String,
    usage: vk::BufferUsageFlags,
    staging: Buffer,
    device: Buffer,
    len: u64,
}

impl std::fmt::Debug for StagedBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagedBuffer").field("name", &self.name).field("len", &self.len).finish()
    }
}

impl StagedBuffer {
    /// Creates the pair with room for `capacity` bytes.
    ///
    /// # Errors
    /// Allocation failed.
    pub fn new(
        ctx: &Arc<Context>,
        capacity: u64,
        usage: vk::BufferUsageFlags,
        name: &str,
    ) -> Result<Self, RenderError> {
        let (staging, device) = Self::pair(ctx, capacity, usage, name)?;
        Ok(Self { name: name.into(), usage, staging, device, len: 0 })
    }

    fn pair(
        ctx: &Arc<Context>,
        capacity: u64,
        usage: vk::BufferUsageFlags,
        name: &str,
    ) -> Result<(Buffer, Buffer), RenderError> {
        let staging = Buffer::new(
            ctx,
            capacity,
            vk::BufferUsageFlags::TRANSFER_SRC,
            MemoryLocation::CpuToGpu,
            &format!("{name} (staging)"),
        )?;
        let device =
            Buffer::new(ctx, capacity, usage | vk::BufferUsageFlags::TRANSFER_DST, MemoryLocation::GpuOnly, name)?;
        Ok((staging, device))
    }

    /// Stages the concatenation of `parts` for the next [`StagedBuffer::record_upload`]. Must not be called while
    /// a frame that uses this buffer is in flight.
    ///
    /// # Errors
    /// Growing failed.
    pub fn stage(&mut self, ctx: &Arc<Context>, parts: &[&[u8]]) -> Result<(), RenderError> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        if total as u64 > self.device.size() {
            let cap = (total as u64).next_power_of_two();
            let (s, d) = Self::pair(ctx, cap, self.usage, &self.name)?;
            self.staging = s;
            self.device = d;
        }
        let mut at = 0;
        for p in parts {
            self.staging.write_bytes(at, p)?;
            at += p.len();
        }
        self.len = total as u64;
        Ok(())
    }

    /// Records the copy of the staged bytes and a barrier towards `dst`.
    pub fn record_upload(
        &self,
        d: &ash::Device,
        cmd: vk::CommandBuffer,
        dst: (vk::PipelineStageFlags2, vk::AccessFlags2),
    ) {
        if self.len == 0 {
            return;
        }
        copy_buffer(d, cmd, &self.staging, &self.device, self.len);
        buffer_barrier(
            d,
            cmd,
            self.device.raw(),
            (vk::PipelineStageFlags2::COPY, vk::AccessFlags2::TRANSFER_WRITE),
            dst,
        );
    }

    /// The device-local buffer.
    #[inline]
    pub fn buffer(&self) -> &Buffer {
        &self.device
    }
}

/// An image with one layer and one or more mip levels, its view (of every level) and
/// memory.
pub struct Image {
    ctx: Arc<Context>,
    raw: vk::Image,
    view: vk::ImageView,
    allocation: Option<Allocation>,
    format: vk::Format,
    extent: vk::Extent2D,
}

impl std::fmt::Debug for Image {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Image").field("format", &self.format).field("extent", &self.extent).finish()
    }
}

impl Image {
    /// Creates a 2D image in device-local memory and a view of `aspect`.
    ///
    /// # Errors
    /// [`RenderError::DeviceLimit`] for a side above `maxImageDimension2D` or memory above
    /// `maxMemoryAllocationSize`, [`RenderError::OutOfDeviceMemory`] (named `name`), or a
    /// failing call.
    pub fn new(
        ctx: &Arc<Context>,
        extent: vk::Extent2D,
        format: vk::Format,
        usage: vk::ImageUsageFlags,
        aspect: vk::ImageAspectFlags,
        name: &str,
    ) -> Result<Self, RenderError> {
        Self::with_mips(ctx, extent, format, usage, aspect, 1, name)
    }

    /// [`Image::new`] with `mips` mip levels (at least 1), the view covering all of them.
    ///
    /// # Errors
    /// As [`Image::new`].
    pub fn with_mips(
        ctx: &Arc<Context>,
        extent: vk::Extent2D,
        format: vk::Format,
        usage: vk::ImageUsageFlags,
        aspect: vk::ImageAspectFlags,
        mips: u32,
        name: &str,
    ) -> Result<Self, RenderError> {
        let mips = mips.max(1);
        let max = ctx.limits().max_image_dimension2_d;
        for (side, requested) in [("width", extent.width), ("height", extent.height)] {
            if requested > max {
                return Err(RenderError::DeviceLimit {
                    what: format!("{name} {side}"),
                    limit: "maxImageDimension2D",
                    requested: requested.into(),
                    max: max.into(),
                });
            }
        }
        let d = ctx.device();
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D { width: extent.width.max(1), height: extent.height.max(1), depth: 1 })
            .mip_levels(mips)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        // SAFETY: a valid device; a 2D image with extent at least 1×1, one layer, and at most
        // as many levels as its largest side halves (the callers' `mips`).
        let raw = unsafe { d.create_image(&info, None) }.vk("vkCreateImage")?;
        // SAFETY: `raw` is a live image of this device.
        let requirements = unsafe { d.get_image_memory_requirements(raw) };
        if let Err(e) = ctx.check_memory(name, &requirements) {
            // SAFETY: the image has no memory and is not in use.
            unsafe { d.destroy_image(raw, None) };
            return Err(e);
        }
        let allocation = ctx.with_allocator(|a| {
            a.allocate(&AllocationCreateDesc {
                name,
                requirements,
                location: MemoryLocation::GpuOnly,
                linear: false,
                allocation_scheme: AllocationScheme::GpuAllocatorManaged,
            })
        });
        let allocation = match allocation {
            Ok(a) => a,
            Err(source) => {
                // SAFETY: the image was never bound or used.
                unsafe { d.destroy_image(raw, None) };
                return Err(RenderError::from_allocation(name, source));
            }
        };
        let mut img = Self { ctx: ctx.clone(), raw, view: vk::ImageView::null(), allocation: None, format, extent };
        // SAFETY: memory from an allocation made for these requirements.
        if let Err(result) = unsafe { d.bind_image_memory(raw, allocation.memory(), allocation.offset()) } {
            // `img` (dropped on return) destroys the image; the memory goes back here.
            let _ = ctx.with_allocator(|a| a.free(allocation));
            return Err(RenderError::from_vk("vkBindImageMemory", result));
        }
        img.allocation = Some(allocation);
        let view_info = vk::ImageViewCreateInfo::default()
            .image(raw)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(format)
            .subresource_range(vk::ImageSubresourceRange {
                aspect_mask: aspect,
                base_mip_level: 0,
                level_count: mips,
                base_array_layer: 0,
                layer_count: 1,
            });
        // SAFETY: the image is bound to memory (above); the view has the image's format, type
        // and all its levels and its layer, with an aspect the callers pick for that format.
        img.view = unsafe { d.create_image_view(&view_info, None) }.vk("vkCreateImageView")?;
        Ok(img)
    }

    /// The image handle.
    #[inline]
    pub fn raw(&self) -> vk::Image {
        self.raw
    }

    /// The view.
    #[inline]
    pub fn view(&self) -> vk::ImageView {
        self.view
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        // SAFETY: the owner guarantees the GPU is done with the image; view, image, memory.
        unsafe {
            if self.view != vk::ImageView::null() {
                self.ctx.device().destroy_image_view(self.view, None);
            }
            self.ctx.device().destroy_image(self.raw, None);
        }
        if let Some(a) = self.allocation.take() {
            let _ = self.ctx.with_allocator(|al| al.free(a));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::ContextDesc;

    /// Two copies writing one buffer with no barrier between them (a write-after-write
    /// hazard) are reported and counted, so a zero count in the other tests means something.
    #[test]
    fn synchronization_hazard_is_counted() {
        let ctx = Context::new(&ContextDesc::headless(true)).unwrap();
        let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        let a = Buffer::new(&ctx, 256, usage, MemoryLocation::GpuOnly, "a").unwrap();
        let b = Buffer::new(&ctx, 256, usage, MemoryLocation::GpuOnly, "b").unwrap();
        assert_eq!(ctx.validation_count(), 0);
        ctx.run_once(|cmd| {
            copy_buffer(ctx.device(), cmd, &a, &b, 256);
            copy_buffer(ctx.device(), cmd, &a, &b, 256);
        })
        .unwrap();
        assert!(ctx.validation_count() > 0, "synchronization validation did not report the hazard");
        let messages = ctx.validation_messages().join("\n");
        assert!(messages.contains("SYNC-HAZARD-WRITE-AFTER-WRITE"), "{messages}");
    }

    /// Buffers beyond the device are typed errors naming the buffer, found before any
    /// Vulkan call that would be invalid usage (the validation layer stays silent), and the
    /// context still works afterwards.
    #[test]
    fn impossible_buffers_are_typed_errors() {
        let ctx = Context::new(&ContextDesc::headless(true)).unwrap();
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
        // Several TiB: beyond maxBufferSize, or (where that is larger) beyond the heap.
        let tib = 4u64 << 40;
        let e = Buffer::new(&ctx, tib, storage, MemoryLocation::GpuOnly, "huge storage").unwrap_err();
        match &e {
            RenderError::DeviceLimit { what, limit, requested, max } => {
                assert_eq!(what, "huge storage");
                assert!(["maxBufferSize", "maxMemoryAllocationSize"].contains(limit), "{e}");
                assert!(requested > max, "{e}");
            }
            RenderError::OutOfDeviceMemory { what } => assert_eq!(what, "huge storage"),
            e => panic!("not a typed memory error: {e:?}"),
        }
        let e = Buffer::new(&ctx, u64::MAX, storage, MemoryLocation::CpuToGpu, "max storage").unwrap_err();
        assert!(matches!(&e, RenderError::DeviceLimit { limit: "maxBufferSize", requested: u64::MAX, .. }), "{e:?}");
        // Within maxBufferSize but above the heap (lavapipe: 2 GiB + 1 MiB of a 4 GiB
        // maxBufferSize): refused before vkAllocateMemory, as out of device memory or, where
        // the heap is as large as a single allocation may be (lavapipe), as that limit.
        let over_heap = ctx.device_local_heap_size() + (1 << 20);
        if over_heap <= ctx.max_buffer_size() {
            let e = Buffer::new(&ctx, over_heap, storage, MemoryLocation::GpuOnly, "above heap").unwrap_err();
            let typed = match &e {
                RenderError::OutOfDeviceMemory { what } => what == "above heap",
                RenderError::DeviceLimit { what, limit: "maxMemoryAllocationSize", requested, .. } => {
                    what == "above heap" && *requested >= over_heap
                }
                _ => false,
            };
            assert!(typed, "{e:?}");
        }
        // Images too: a side above maxImageDimension2D.
        let wide = vk::Extent2D { width: u32::MAX, height: 1 };
        let e = Image::new(
            &ctx,
            wide,
            vk::Format::R8G8B8A8_UNORM,
            vk::ImageUsageFlags::SAMPLED,
            vk::ImageAspectFlags::COLOR,
            "wide",
        )
        .unwrap_err();
        assert!(
            matches!(&e, RenderError::DeviceLimit { what, limit: "maxImageDimension2D", .. } if what == "wide width"),
            "{e:?}"
        );
        // Nothing invalid reached Vulkan, and the context still creates buffers.
        let b = Buffer::new(&ctx, 1024, storage, MemoryLocation::GpuOnly, "after").unwrap();
        assert_eq!(b.size(), 1024);
        drop(b);
        assert_eq!(ctx.validation_count(), 0, "{}", ctx.validation_messages().join("\n"));
    }

    /// A buffer left alive at `vkDestroyDevice` is reported.
    #[test]
    fn a_leaked_object_is_reported_at_teardown() {
        let ctx = Context::new(&ContextDesc::headless(true)).unwrap();
        let log = ctx.validation_log();
        let info = vk::BufferCreateInfo::default().size(64).usage(vk::BufferUsageFlags::STORAGE_BUFFER);
        // SAFETY: a valid device and create info; the buffer is leaked on purpose.
        let _leaked = unsafe { ctx.device().create_buffer(&info, None) }.unwrap();
        assert_eq!(log.count(), 0);
        drop(ctx);
        assert!(log.count() > 0, "the leak at vkDestroyDevice went unreported");
        // The object tracker names the leaked buffer (VUID-vkDestroyDevice-device-00378 or
        // -05137 by layer version, UNASSIGNED-ObjectTracker-ObjectLeak in older ones). The buffer went with its
        // device: there is nothing left to destroy (a handle of a destroyed device must not
        // be passed to Vulkan again).
        let messages = log.messages().join("\n");
        assert!(messages.contains("VUID-vkDestroyDevice-device") || messages.contains("ObjectLeak"), "{messages}");
        assert!(messages.contains("VkBuffer"), "{messages}");
    }
}
