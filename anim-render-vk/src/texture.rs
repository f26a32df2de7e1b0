//! Textures and materials on the GPU: RGBA8 images (`R8G8B8A8_SRGB` for colour,
//! `R8G8B8A8_UNORM` for data) uploaded through staging, their mip chain generated on the
//! GPU by successive linear blits (one level when the device cannot blit the format
//! linearly), samplers shared by description, and each material's uniform block with the
//! textures it binds.

use crate::context::Context;
use crate::error::{RenderError, VkCall};
use crate::material::{Filter, MaterialDesc, MaterialUniform, SamplerDesc, TextureDesc, Wrap};
use crate::resources::{Buffer, Image};
use ash::vk;
use gpu_allocator::MemoryLocation;
use std::collections::HashMap;
use std::sync::Arc;

/// A texture: the image with its mip chain, and its sampler (owned by [`Samplers`]).
pub(crate) struct GpuTexture {
    pub(crate) image: Image,
    pub(crate) sampler: vk::Sampler,
}

/// A material: its uniform block, the texture bound at each slot (the white texture for an
/// empty slot) and what the draw needs to know.
pub(crate) struct GpuMaterial {
    pub(crate) uniform: Buffer,
    pub(crate) textures: [usize; 5],
    pub(crate) blend: bool,
    pub(crate) double_sided: bool,
}

/// Samplers, one a description, destroyed with the renderer.
pub(crate) struct Samplers {
    ctx: Arc<Context>,
    cache: HashMap<SamplerDesc, vk::Sampler>,
}

impl Samplers {
    pub(crate) fn new(ctx: &Arc<Context>) -> Self {
        Samplers { ctx: ctx.clone(), cache: HashMap::new() }
    }

    /// The sampler of `desc`, created on first use.
    pub(crate) fn get(&mut self, desc: &SamplerDesc) -> Result<vk::Sampler, RenderError> {
        if let Some(s) = self.cache.get(desc) {
            return Ok(*s);
        }
        let filter = |f| match f {
            Filter::Nearest => vk::Filter::NEAREST,
            Filter::Linear => vk::Filter::LINEAR,
        };
        let wrap = |w| match w {
            Wrap::Repeat => vk::SamplerAddressMode::REPEAT,
            Wrap::MirroredRepeat => vk::SamplerAddressMode::MIRRORED_REPEAT,
            Wrap::ClampToEdge => vk::SamplerAddressMode::CLAMP_TO_EDGE,
        };
        let (mipmap_mode, max_lod) = match desc.mipmap {
            Some(Filter::Nearest) => (vk::SamplerMipmapMode::NEAREST, vk::LOD_CLAMP_NONE),
            Some(Filter::Linear) => (vk::SamplerMipmapMode::LINEAR, vk::LOD_CLAMP_NONE),
            // The top level only: a clamp of 0.25 keeps the magnification/minification
            // switch (Vulkan's advice for GL's non-mipmapped minification filters).
            None => (vk::SamplerMipmapMode::NEAREST, 0.25),
        };
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(filter(desc.mag_filter))
            .min_filter(filter(desc.min_filter))
            .mipmap_mode(mipmap_mode)
            .address_mode_u(wrap(desc.wrap_u))
            .address_mode_v(wrap(desc.wrap_v))
            .address_mode_w(vk::SamplerAddressMode::REPEAT)
            .max_lod(max_lod);
        // SAFETY: a valid device and create info; destroyed in Drop after the renderer
        // waited for the device.
        let s = unsafe { self.ctx.device().create_sampler(&info, None) }.vk("vkCreateSampler")?;
        self.cache.insert(*desc, s);
        Ok(s)
    }
}

impl Drop for Samplers {
    fn drop(&mut self) {
        for s in self.cache.values() {
            // SAFETY: the owning renderer waited for the device to be idle before its fields
            // drop; no descriptor using the sampler is pending.
            unsafe { self.ctx.device().destroy_sampler(*s, None) };
        }
    }
}

/// Mip levels of a `w × h` image: down to 1 × 1.
fn mip_levels(w: u32, h: u32) -> u32 {
    32 - w.max(h).max(1).leading_zeros()
}

/// Uploads `desc` as a sampled image with its mip chain (see the module docs).
pub(crate) fn upload_texture(
    ctx: &Arc<Context>,
    desc: &TextureDesc<'_>,
    sampler: vk::Sampler,
) -> Result<GpuTexture, RenderError> {
    let (w, h) = (desc.width, desc.height);
    let need = u64::from(w) * u64::from(h) * 4;
    if w == 0 || h == 0 || desc.pixels.len() as u64 != need {
        return Err(RenderError::Input(format!("{} texel bytes for a {w} × {h} RGBA8 texture", desc.pixels.len())));
    }
    let format = if desc.srgb { vk::Format::R8G8B8A8_SRGB } else { vk::Format::R8G8B8A8_UNORM };
    let blit = vk::FormatFeatureFlags::BLIT_SRC | vk::FormatFeatureFlags::BLIT_DST;
    let linear = vk::FormatFeatureFlags::SAMPLED_IMAGE_FILTER_LINEAR;
    let features = ctx.format_features(format);
    let mips = if features.contains(blit | linear) { mip_levels(w, h) } else { 1 };
    let usage = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST | vk::ImageUsageFlags::TRANSFER_SRC;
    let extent = vk::Extent2D { width: w, height: h };
    let image = Image::with_mips(ctx, extent, format, usage, vk::ImageAspectFlags::COLOR, mips, "texture")?;
    let mut staging =
        Buffer::new(ctx, need, vk::BufferUsageFlags::TRANSFER_SRC, MemoryLocation::CpuToGpu, "texture staging")?;
    staging.write_bytes(0, desc.pixels)?;
    let d = ctx.device();
    ctx.run_once(|cmd| record_upload(d, cmd, &image, &staging, w, h, mips))?;
    Ok(GpuTexture { image, sampler })
}

/// One level's layout transition.
#[allow(clippy::too_many_arguments)]
fn level_barrier(
    d: &ash::Device,
    cmd: vk::CommandBuffer,
    image: vk::Image,
    level: u32,
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
            aspect_mask: vk::ImageAspectFlags::COLOR,
            base_mip_level: level,
            level_count: 1,
            base_array_layer: 0,
            layer_count: 1,
        })];
    // SAFETY: callers record outside a render pass; `level` exists in `image`, whose layout
    // there is `layouts.0` (or UNDEFINED, which discards).
    unsafe { d.cmd_pipeline_barrier2(cmd, &vk::DependencyInfo::default().image_memory_barriers(&b)) };
}

/// Copies the staged texels into level 0, blits each level from the one above, and leaves
/// every level in SHADER_READ_ONLY_OPTIMAL for the fragment shader.
fn record_upload(d: &ash::Device, cmd: vk::CommandBuffer, image: &Image, staging: &Buffer, w: u32, h: u32, mips: u32) {
    use vk::AccessFlags2 as A;
    use vk::ImageLayout as L;
    use vk::PipelineStageFlags2 as S;
    let raw = image.raw();
    for level in 0..mips {
        level_barrier(
            d,
            cmd,
            raw,
            level,
            (L::UNDEFINED, L::TRANSFER_DST_OPTIMAL),
            (S::NONE, A::NONE),
            (S::ALL_TRANSFER, A::TRANSFER_WRITE),
        );
    }
    let layers = |level| vk::ImageSubresourceLayers {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        mip_level: level,
        base_array_layer: 0,
        layer_count: 1,
    };
    let region = [vk::BufferImageCopy::default().image_subresource(layers(0)).image_extent(vk::Extent3D {
        width: w,
        height: h,
        depth: 1,
    })];
    // SAFETY: outside a render pass; level 0 is in TRANSFER_DST_OPTIMAL and the staging
    // buffer holds w × h RGBA8 texels (checked by the caller).
    unsafe { d.cmd_copy_buffer_to_image(cmd, staging.raw(), raw, L::TRANSFER_DST_OPTIMAL, &region) };
    let read = (S::FRAGMENT_SHADER, A::SHADER_SAMPLED_READ);
    let (mut sw, mut sh) = (w as i32, h as i32);
    for level in 1..mips {
        level_barrier(
            d,
            cmd,
            raw,
            level - 1,
            (L::TRANSFER_DST_OPTIMAL, L::TRANSFER_SRC_OPTIMAL),
            (S::ALL_TRANSFER, A::TRANSFER_WRITE),
            (S::BLIT, A::TRANSFER_READ),
        );
        let (dw, dh) = ((sw / 2).max(1), (sh / 2).max(1));
        let blit = [vk::ImageBlit2::default()
            .src_subresource(layers(level - 1))
            .src_offsets([vk::Offset3D::default(), vk::Offset3D { x: sw, y: sh, z: 1 }])
            .dst_subresource(layers(level))
            .dst_offsets([vk::Offset3D::default(), vk::Offset3D { x: dw, y: dh, z: 1 }])];
        let info = vk::BlitImageInfo2::default()
            .src_image(raw)
            .src_image_layout(L::TRANSFER_SRC_OPTIMAL)
            .dst_image(raw)
            .dst_image_layout(L::TRANSFER_DST_OPTIMAL)
            .regions(&blit)
            .filter(vk::Filter::LINEAR);
        // SAFETY: outside a render pass; the source level is in TRANSFER_SRC_OPTIMAL and the
        // destination level in TRANSFER_DST_OPTIMAL (barriers above), the format supports
        // linear blits (checked before `mips` was chosen) and both regions lie inside their
        // levels.
        unsafe { d.cmd_blit_image2(cmd, &info) };
        level_barrier(
            d,
            cmd,
            raw,
            level - 1,
            (L::TRANSFER_SRC_OPTIMAL, L::SHADER_READ_ONLY_OPTIMAL),
            (S::BLIT, A::TRANSFER_READ),
            read,
        );
        (sw, sh) = (dw, dh);
    }
    level_barrier(
        d,
        cmd,
        raw,
        mips - 1,
        (L::TRANSFER_DST_OPTIMAL, L::SHADER_READ_ONLY_OPTIMAL),
        (S::ALL_TRANSFER, A::TRANSFER_WRITE),
        read,
    );
}

/// Creates a material's uniform block; `textures` are the texture indices of its slots
/// (`white` for an empty one), checked by the caller.
pub(crate) fn upload_material(
    ctx: &Arc<Context>,
    desc: &MaterialDesc,
    textures: [usize; 5],
) -> Result<GpuMaterial, RenderError> {
    let uniform = Buffer::device_local(
        ctx,
        bytemuck::bytes_of(&MaterialUniform::new(desc)),
        vk::BufferUsageFlags::UNIFORM_BUFFER,
        vk::PipelineStageFlags2::FRAGMENT_SHADER,
        vk::AccessFlags2::UNIFORM_READ,
        "material",
    )?;
    Ok(GpuMaterial {
        uniform,
        textures,
        blend: desc.alpha_mode == crate::material::AlphaMode::Blend,
        double_sided: desc.double_sided,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn mip_chains_end_at_one_texel() {
        assert_eq!(super::mip_levels(1, 1), 1);
        assert_eq!(super::mip_levels(2, 1), 2);
        assert_eq!(super::mip_levels(1024, 1024), 11);
        assert_eq!(super::mip_levels(5, 3), 3); // 5×3, 2×1, 1×1
    }
}
