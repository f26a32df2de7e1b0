//! GPU timing: per-pass timestamps of a frame ([`FrameStats`], recorded by the crate's
//! `GpuTimer`) and two copy-bandwidth probes to compare skinning traffic against:
//! [`measure_copy_bandwidth`] (`vkCmdCopyBuffer`) and [`measure_compute_copy_bandwidth`] (a
//! compute-shader copy). Report both; the larger is the achievable bandwidth.
//!
//! Timestamps are written with `vkCmdWriteTimestamp2` at `ALL_COMMANDS`: a timestamp is
//! taken once every command recorded before it has finished, so the interval between two
//! marks is the GPU time of the work recorded between them.

use crate::context::Context;
use crate::error::{RenderError, VkCall};
use crate::pipelines::{Descriptors, Pipeline, PipelineLayout, Push, binding, compute_pipeline};
use crate::resources::{Buffer, buffer_barrier, copy_buffer};
use crate::shaders;
use crate::skinning::dispatch_groups;
use ash::vk;
use bytemuck::Zeroable;
use gpu_allocator::MemoryLocation;
use std::fmt;
use std::sync::Arc;

/// The GPU time of one pass of a frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PassTime {
    /// The pass (`"cull"`, `"palette"`, `"draw"`, …).
    pub name: &'static str,
    /// Milliseconds between the end of the previous pass and the end of this one.
    pub ms: f64,
}

/// GPU timings and counts of one frame.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrameStats {
    /// The timed passes, in recording order (empty when the queue has no timestamps).
    pub passes: Vec<PassTime>,
    /// Instances submitted to the frame.
    pub instances: u32,
    /// Instances that survived culling, when the frame culls on the GPU and read it back.
    pub visible: Option<u32>,
}

impl FrameStats {
    /// Milliseconds of the pass called `name` (summed when the name occurs more than once),
    /// `None` when no pass has that name.
    pub fn pass(&self, name: &str) -> Option<f64> {
        let mut found = None;
        for p in self.passes.iter().filter(|p| p.name == name) {
            *found.get_or_insert(0.0) += p.ms;
        }
        found
    }

    /// Total GPU milliseconds: the sum of all passes (0 without timings).
    pub fn gpu_ms(&self) -> f64 {
        // A fold from +0.0: `Sum` for floats starts at -0.0, which would print as "-0.000".
        self.passes.iter().fold(0.0, |total, p| total + p.ms)
    }
}

impl fmt::Display for FrameStats {
    /// One line: `cull 0.012 ms · palette 0.310 ms · draw 1.200 ms · total 1.522 ms`,
    /// followed by `· 812/1000 visible` or `· 1000 instances` when those are known.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.passes {
            write!(f, "{} {:.3} ms · ", p.name, p.ms)?;
        }
        write!(f, "total {:.3} ms", self.gpu_ms())?;
        match self.visible {
            Some(v) => write!(f, " · {v}/{} visible", self.instances),
            None if self.instances > 0 => write!(f, " · {} instances", self.instances),
            None => Ok(()),
        }
    }
}

/// Timestamps around the passes of a command buffer: [`GpuTimer::begin`] writes the first,
/// every [`GpuTimer::mark`] the next and names the interval since the previous one, and
/// [`GpuTimer::read`] turns them into milliseconds once the command buffer has finished.
///
/// One timer serves one command buffer at a time: a frame loop with several frames in
/// flight keeps one timer per frame slot and reads it after waiting for that slot's fence.
/// On a queue without timestamps (`timestampValidBits` 0) every method is a no-op and
/// `read` gives `Ok(None)`.
pub(crate) struct GpuTimer {
    ctx: Arc<Context>,
    /// Null when timestamps are not supported.
    pool: vk::QueryPool,
    /// Most marks (intervals) a frame can time: the pool holds one more timestamp.
    max_marks: u32,
    /// Mask of the valid timestamp bits.
    mask: u64,
    /// Names of the recorded intervals, in order.
    names: Vec<&'static str>,
    /// Scratch for the raw timestamps `read` fetches (grows to the marks recorded).
    ticks: Vec<u64>,
    /// True between `begin` and the next `begin`: the first timestamp is recorded.
    begun: bool,
}

impl fmt::Debug for GpuTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpuTimer")
            .field("supported", &self.supported())
            .field("max_marks", &self.max_marks)
            .field("names", &self.names)
            .finish()
    }
}

impl GpuTimer {
    /// A timer for up to `max_marks` named intervals a command buffer.
    ///
    /// # Errors
    /// `max_marks` is 0 or so large that the pool would not fit `u32`
    /// ([`RenderError::Input`]), or `vkCreateQueryPool` failed.
    pub(crate) fn new(ctx: &Arc<Context>, max_marks: u32) -> Result<Self, RenderError> {
        let count = max_marks
            .checked_add(1)
            .filter(|_| max_marks > 0)
            .ok_or_else(|| RenderError::Input(format!("a GPU timer needs 1 to 2^32 - 2 marks, not {max_marks}")))?;
        let bits = ctx.timestamp_valid_bits();
        let mut timer = Self {
            ctx: ctx.clone(),
            pool: vk::QueryPool::null(),
            max_marks,
            mask: if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 },
            names: Vec::with_capacity(max_marks.min(64) as usize),
            ticks: Vec::with_capacity(max_marks.min(64) as usize + 1),
            begun: false,
        };
        if bits == 0 {
            return Ok(timer);
        }
        let info = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(count);
        // SAFETY: a valid device; a timestamp pool with a non-zero count.
        timer.pool = unsafe { ctx.device().create_query_pool(&info, None) }.vk("vkCreateQueryPool")?;
        Ok(timer)
    }

    /// True when the queue writes timestamps; when false every method does nothing.
    #[inline]
    pub(crate) fn supported(&self) -> bool {
        self.pool != vk::QueryPool::null()
    }

    /// Most intervals one command buffer can time; later marks are ignored.
    #[inline]
    #[cfg(test)]
    pub(crate) fn max_marks(&self) -> u32 {
        self.max_marks
    }

    /// Resets the pool and writes the first timestamp; forgets the previous recording.
    ///
    /// `cmd` must be recording, outside a render pass (the pool reset is a transfer-like
    /// command), and the command buffer that last used this timer must have finished.
    pub(crate) fn begin(&mut self, d: &ash::Device, cmd: vk::CommandBuffer) {
        self.names.clear();
        self.begun = false;
        if !self.supported() {
            return;
        }
        // SAFETY: `cmd` is recording outside a render pass (caller contract) and the pool is
        // not in use by pending work (the previous user finished); all `max_marks + 1`
        // queries are reset before timestamp 0 is written into the now unavailable query.
        unsafe {
            d.cmd_reset_query_pool(cmd, self.pool, 0, self.max_marks + 1);
            d.cmd_write_timestamp2(cmd, vk::PipelineStageFlags2::ALL_COMMANDS, self.pool, 0);
        }
        self.begun = true;
    }

    /// Writes the next timestamp: the work recorded since the previous mark (or `begin`) is
    /// pass `name`. Ignored without a `begin` and past `max_marks` marks (the extra passes
    /// are simply not timed). Allowed inside dynamic rendering.
    pub(crate) fn mark(&mut self, d: &ash::Device, cmd: vk::CommandBuffer, name: &'static str) {
        if !self.begun || self.names.len() >= self.max_marks as usize {
            return;
        }
        let query = self.names.len() as u32 + 1;
        // SAFETY: `cmd` is recording (caller contract) and is the command buffer that reset
        // the pool in `begin`; `query` is within the pool and unavailable since that reset.
        unsafe { d.cmd_write_timestamp2(cmd, vk::PipelineStageFlags2::ALL_COMMANDS, self.pool, query) };
        self.names.push(name);
    }

    /// The recorded passes in milliseconds, after the command buffer's fence was waited for.
    /// `Ok(None)` when nothing was marked, timestamps are unsupported, or the results are
    /// not available yet (the command buffer did not finish).
    ///
    /// # Errors
    /// `vkGetQueryPoolResults` failed (device lost).
    pub(crate) fn read(&mut self, d: &ash::Device) -> Result<Option<Vec<PassTime>>, RenderError> {
        let mut passes = Vec::new();
        Ok(self.read_into(d, &mut passes)?.then_some(passes))
    }

    /// As [`GpuTimer::read`], into `out` (cleared first; left empty and `false` returned
    /// where `read` gives `None`). Reuses its own and `out`'s storage: a steady frame loop
    /// allocates nothing here.
    ///
    /// # Errors
    /// As [`GpuTimer::read`].
    pub(crate) fn read_into(&mut self, d: &ash::Device, out: &mut Vec<PassTime>) -> Result<bool, RenderError> {
        out.clear();
        if !self.begun || self.names.is_empty() {
            return Ok(false);
        }
        let ticks = &mut self.ticks;
        ticks.clear();
        ticks.resize(self.names.len() + 1, 0);
        // SAFETY: the queries 0..=names.len() were reset and written by the recorded command
        // buffer; without WAIT the call never blocks and reports NOT_READY when they are not
        // available yet; `ticks` holds one 64-bit value for each.
        match unsafe { d.get_query_pool_results(self.pool, 0, ticks, vk::QueryResultFlags::TYPE_64) } {
            Ok(()) => {}
            Err(vk::Result::NOT_READY) => return Ok(false),
            Err(result) => return Err(RenderError::from_vk("vkGetQueryPoolResults", result)),
        }
        let ns_per_tick = f64::from(self.ctx.limits().timestamp_period);
        let mask = self.mask;
        out.extend(self.names.iter().zip(ticks.windows(2)).map(|(&name, w)| {
            // Modular difference in the valid bits: correct across one wrap of the counter.
            let delta = (w[1] & mask).wrapping_sub(w[0] & mask) & mask;
            PassTime { name, ms: delta as f64 * ns_per_tick * 1e-6 }
        }));
        Ok(true)
    }
}

impl Drop for GpuTimer {
    fn drop(&mut self) {
        if self.supported() {
            // SAFETY: the owner waited for every command buffer that used the pool (the same
            // contract as `read`); the context (Arc) outlives the pool.
            unsafe { self.ctx.device().destroy_query_pool(self.pool, None) };
        }
    }
}

/// Most copies one [`measure_copy_bandwidth`] or [`measure_compute_copy_bandwidth`] call
/// times.
pub const MAX_BANDWIDTH_REPEATS: u32 = 1024;

/// Measures device-local copy bandwidth with the transfer engine: copies a buffer of `bytes`
/// into another with `vkCmdCopyBuffer` `repeats` times in one submission (a barrier between
/// copies, so they do not overlap), times each copy with timestamps and returns the median
/// in GB/s (10⁹ bytes a second).
///
/// **Counting convention:** a copy of `bytes` moves `2 · bytes` (every byte is read once and
/// written once), so the figure is `2 · bytes / time`. Compare skinning traffic counted the
/// same way: bytes read (bind vertices, influences, palette) plus bytes written.
///
/// **Which figure to report:** `vkCmdCopyBuffer` is not always the fastest way to move
/// memory: on some devices (an NVIDIA H100 gives about 850 GB/s here while compute shaders
/// write well over 1 TB/s) a compute shader copies faster, and a ratio against this figure
/// can exceed 100 %. Measure [`measure_compute_copy_bandwidth`] too, report both, and take
/// the larger of the two as the achievable bandwidth that skinning traffic is compared with.
///
/// Both buffers are freed before it returns. Blocks until the GPU has finished.
///
/// # Errors
/// [`RenderError::Input`] for `bytes == 0`, `repeats` outside `1..=1024`, a size above the
/// device's `maxBufferSize`, `maxMemoryAllocationSize` or device-local heap (checked before
/// any Vulkan call), no timestamps on the queue, or a copy too short to time;
/// [`RenderError::Allocation`] when device memory runs out; a failing Vulkan call.
pub fn measure_copy_bandwidth(ctx: &Arc<Context>, bytes: u64, repeats: u32) -> Result<f64, RenderError> {
    measure(ctx, bytes, repeats, Engine::Transfer, None).map(|(gbs, _)| gbs)
}

/// Measures device-local copy bandwidth with a compute shader: `shaders/bandwidth_copy.comp`
/// copies a storage buffer of `bytes` into another, one `uvec4` (16 bytes) an invocation in
/// workgroups of 64 (a 2D grid of rows of at most 65,535 groups, which every device
/// supports), `repeats` times in one submission with a barrier between copies. Timed, counted
/// and reported exactly as [`measure_copy_bandwidth`]: the median of the copies, `2 · bytes`
/// (read + write) a copy, in GB/s (10⁹ bytes a second).
///
/// **Which figure to report:** the larger of this and [`measure_copy_bandwidth`] is the
/// achievable bandwidth (a lower bound on it); report both. Shader copies are what compute
/// skinning does, and on devices whose copy engine path is slower than their shader cores
/// (an NVIDIA H100, for one) only this figure bounds what skinning can reach.
///
/// Both buffers are rounded up to a whole `uvec4` (a size that is not a multiple of 16 copies
/// up to 15 more bytes; the figure still counts `bytes`, so it errs low). Both buffers, the
/// pipeline and its layout are freed before it returns. Blocks until the GPU has finished.
///
/// # Errors
/// [`RenderError::Input`] for `bytes == 0`, `repeats` outside `1..=1024`, a size (rounded up
/// to 16) above the device's `maxStorageBufferRange` (one descriptor covers each buffer),
/// `maxBufferSize`, `maxMemoryAllocationSize` or device-local heap (all checked before any
/// Vulkan call), no timestamps on the queue, or a copy too short to time;
/// [`RenderError::Allocation`] when device memory runs out; a failing Vulkan call.
pub fn measure_compute_copy_bandwidth(ctx: &Arc<Context>, bytes: u64, repeats: u32) -> Result<f64, RenderError> {
    measure(ctx, bytes, repeats, Engine::Compute, None).map(|(gbs, _)| gbs)
}

/// What copies the buffer in a bandwidth measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Engine {
    /// `vkCmdCopyBuffer`.
    Transfer,
    /// `shaders/bandwidth_copy.comp`, one `uvec4` an invocation.
    Compute,
}

impl Engine {
    /// The stage that reads the source and writes the destination.
    fn stage(self) -> vk::PipelineStageFlags2 {
        match self {
            Self::Transfer => vk::PipelineStageFlags2::ALL_TRANSFER,
            Self::Compute => vk::PipelineStageFlags2::COMPUTE_SHADER,
        }
    }

    /// How the copy reads the source and writes the destination.
    fn access(self) -> (vk::AccessFlags2, vk::AccessFlags2) {
        match self {
            Self::Transfer => (vk::AccessFlags2::TRANSFER_READ, vk::AccessFlags2::TRANSFER_WRITE),
            Self::Compute => (vk::AccessFlags2::SHADER_STORAGE_READ, vk::AccessFlags2::SHADER_STORAGE_WRITE),
        }
    }

    /// The name of a measurement in messages.
    fn what(self) -> &'static str {
        match self {
            Self::Transfer => "copy bandwidth",
            Self::Compute => "compute copy bandwidth",
        }
    }
}

/// Checks the inputs of a measurement against the device's limits, before any Vulkan call;
/// returns the size of each buffer (`bytes`, rounded up to 16 for the compute copy).
fn check_inputs(ctx: &Context, bytes: u64, repeats: u32, engine: Engine) -> Result<u64, RenderError> {
    let what = engine.what();
    if bytes == 0 {
        return Err(RenderError::Input(format!("{what} of 0 bytes")));
    }
    if !(1..=MAX_BANDWIDTH_REPEATS).contains(&repeats) {
        return Err(RenderError::Input(format!("{what} with {repeats} repeats (1 to {MAX_BANDWIDTH_REPEATS})")));
    }
    let (buffer, allocation, heap) = (ctx.max_buffer_size(), ctx.max_allocation_size(), ctx.device_local_heap_size());
    let limit = buffer.min(allocation).min(heap);
    let size = match engine {
        Engine::Transfer => Some(bytes),
        Engine::Compute => bytes.checked_next_multiple_of(16),
    };
    let storage = u64::from(ctx.limits().max_storage_buffer_range);
    let (limit, storage_note) = match engine {
        Engine::Transfer => (limit, String::new()),
        Engine::Compute => (limit.min(storage), format!("maxStorageBufferRange {storage}, ")),
    };
    match size {
        Some(size) if size <= limit => Ok(size),
        _ => Err(RenderError::Input(format!(
            "{what} buffers of {bytes} bytes exceed the device's limit of {limit} bytes \
             ({storage_note}maxBufferSize {buffer}, maxMemoryAllocationSize {allocation}, device-local heap {heap})"
        ))),
    }
}

/// The median of `ms` (sorted in place); NaN when empty.
fn median(ms: &mut [f64]) -> f64 {
    ms.sort_by(f64::total_cmp);
    let mid = ms.len() / 2;
    match ms.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => ms[mid],
        _ => 0.5 * (ms[mid - 1] + ms[mid]),
    }
}

/// The compute copy's pipeline and its layout (the shared one), freed on drop.
struct ComputeCopy {
    // Field order: the pipeline goes before its layout.
    pipeline: Pipeline,
    layout: PipelineLayout,
}

/// Both measurements: checks the inputs, creates the buffers (and for the compute copy the
/// pipeline), fills the source, records `repeats` timed copies with a barrier between them,
/// waits, frees everything and returns the median in GB/s (2 · `bytes` a copy).
///
/// Verification hook: with `seed` (exactly `bytes` long) the source is filled from it
/// through a staging buffer instead of a constant, the destination is zeroed first, and the
/// destination's first `bytes` bytes are read back after the copies and returned.
fn measure(
    ctx: &Arc<Context>,
    bytes: u64,
    repeats: u32,
    engine: Engine,
    seed: Option<&[u8]>,
) -> Result<(f64, Option<Vec<u8>>), RenderError> {
    let size = check_inputs(ctx, bytes, repeats, engine)?;
    if seed.is_some_and(|s| s.len() as u64 != bytes) {
        return Err(RenderError::Input(format!(
            "a bandwidth seed of {} bytes for {bytes}",
            seed.map_or(0, <[u8]>::len)
        )));
    }
    let mut timer = GpuTimer::new(ctx, repeats)?;
    if !timer.supported() {
        return Err(RenderError::Input("the queue writes no timestamps".into()));
    }
    let compute = match engine {
        Engine::Transfer => None,
        Engine::Compute => {
            let layout = PipelineLayout::new(ctx)?;
            let pipeline = compute_pipeline(ctx, &layout, shaders::BANDWIDTH_COPY_COMP)?;
            Some(ComputeCopy { pipeline, layout })
        }
    };
    // TRANSFER_DST on the source: `vkCmdFillBuffer` (or the seed's copy) writes it once;
    // TRANSFER_DST and TRANSFER_SRC on the destination: the hook zeroes and reads it back.
    let mut usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    if engine == Engine::Compute {
        usage |= vk::BufferUsageFlags::STORAGE_BUFFER;
    }
    let location = MemoryLocation::GpuOnly;
    let src = Buffer::new(ctx, size, usage, location, "bandwidth: source")?;
    let dst = Buffer::new(ctx, size, usage, location, "bandwidth: destination")?;
    let (staging, readback) = match seed {
        None => (None, None),
        Some(seed) => {
            let mut staging = Buffer::new(
                ctx,
                bytes,
                vk::BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::CpuToGpu,
                "bandwidth: seed",
            )?;
            staging.write_bytes(0, seed)?;
            let readback = Buffer::new(
                ctx,
                bytes,
                vk::BufferUsageFlags::TRANSFER_DST,
                MemoryLocation::GpuToCpu,
                "bandwidth: readback",
            )?;
            (Some(staging), Some(readback))
        }
    };
    let d = ctx.device();
    let transfer = vk::PipelineStageFlags2::ALL_TRANSFER;
    let (tr, tw) = (vk::AccessFlags2::TRANSFER_READ, vk::AccessFlags2::TRANSFER_WRITE);
    let (stage, (read, write)) = (engine.stage(), engine.access());
    // Elements (uvec4) of the compute copy: the buffer is at most maxStorageBufferRange
    // (a u32) bytes, so the count fits.
    let elements = (size / 16) as u32;
    let mut set = Descriptors::default();
    set.buffer(binding::BIND_VERTICES, src.raw()).buffer(binding::OUT_VERTICES, dst.raw());
    let push = Push { vertex_count: elements, ..Push::zeroed() };
    ctx.run_once(|cmd| {
        match &staging {
            Some(staging) => {
                copy_buffer(d, cmd, staging, &src, bytes);
                // SAFETY: `cmd` is recording outside a render pass; the whole live buffer is
                // zeroed (WHOLE_SIZE, offset 0), so a copy that does nothing shows.
                unsafe { d.cmd_fill_buffer(cmd, dst.raw(), 0, vk::WHOLE_SIZE, 0) };
                buffer_barrier(d, cmd, dst.raw(), (transfer, tw), (stage, write));
            }
            // SAFETY: `cmd` is recording outside a render pass; the whole live buffer is
            // filled (WHOLE_SIZE, offset 0).
            None => unsafe { d.cmd_fill_buffer(cmd, src.raw(), 0, vk::WHOLE_SIZE, 0x5a5a_5a5a) },
        }
        buffer_barrier(d, cmd, src.raw(), (transfer, tw), (stage, read));
        if let Some(c) = &compute {
            // SAFETY: `cmd` is recording outside a render pass; the pipeline was built with
            // `c.layout`, to which the descriptors and push constants below are bound.
            unsafe { d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, c.pipeline.raw) };
            c.layout.push_descriptors(cmd, vk::PipelineBindPoint::COMPUTE, &set);
            c.layout.push(cmd, &push);
        }
        timer.begin(d, cmd);
        for i in 0..repeats {
            if i > 0 {
                // Every copy writes all of `dst`: order it after the previous one.
                buffer_barrier(d, cmd, dst.raw(), (stage, write), (stage, write));
            }
            match &compute {
                None => copy_buffer(d, cmd, &src, &dst, bytes),
                Some(_) => {
                    let (gx, gy) = dispatch_groups(elements);
                    // SAFETY: recording outside a render pass with the copy pipeline, its
                    // descriptors (both buffers hold `elements` uvec4s) and push constants
                    // bound; invocations at or past `elements` return at once.
                    unsafe { d.cmd_dispatch(cmd, gx, gy, 1) };
                }
            }
            timer.mark(d, cmd, "copy");
        }
        if let Some(readback) = &readback {
            buffer_barrier(d, cmd, dst.raw(), (stage, write), (transfer, tr));
            copy_buffer(d, cmd, &dst, readback, bytes);
            buffer_barrier(
                d,
                cmd,
                readback.raw(),
                (transfer, tw),
                (vk::PipelineStageFlags2::HOST, vk::AccessFlags2::HOST_READ),
            );
        }
    })?;
    let mut ms: Vec<f64> = timer.read(d)?.unwrap_or_default().into_iter().map(|p| p.ms).collect();
    let contents = match &readback {
        Some(r) => Some(r.mapped()?[..bytes as usize].to_vec()),
        None => None,
    };
    drop((src, dst, staging, readback, compute, timer));
    if ms.len() != repeats as usize {
        return Err(RenderError::Input("copy timestamps were not available after the wait".into()));
    }
    let median = median(&mut ms);
    if median.is_nan() || median <= 0.0 {
        return Err(RenderError::Input(format!("a copy of {bytes} bytes is too short to time")));
    }
    Ok((2.0 * bytes as f64 / (median * 1e-3) / 1e9, contents))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::ContextDesc;

    fn context() -> Arc<Context> {
        Context::new(&ContextDesc::headless(true)).expect("Vulkan context (lavapipe) with validation")
    }

    fn assert_clean(ctx: &Context) {
        assert!(ctx.validation_enabled());
        assert_eq!(ctx.validation_count(), 0, "validation messages:\n{}", ctx.validation_messages().join("\n"));
    }

    const MB: u64 = 1 << 20;

    /// Records begin, a fill, a copy and `extra` more marks, runs it and reads the timer.
    fn fill_then_copy(ctx: &Arc<Context>, timer: &mut GpuTimer, extra: &[&'static str]) -> Option<Vec<PassTime>> {
        let a = Buffer::new(
            ctx,
            4 * MB,
            vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::TRANSFER_SRC,
            MemoryLocation::GpuOnly,
            "a",
        )
        .unwrap();
        let b = Buffer::new(ctx, 4 * MB, vk::BufferUsageFlags::TRANSFER_DST, MemoryLocation::GpuOnly, "b").unwrap();
        let d = ctx.device();
        let t = vk::PipelineStageFlags2::ALL_TRANSFER;
        ctx.run_once(|cmd| {
            timer.begin(d, cmd);
            // SAFETY: recording, outside a render pass; the whole live buffer.
            unsafe { d.cmd_fill_buffer(cmd, a.raw(), 0, vk::WHOLE_SIZE, 7) };
            timer.mark(d, cmd, "fill");
            buffer_barrier(
                d,
                cmd,
                a.raw(),
                (t, vk::AccessFlags2::TRANSFER_WRITE),
                (t, vk::AccessFlags2::TRANSFER_READ),
            );
            copy_buffer(d, cmd, &a, &b, 4 * MB);
            timer.mark(d, cmd, "copy");
            for name in extra {
                timer.mark(d, cmd, name);
            }
        })
        .unwrap();
        timer.read(d).unwrap()
    }

    #[test]
    fn timer_names_fill_and_copy() {
        let ctx = context();
        let mut timer = GpuTimer::new(&ctx, 8).unwrap();
        assert!(timer.supported(), "lavapipe writes timestamps");
        assert_eq!(timer.read(ctx.device()).unwrap(), None, "nothing recorded yet");
        let passes = fill_then_copy(&ctx, &mut timer, &[]).expect("timings after the wait");
        let names: Vec<_> = passes.iter().map(|p| p.name).collect();
        assert_eq!(names, ["fill", "copy"]);
        let sum: f64 = passes.iter().map(|p| p.ms).sum();
        for p in &passes {
            assert!(p.ms.is_finite() && p.ms >= 0.0, "{p:?}");
            assert!(sum >= p.ms);
        }
        // The timer can be used again (begin resets the pool).
        let again = fill_then_copy(&ctx, &mut timer, &[]).unwrap();
        assert_eq!(again.len(), 2);
        drop(timer);
        assert_clean(&ctx);
    }

    #[test]
    fn marks_past_capacity_are_ignored() {
        let ctx = context();
        let mut timer = GpuTimer::new(&ctx, 2).unwrap();
        assert_eq!(timer.max_marks(), 2);
        let passes = fill_then_copy(&ctx, &mut timer, &["extra"]).unwrap();
        let names: Vec<_> = passes.iter().map(|p| p.name).collect();
        assert_eq!(names, ["fill", "copy"]);
        drop(timer);
        assert_clean(&ctx);
    }

    #[test]
    fn timer_without_begin_and_bad_capacity() {
        let ctx = context();
        assert!(matches!(GpuTimer::new(&ctx, 0), Err(RenderError::Input(_))));
        assert!(matches!(GpuTimer::new(&ctx, u32::MAX), Err(RenderError::Input(_))));
        let mut timer = GpuTimer::new(&ctx, 1).unwrap();
        // A mark without begin records nothing.
        ctx.run_once(|cmd| timer.mark(ctx.device(), cmd, "lost")).unwrap();
        assert_eq!(timer.read(ctx.device()).unwrap(), None);
        drop(timer);
        assert_clean(&ctx);
    }

    /// A word pattern no copy of a constant or of shifted data reproduces.
    fn pattern(bytes: usize) -> Vec<u8> {
        (0..bytes).map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 13) as u8 ^ (i >> 8) as u8).collect()
    }

    #[test]
    fn both_copies_copy_every_byte() {
        let ctx = context();
        // A multiple of 16, an odd size (the compute copy rounds its buffers up) and a size
        // past one row of 65,535 workgroups of 64 uvec4s (a 2D dispatch).
        for bytes in [4 * MB, MB + 3, 65_535 * 64 * 16 + 48] {
            let seed = pattern(bytes as usize);
            for engine in [Engine::Transfer, Engine::Compute] {
                let (gbs, out) = measure(&ctx, bytes, 2, engine, Some(&seed)).unwrap();
                assert!(gbs.is_finite() && gbs > 0.0, "{engine:?} {bytes}: {gbs} GB/s");
                let out = out.expect("the hook reads the destination back");
                assert_eq!(out.len(), seed.len());
                if let Some(i) = out.iter().zip(&seed).position(|(a, b)| a != b) {
                    panic!("{engine:?} {bytes}: byte {i} is {:#x}, not {:#x}", out[i], seed[i]);
                }
            }
        }
        // A seed of the wrong length is refused.
        assert!(matches!(measure(&ctx, 64, 1, Engine::Compute, Some(&[0; 63])), Err(RenderError::Input(_))));
        assert_clean(&ctx);
    }

    #[test]
    fn compute_copy_refuses_sizes_past_the_storage_range() {
        let ctx = context();
        let range = u64::from(ctx.limits().max_storage_buffer_range);
        // Above the storage range (or its rounding up to 16 would be): refused before any
        // Vulkan call, whatever the other limits.
        let above = check_inputs(&ctx, range + 1, 1, Engine::Compute);
        assert!(matches!(&above, Err(RenderError::Input(m)) if m.contains("maxStorageBufferRange")), "{above:?}");
        // On lavapipe the storage range is the binding limit: the transfer copy takes the size.
        assert_eq!(check_inputs(&ctx, range + 1, 1, Engine::Transfer).unwrap(), range + 1);
        assert_eq!(check_inputs(&ctx, range, 1, Engine::Compute).unwrap(), range);
        assert!(matches!(check_inputs(&ctx, u64::MAX, 1, Engine::Compute), Err(RenderError::Input(_))));
        assert!(matches!(check_inputs(&ctx, u64::MAX - 3, 1, Engine::Transfer), Err(RenderError::Input(_))));
        // The compute copy's buffers are whole uvec4s.
        assert_eq!(check_inputs(&ctx, 17, 1, Engine::Compute).unwrap(), 32);
        assert_eq!(check_inputs(&ctx, 17, 1, Engine::Transfer).unwrap(), 17);
        assert_eq!(check_inputs(&ctx, 32, 1024, Engine::Compute).unwrap(), 32);
        assert!(check_inputs(&ctx, 32, 1025, Engine::Compute).is_err());
        assert_clean(&ctx);
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&mut [5.0]), 5.0);
        assert!(median(&mut []).is_nan());
    }

    #[test]
    fn context_keeps_timestamp_bits_and_size_limits() {
        let ctx = context();
        let bits = ctx.timestamp_valid_bits();
        assert!((36..=64).contains(&bits), "lavapipe's queue writes timestamps, {bits} valid bits");
        assert!(ctx.max_buffer_size() > 0 && ctx.max_allocation_size() > 0 && ctx.device_local_heap_size() > 0);
        assert!(GpuTimer::new(&ctx, 1).unwrap().supported());
        assert_clean(&ctx);
    }
}
