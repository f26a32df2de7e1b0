//! GPU timing: per-pass timestamps of a frame ([`FrameStats`], recorded by the crate's
//! `GpuTimer`) and a copy-bandwidth probe ([`measure_copy_bandwidth`]) to compare skinning
//! traffic against.
//!
//! Timestamps are written with `vkCmdWriteTimestamp2` at `ALL_COMMANDS`: a timestamp is
//! taken once every command recorded before it has finished, so the interval between two
//! marks is the GPU time of the work recorded between them.

use crate::context::Context;
use crate::error::{RenderError, VkCall};
use crate::resources::{Buffer, buffer_barrier, copy_buffer};
use ash::vk;
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

#[allow(dead_code)] // the frame integrates the timer later; tests and the bandwidth probe use it now
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
    pub(crate) fn read(&self, d: &ash::Device) -> Result<Option<Vec<PassTime>>, RenderError> {
        if !self.begun || self.names.is_empty() {
            return Ok(None);
        }
        let mut ticks = vec![0u64; self.names.len() + 1];
        // SAFETY: the queries 0..=names.len() were reset and written by the recorded command
        // buffer; without WAIT the call never blocks and reports NOT_READY when they are not
        // available yet; `ticks` holds one 64-bit value for each.
        match unsafe { d.get_query_pool_results(self.pool, 0, &mut ticks, vk::QueryResultFlags::TYPE_64) } {
            Ok(()) => {}
            Err(vk::Result::NOT_READY) => return Ok(None),
            Err(result) => return Err(RenderError::Vulkan { call: "vkGetQueryPoolResults", result }),
        }
        let ns_per_tick = f64::from(self.ctx.limits().timestamp_period);
        let passes = self
            .names
            .iter()
            .zip(ticks.windows(2))
            .map(|(&name, w)| {
                // Modular difference in the valid bits: correct across one wrap of the counter.
                let delta = (w[1] & self.mask).wrapping_sub(w[0] & self.mask) & self.mask;
                PassTime { name, ms: delta as f64 * ns_per_tick * 1e-6 }
            })
            .collect();
        Ok(Some(passes))
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

/// Most copies one [`measure_copy_bandwidth`] call times.
pub const MAX_BANDWIDTH_REPEATS: u32 = 1024;

/// Measures device-local copy bandwidth: copies a buffer of `bytes` into another `repeats`
/// times in one submission (a barrier between copies, so they do not overlap), times each
/// copy with timestamps and returns the median in GB/s (10⁹ bytes a second).
///
/// **Counting convention:** a copy of `bytes` moves `2 · bytes` (every byte is read once and
/// written once), so the figure is `2 · bytes / time`. Compare skinning traffic counted the
/// same way: bytes read (bind vertices, influences, palette) plus bytes written.
///
/// Both buffers are freed before it returns. Blocks until the GPU has finished.
///
/// # Errors
/// [`RenderError::Input`] for `bytes == 0`, `repeats` outside `1..=1024`, a size above the
/// device's `maxBufferSize`, `maxMemoryAllocationSize` or device-local heap (checked before
/// any Vulkan call), no timestamps on the queue, or a copy too short to time;
/// [`RenderError::Allocation`] when device memory runs out; a failing Vulkan call.
pub fn measure_copy_bandwidth(ctx: &Arc<Context>, bytes: u64, repeats: u32) -> Result<f64, RenderError> {
    if bytes == 0 {
        return Err(RenderError::Input("copy bandwidth of 0 bytes".into()));
    }
    if !(1..=MAX_BANDWIDTH_REPEATS).contains(&repeats) {
        return Err(RenderError::Input(format!("copy bandwidth with {repeats} repeats (1 to 1024)")));
    }
    let (buffer, allocation, heap) = (ctx.max_buffer_size(), ctx.max_allocation_size(), ctx.device_local_heap_size());
    let limit = buffer.min(allocation).min(heap);
    if bytes > limit {
        return Err(RenderError::Input(format!(
            "copy bandwidth buffers of {bytes} bytes exceed the device's limit of {limit} bytes \
             (maxBufferSize {buffer}, maxMemoryAllocationSize {allocation}, device-local heap {heap})"
        )));
    }
    let mut timer = GpuTimer::new(ctx, repeats)?;
    if !timer.supported() {
        return Err(RenderError::Input("the queue writes no timestamps".into()));
    }
    let location = MemoryLocation::GpuOnly;
    // TRANSFER_DST on the source too: `vkCmdFillBuffer` writes it once.
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let src = Buffer::new(ctx, bytes, usage, location, "bandwidth: source")?;
    let dst = Buffer::new(ctx, bytes, usage, location, "bandwidth: destination")?;
    let d = ctx.device();
    let transfer = vk::PipelineStageFlags2::ALL_TRANSFER;
    let write = vk::AccessFlags2::TRANSFER_WRITE;
    ctx.run_once(|cmd| {
        // SAFETY: `cmd` is recording outside a render pass; the whole live buffer is filled
        // (WHOLE_SIZE, offset 0).
        unsafe { d.cmd_fill_buffer(cmd, src.raw(), 0, vk::WHOLE_SIZE, 0x5a5a_5a5a) };
        buffer_barrier(d, cmd, src.raw(), (transfer, write), (transfer, vk::AccessFlags2::TRANSFER_READ));
        timer.begin(d, cmd);
        for i in 0..repeats {
            if i > 0 {
                // Every copy writes all of `dst`: order it after the previous one.
                buffer_barrier(d, cmd, dst.raw(), (transfer, write), (transfer, write));
            }
            copy_buffer(d, cmd, &src, &dst, bytes);
            timer.mark(d, cmd, "copy");
        }
    })?;
    let mut ms: Vec<f64> = timer.read(d)?.unwrap_or_default().into_iter().map(|p| p.ms).collect();
    drop((src, dst, timer));
    if ms.len() != repeats as usize {
        return Err(RenderError::Input("copy timestamps were not available after the wait".into()));
    }
    ms.sort_by(f64::total_cmp);
    let mid = ms.len() / 2;
    let median = if ms.len() % 2 == 1 { ms[mid] } else { 0.5 * (ms[mid - 1] + ms[mid]) };
    if median.is_nan() || median <= 0.0 {
        return Err(RenderError::Input(format!("a copy of {bytes} bytes is too short to time")));
    }
    Ok(2.0 * bytes as f64 / (median * 1e-3) / 1e9)
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
