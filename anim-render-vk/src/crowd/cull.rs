//! The list pass of the crowds drawn with culling or LOD: it tests each character's clip
//! bounds against the view frustum, appends the visible ones to the visible list and writes
//! the indirect draw and dispatch arguments (cull, then finalize), which are copied to a
//! host-readable buffer for the visible count.

use super::buffers::{ARGS_BYTES, ARGS_VISIBLE_WORD, GpuCrowd};
use super::pipelines::{GROUP, Kind};
use super::plan::CrowdItem;
use super::record::RecordCtx;
use crate::resources::{buffer_barrier, copy_buffer};
use ash::vk;

impl RecordCtx<'_> {
    /// Records the list passes (cull and finalize) of the planned crowds; true when there
    /// were any.
    pub(crate) fn cull(&self, items: &[CrowdItem]) -> bool {
        use vk::AccessFlags2 as A;
        use vk::PipelineStageFlags2 as S;
        let listed = || items.iter().filter(|i| i.listed);
        if listed().next().is_none() {
            return false;
        }
        for item in listed() {
            let s = &self.crowds[item.crowd].slots[self.slot];
            // SAFETY: `cmd` is recording outside a render pass; the buffer has TRANSFER_DST
            // usage and holds ARGS_BYTES, a multiple of 4.
            unsafe { self.d.cmd_fill_buffer(self.cmd, s.args.raw(), 0, ARGS_BYTES, 0) };
        }
        self.barrier(
            (S::ALL_TRANSFER, A::TRANSFER_WRITE),
            (S::COMPUTE_SHADER, A::SHADER_STORAGE_READ | A::SHADER_STORAGE_WRITE),
        );
        for item in listed() {
            let set = self.set(item);
            self.dispatch(item, self.pipes.get(Kind::Cull, 0, 0), &set);
            // SAFETY: as in `dispatch`, with descriptors and push constants recorded; the
            // shader returns past `instance_count` (at most the capacity the visible list
            // holds).
            unsafe { self.d.cmd_dispatch(self.cmd, item.push.instance_count.div_ceil(GROUP), 1, 1) };
        }
        self.barrier(
            (S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE),
            (S::COMPUTE_SHADER, A::SHADER_STORAGE_READ | A::SHADER_STORAGE_WRITE),
        );
        for item in listed() {
            let set = self.set(item);
            self.dispatch(item, self.pipes.get(Kind::Finalize, 0, 0), &set);
            // SAFETY: as above; one invocation.
            unsafe { self.d.cmd_dispatch(self.cmd, 1, 1, 1) };
        }
        self.barrier(
            (S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE),
            (
                S::DRAW_INDIRECT | S::COMPUTE_SHADER | S::VERTEX_SHADER | S::COPY,
                A::INDIRECT_COMMAND_READ | A::SHADER_STORAGE_READ | A::TRANSFER_READ,
            ),
        );
        for item in listed() {
            let s = &self.crowds[item.crowd].slots[self.slot];
            copy_buffer(self.d, self.cmd, &s.args, &s.args_readback, ARGS_BYTES);
            buffer_barrier(
                self.d,
                self.cmd,
                s.args_readback.raw(),
                (S::COPY, A::TRANSFER_WRITE),
                (S::HOST, A::HOST_READ),
            );
        }
        true
    }
}

/// The total visible count that frame slot `slot`'s last frame read back for its listed
/// crowds, `None` when it listed none. The slot's fence must have been waited for.
pub(crate) fn visible_in_slot(crowds: &[GpuCrowd], slot: usize) -> Option<u32> {
    let mut total = None;
    for c in crowds {
        let s = &c.slots[slot];
        if s.record.is_some_and(|r| r.listed) {
            let words: &[u32] = bytemuck::cast_slice(s.args_readback.mapped().ok()?);
            *total.get_or_insert(0) += words[ARGS_VISIBLE_WORD];
        }
    }
    total
}
