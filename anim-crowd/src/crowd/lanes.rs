//! The update pass: runs of characters advanced block by block in one branch-free loop
//! (compiled again for AVX2 where the CPU has it), on one thread or cut into disjoint runs
//! for the worker pool.

use super::columns::*;
use super::{Crowd, CrowdInstance, PARALLEL_MIN, PER_THREAD_MIN};
use crate::atlas::AtlasClip;
use anim_core::clip::playback::FOREVER;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A run of characters, as one update pass reads and writes them.
pub(super) struct Lanes<'a> {
    /// Crowd index of the run's first character.
    pub(super) base: usize,
    pub(super) clip: &'a [u32],
    pub(super) cycle: &'a mut [i32],
    pub(super) local: &'a mut [f32],
    pub(super) speed: &'a [f32],
    pub(super) duration: &'a [f32],
    pub(super) span: &'a [f32],
    pub(super) rate: &'a [f32],
    pub(super) first: &'a [u32],
    pub(super) cap: &'a [f32],
    pub(super) out: &'a mut [CrowdInstance],
    /// The blends of this run's characters, in character order.
    pub(super) blends: &'a mut [Blend],
    /// The special playbacks of this run's characters, in character order.
    pub(super) specials: &'a mut [Special],
}

impl<'a> Lanes<'a> {
    /// Advances every character by `dt` (finite) and writes its frames and factors;
    /// returns how many fades ended (their entries are marked [`ENDED`]).
    ///
    /// Block by block: clip A of every character in one branch-free loop, which also
    /// writes the record as if there were no clip B (B mirroring A, weight 0); then the
    /// rare clips outside the fast rule again through [`AtlasClip::frame_pair`]; then the
    /// block's blends overwrite their B half.
    #[inline(always)]
    pub(super) fn run(self, clips: &[AtlasClip], params: &[ClipParams], dt: f32) -> usize {
        self.run_as::<false>(clips, params, dt)
    }

    /// [`Lanes::run`]; with `AVX2` (only inside [`run_avx2`]) the records are written by
    /// [`records_avx2`] (the same bytes).
    #[inline(always)]
    pub(super) fn run_as<const AVX2: bool>(self, clips: &[AtlasClip], params: &[ClipParams], dt: f32) -> usize {
        let n = self.out.len();
        let clip = &self.clip[..n];
        let cycle = &mut self.cycle[..n];
        let local = &mut self.local[..n];
        let speed = &self.speed[..n];
        let duration = &self.duration[..n];
        let span = &self.span[..n];
        let rate = &self.rate[..n];
        let first = &self.first[..n];
        let cap = &self.cap[..n];
        let out = &mut self.out[..n];
        let blends = self.blends;
        let specials = self.specials;
        let mut next_special = 0;
        let mut f0 = [0u32; BLOCK];
        let mut f1 = [0u32; BLOCK];
        let mut fa = [0f32; BLOCK];
        let mut late = [0u32; BLOCK];
        let mut shown = [0f32; BLOCK];
        let mut scratch = BlendScratch::default();
        let mut next_blend = 0;
        let mut ended = 0;
        let mut start = 0;
        while start < n {
            let end = (start + BLOCK).min(n);
            let m = end - start;
            let (f0, f1, fa, late) = (&mut f0[..m], &mut f1[..m], &mut fa[..m], &mut late[..m]);
            let shown = &mut shown[..m];
            let cycle = &mut cycle[start..end];
            let local = &mut local[start..end];
            let speed = &speed[start..end];
            let duration = &duration[start..end];
            let span = &span[start..end];
            let rate = &rate[start..end];
            let first = &first[start..end];
            let cap = &cap[start..end];
            let clip = &clip[start..end];
            let out = &mut out[start..end];
            let mut slow = 0u32;
            // Every lane as a plain endless `Repeat` playback (the step and time of
            // `Playback::advance` / `time` with no count and no flags, which fold away);
            // the special lanes' results are scratch, redone from their own state below.
            for i in 0..m {
                let (c, l, _, t, near) =
                    step_lane_near(cycle[i], local[i], dt * speed[i], duration[i], FOREVER, PLAIN_FLAGS);
                cycle[i] = c;
                local[i] = l;
                shown[i] = t;
                // `t ∈ [0, d]`: inside the fast span of every clip that has one.
                let (w, s) = wrap_shown(t, duration[i], span[i]);
                let lt = if s { LATE_CLIP } else { 0 } | if near { 0 } else { LATE_STEP };
                slow |= lt;
                late[i] = lt;
                (f0[i], f1[i], fa[i]) = frames_fast(w, rate[i], first[i], cap[i]);
            }
            #[allow(unused_mut)]
            let mut done = 0;
            #[cfg(target_arch = "x86_64")]
            if AVX2 {
                // SAFETY: `AVX2` is true only in `run_avx2`, which runs on AVX2 CPUs only.
                done = unsafe { records_avx2(out, f0, f1, fa, clip) };
            }
            for i in done..m {
                let r = &mut out[i];
                r.frames = [f0[i], f1[i], f0[i], f1[i]];
                r.factors = [fa[i], fa[i], 0.0, clip[i] as f32];
            }
            if slow != 0 {
                for i in 0..m {
                    if late[i] & LATE_STEP != 0 {
                        let (c, l, _, t) =
                            step_lane(cycle[i], local[i], dt * speed[i], duration[i], FOREVER, PLAIN_FLAGS);
                        (cycle[i], local[i], shown[i]) = (c, l, t);
                    }
                    if late[i] != 0 {
                        let (a0, a1, f) = frames_slow(clips, clip[i], shown[i]);
                        out[i].frames = [a0, a1, a0, a1];
                        out[i].factors = [f, f, 0.0, clip[i] as f32];
                    }
                }
            }
            let first_out = self.base + start;
            let mut stop = next_special;
            while specials.get(stop).is_some_and(|s| (s.character as usize).wrapping_sub(first_out) < m) {
                stop += 1;
            }
            for s in &mut specials[next_special..stop] {
                let i = s.character as usize - first_out;
                let (a0, a1, f) = match s.held {
                    Some(held) => held,
                    None => {
                        let (c, l, fl, t) = step_lane(s.cycle, s.local, dt * speed[i], duration[i], s.cycles, s.flags);
                        (s.cycle, s.local, s.flags) = (c, l, fl);
                        let (w, slow) = wrap_shown(t, duration[i], span[i]);
                        let r = if slow {
                            frames_slow(clips, clip[i], t)
                        } else {
                            frames_fast(w, rate[i], first[i], cap[i])
                        };
                        // A finished playback's steps change nothing (see `Playback::advance`).
                        if fl & FINISHED != 0 {
                            s.held = Some(r);
                        }
                        r
                    }
                };
                out[i].frames = [a0, a1, a0, a1];
                out[i].factors = [f, f, 0.0, clip[i] as f32];
            }
            next_special = stop;
            let mut stop = next_blend;
            while blends.get(stop).is_some_and(|b| (b.character as usize).wrapping_sub(first_out) < m) {
                stop += 1;
            }
            if stop > next_blend {
                let block = &mut blends[next_blend..stop];
                ended += scratch.blends(block, first_out, clips, params, dt, out);
                next_blend = stop;
            }
            start = end;
        }
        ended
    }
}

/// One block's clip B entries (at most [`BLOCK`]) copied into arrays, so that their
/// advance also runs as one branch-free loop.
pub(super) struct BlendScratch {
    pub(super) cycle: [i32; BLOCK],
    pub(super) local: [f32; BLOCK],
    pub(super) step: [f32; BLOCK],
    pub(super) cycles: [i32; BLOCK],
    pub(super) flags: [u32; BLOCK],
    pub(super) shown: [f32; BLOCK],
    pub(super) weight: [f32; BLOCK],
    pub(super) weight_rate: [f32; BLOCK],
    pub(super) duration: [f32; BLOCK],
    pub(super) span: [f32; BLOCK],
    pub(super) rate: [f32; BLOCK],
    pub(super) first: [u32; BLOCK],
    pub(super) cap: [f32; BLOCK],
    pub(super) f0: [u32; BLOCK],
    pub(super) f1: [u32; BLOCK],
    pub(super) factor: [f32; BLOCK],
    pub(super) late: [u32; BLOCK],
    pub(super) done: [u32; BLOCK],
}

impl Default for BlendScratch {
    fn default() -> Self {
        Self {
            cycle: [0; BLOCK],
            local: [0.0; BLOCK],
            step: [0.0; BLOCK],
            cycles: [0; BLOCK],
            flags: [0; BLOCK],
            shown: [0.0; BLOCK],
            weight: [0.0; BLOCK],
            weight_rate: [0.0; BLOCK],
            duration: [0.0; BLOCK],
            span: [0.0; BLOCK],
            rate: [0.0; BLOCK],
            first: [0; BLOCK],
            cap: [0.0; BLOCK],
            f0: [0; BLOCK],
            f1: [0; BLOCK],
            factor: [0.0; BLOCK],
            late: [0; BLOCK],
            done: [0; BLOCK],
        }
    }
}

impl BlendScratch {
    /// Advances the clips B of one block (`block`, whose characters' records are
    /// `out[character − first_out]`, their A half with B mirroring A already written) by
    /// `dt` and writes their B half; returns how many fades ended (those entries are
    /// marked [`ENDED`] and their records left showing A only).
    #[inline(always)]
    pub(super) fn blends(
        &mut self,
        block: &mut [Blend],
        first_out: usize,
        clips: &[AtlasClip],
        params: &[ClipParams],
        dt: f32,
        out: &mut [CrowdInstance],
    ) -> usize {
        let n = block.len().min(BLOCK);
        let block = &mut block[..n];
        for (k, b) in block.iter().enumerate() {
            let p = &params[b.clip as usize];
            self.cycle[k] = b.play.cycle;
            self.local[k] = b.play.local;
            self.step[k] = dt * b.play.speed;
            self.cycles[k] = b.play.cycles;
            self.flags[k] = b.play.flags;
            self.weight[k] = b.weight;
            self.weight_rate[k] = b.rate;
            self.duration[k] = p.duration;
            self.span[k] = p.span;
            self.rate[k] = p.rate;
            self.first[k] = p.first;
            self.cap[k] = p.cap;
        }
        for k in 0..n {
            let (c, l, fl, t, near) = step_lane_near(
                self.cycle[k],
                self.local[k],
                self.step[k],
                self.duration[k],
                self.cycles[k],
                self.flags[k],
            );
            self.cycle[k] = c;
            self.local[k] = l;
            self.flags[k] = fl;
            self.shown[k] = t;
            let (t, slow) = wrap_shown(t, self.duration[k], self.span[k]);
            let slow = if slow { LATE_CLIP } else { 0 } | if near { 0 } else { LATE_STEP };
            // Steady blends have rate 0: `w + 0` is `w`, already in [0, 1].
            let rate = self.weight_rate[k];
            let w = (self.weight[k] + rate * dt).clamp(0.0, 1.0);
            self.done[k] = ((rate != 0.0) & (w <= FADE_DONE)) as u32;
            self.late[k] = slow;
            self.weight[k] = w;
            (self.f0[k], self.f1[k], self.factor[k]) = frames_fast(t, self.rate[k], self.first[k], self.cap[k]);
        }
        let mut ended = 0;
        for (k, b) in block.iter_mut().enumerate() {
            if self.done[k] != 0 {
                b.clip = ENDED;
                ended += 1;
                continue;
            }
            let (mut f0, mut f1, mut factor) = (self.f0[k], self.f1[k], self.factor[k]);
            if self.late[k] & LATE_STEP != 0 {
                let (c, l, fl, t) = step_lane(
                    self.cycle[k],
                    self.local[k],
                    self.step[k],
                    self.duration[k],
                    self.cycles[k],
                    self.flags[k],
                );
                (self.cycle[k], self.local[k], self.flags[k], self.shown[k]) = (c, l, fl, t);
            }
            if self.late[k] != 0 {
                (f0, f1, factor) = frames_slow(clips, b.clip, self.shown[k]);
            }
            b.play.cycle = self.cycle[k];
            b.play.local = self.local[k];
            b.play.flags = self.flags[k];
            b.weight = self.weight[k];
            let r = &mut out[(b.character as usize).wrapping_sub(first_out)];
            r.frames[2] = f0;
            r.frames[3] = f1;
            r.factors[1] = factor;
            r.factors[2] = self.weight[k];
        }
        ended
    }
}

/// [`Lanes::run`] compiled for AVX2 (8 `f32`/`i32` lanes). Only the instruction set differs (Rust
/// never fuses a multiply and an add by itself), so results are bit for bit those of
/// the baseline loop; a unit test compares them.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn run_avx2(lanes: Lanes<'_>, clips: &[AtlasClip], params: &[ClipParams], dt: f32) -> usize {
    lanes.run_as::<true>(clips, params, dt)
}

/// Writes the frames and factors of whole groups of 8 records as the update's scalar
/// loop does (`frames = [f0, f1, f0, f1]`, `factors = [fa, fa, 0, clip as f32]`), one
/// 32-byte store a record built by shuffles; returns how many records it wrote (the rest
/// are left to the scalar loop). `clip as f32` is a signed conversion here, the same as
/// the unsigned one for clip indices below 2³¹ (every clip index: it is checked against
/// the length of the crowd's clip table).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(super) unsafe fn records_avx2(
    out: &mut [CrowdInstance],
    f0: &[u32],
    f1: &[u32],
    fa: &[f32],
    clip: &[u32],
) -> usize {
    use std::arch::x86_64::*;
    let m = out.len().min(f0.len()).min(f1.len()).min(fa.len()).min(clip.len());
    let mut i = 0;
    while i + 8 <= m {
        // SAFETY: `i + 8 ≤` every slice's length: the loads read and the stores write
        // inside them (unaligned forms); `frames` and `factors` are the record's last 32
        // bytes (`repr(C)`: offset 32).
        unsafe {
            let a0 = _mm256_loadu_si256(f0.as_ptr().add(i).cast());
            let a1 = _mm256_loadu_si256(f1.as_ptr().add(i).cast());
            let fv = _mm256_loadu_ps(fa.as_ptr().add(i));
            let cv = _mm256_cvtepi32_ps(_mm256_loadu_si256(clip.as_ptr().add(i).cast()));
            let z = _mm256_setzero_ps();
            // Pairs (f0, f1) of characters 0 1 | 4 5 and 2 3 | 6 7.
            let p_lo = _mm256_unpacklo_epi32(a0, a1);
            let p_hi = _mm256_unpackhi_epi32(a0, a1);
            // (fa, fa) and (0, clip) pairs, same order.
            let g_lo = _mm256_castps_pd(_mm256_unpacklo_ps(fv, fv));
            let g_hi = _mm256_castps_pd(_mm256_unpackhi_ps(fv, fv));
            let h_lo = _mm256_castps_pd(_mm256_unpacklo_ps(z, cv));
            let h_hi = _mm256_castps_pd(_mm256_unpackhi_ps(z, cv));
            // Per character k (low half) and k + 4 (high half): frames, then factors.
            let frames = [
                _mm256_unpacklo_epi64(p_lo, p_lo),
                _mm256_unpackhi_epi64(p_lo, p_lo),
                _mm256_unpacklo_epi64(p_hi, p_hi),
                _mm256_unpackhi_epi64(p_hi, p_hi),
            ];
            let factors = [
                _mm256_castpd_si256(_mm256_unpacklo_pd(g_lo, h_lo)),
                _mm256_castpd_si256(_mm256_unpackhi_pd(g_lo, h_lo)),
                _mm256_castpd_si256(_mm256_unpacklo_pd(g_hi, h_hi)),
                _mm256_castpd_si256(_mm256_unpackhi_pd(g_hi, h_hi)),
            ];
            let base = out.as_mut_ptr().add(i).cast::<u8>();
            for k in 0..4 {
                let lo = _mm256_permute2x128_si256::<0x20>(frames[k], factors[k]);
                let hi = _mm256_permute2x128_si256::<0x31>(frames[k], factors[k]);
                _mm256_storeu_si256(base.add(k * 64 + 32).cast(), lo);
                _mm256_storeu_si256(base.add((k + 4) * 64 + 32).cast(), hi);
            }
        }
        i += 8;
    }
    i
}

/// [`Lanes::run`] with the widest instruction set this CPU has.
pub(super) fn run(lanes: Lanes<'_>, clips: &[AtlasClip], params: &[ClipParams], dt: f32) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: checked at run time that this CPU supports AVX2 and FMA.
        return unsafe { run_avx2(lanes, clips, params, dt) };
    }
    lanes.run(clips, params, dt)
}

/// Pointers to the crowd's columns, for cutting disjoint runs of characters in the
/// tasks of [`Crowd::update_parallel`].
pub(super) struct RawLanes<'a> {
    pub(super) clip: &'a [u32],
    pub(super) speed: &'a [f32],
    pub(super) duration: &'a [f32],
    pub(super) span: &'a [f32],
    pub(super) rate: &'a [f32],
    pub(super) first: &'a [u32],
    pub(super) cap: &'a [f32],
    pub(super) cycle: *mut i32,
    pub(super) local: *mut f32,
    pub(super) out: *mut CrowdInstance,
    pub(super) blends: *mut Blend,
    pub(super) specials: *mut Special,
    pub(super) len: usize,
    pub(super) blend_len: usize,
    pub(super) special_len: usize,
}

// SAFETY: the pointers are only turned into slices of disjoint runs (see
// `RawLanes::lanes`), each used by one thread; every element type is plain data.
unsafe impl Sync for RawLanes<'_> {}

impl RawLanes<'_> {
    /// Characters `c`, with the blends `b` and specials `s` that belong to them.
    ///
    /// # Safety
    /// The ranges lie inside the columns, and no other live reference covers these
    /// characters, blends or specials while the result lives.
    pub(super) unsafe fn lanes(&self, c: Range<usize>, b: Range<usize>, s: Range<usize>) -> Lanes<'_> {
        debug_assert!(c.end <= self.len && b.end <= self.blend_len && s.end <= self.special_len);
        let n = c.len();
        // SAFETY: per the contract, each range is inside its column and not aliased.
        unsafe {
            Lanes {
                base: c.start,
                clip: &self.clip[c.clone()],
                cycle: std::slice::from_raw_parts_mut(self.cycle.add(c.start), n),
                local: std::slice::from_raw_parts_mut(self.local.add(c.start), n),
                speed: &self.speed[c.clone()],
                duration: &self.duration[c.clone()],
                span: &self.span[c.clone()],
                rate: &self.rate[c.clone()],
                first: &self.first[c.clone()],
                cap: &self.cap[c.clone()],
                out: std::slice::from_raw_parts_mut(self.out.add(c.start), n),
                blends: std::slice::from_raw_parts_mut(self.blends.add(b.start), b.len()),
                specials: std::slice::from_raw_parts_mut(self.specials.add(s.start), s.len()),
            }
        }
    }
}

impl Crowd {
    /// Advances every character by `dt` seconds (times `dt · speed`, fades `dt`) and
    /// writes every [`CrowdInstance`]'s frames and factors (transforms are written by the
    /// edits, not here). A non-finite `dt` counts as 0. A negative `dt` runs time
    /// backwards: clips play in reverse (by their playback's rules) and a fade under way
    /// moves back towards the clip it fades from, stopping there (clip B at weight 1);
    /// blend weights stay in `[0, 1]` whatever the steps.
    ///
    /// Every character's clip A takes one lean branch-free loop over dense arrays (AVX2
    /// where the CPU has it, chosen at run time, with the same results) as a plain endless
    /// `Repeat` playback; those with another playback (kept in a separate list) are then
    /// redone by the full arithmetic, and those with a clip B (another list) take a
    /// second, short pass. It allocates nothing; after edits that reordered those lists
    /// (removals, new entries of lower indices) it sorts them.
    pub fn update(&mut self, dt: f32) {
        let dt = if dt.is_finite() { dt } else { 0.0 };
        self.sort_blends();
        self.sort_specials();
        let (lanes, clips, params) = self.lanes();
        let ended = run(lanes, clips, params, dt);
        self.drop_ended(ended);
    }

    /// [`Self::update`] on `threads` threads (the calling thread included), each
    /// advancing an equal run of characters; the results are identical to `update`'s.
    /// Runs `update` on the calling thread when `threads ≤ 1` or the crowd has fewer
    /// than a few thousand characters, and gives each thread at least a thousand.
    ///
    /// The other `threads − 1` threads belong to the crowd: started by the first call
    /// that needs them (or more of them than before), parked on a condition variable
    /// between calls, ended when the crowd is dropped (a clone starts its own). Steady
    /// calls allocate nothing: handing out the runs and waiting for them takes a mutex
    /// and two condition variables. Where threads cannot be started, the update runs on
    /// the calling thread alone.
    pub fn update_parallel(&mut self, dt: f32, threads: usize) {
        let n = self.len();
        let threads = threads.min(n / PER_THREAD_MIN);
        if threads <= 1 || n < PARALLEL_MIN {
            self.update(dt);
            return;
        }
        let chunk = n.div_ceil(threads);
        let tasks = n.div_ceil(chunk);
        if self.pool.get(tasks - 1, "crowd-update").is_none() {
            self.update(dt);
            return;
        }
        let dt = if dt.is_finite() { dt } else { 0.0 };
        self.sort_blends();
        self.sort_specials();
        // Each task's first character, blend and special; task `t` runs up to task `t + 1`'s.
        self.splits.clear();
        for t in 0..=tasks {
            let c = (t * chunk).min(n);
            let b = self.blends.partition_point(|b| (b.character as usize) < c);
            let s = self.specials.partition_point(|s| (s.character as usize) < c);
            self.splits.push([c, b, s]);
        }
        let ended = AtomicUsize::new(0);
        let Crowd {
            clips,
            params,
            clip,
            cycle,
            local,
            speed,
            specials,
            duration,
            span,
            rate,
            first,
            cap,
            blends,
            instances,
            pool,
            splits,
            ..
        } = self;
        let raw = RawLanes {
            len: instances.len(),
            blend_len: blends.len(),
            special_len: specials.len(),
            cycle: cycle.as_mut_ptr(),
            local: local.as_mut_ptr(),
            out: instances.as_mut_ptr(),
            blends: blends.as_mut_ptr(),
            specials: specials.as_mut_ptr(),
            clip,
            speed,
            duration,
            span,
            rate,
            first,
            cap,
        };
        let task = |t: usize| {
            let ([c0, b0, s0], [c1, b1, s1]) = (splits[t], splits[t + 1]);
            // SAFETY: task `t` touches characters `c0..c1`, the blends `b0..b1` and the
            // specials `s0..s1` only; the ranges of distinct tasks are disjoint (the split
            // points ascend), every task index runs once, and no column is touched or
            // resized until `WorkerPool::run` has returned (it waits for every task).
            let lanes = unsafe { raw.lanes(c0..c1, b0..b1, s0..s1) };
            ended.fetch_add(run(lanes, clips, params, dt), Ordering::Relaxed);
        };
        pool.started().expect("started above").run(tasks, &task);
        self.drop_ended(ended.into_inner());
    }

    pub(super) fn lanes(&mut self) -> (Lanes<'_>, &[AtlasClip], &[ClipParams]) {
        (
            Lanes {
                base: 0,
                clip: &self.clip,
                cycle: &mut self.cycle,
                local: &mut self.local,
                speed: &self.speed,
                duration: &self.duration,
                span: &self.span,
                rate: &self.rate,
                first: &self.first,
                cap: &self.cap,
                out: &mut self.instances,
                blends: &mut self.blends,
                specials: &mut self.specials,
            },
            &self.clips,
            &self.params,
        )
    }

    /// Writes character `index`'s frames and factors without advancing time (the same
    /// loop as an update with `dt = 0`).
    pub(super) fn repack(&mut self, index: usize) {
        let slot = self.blend_of[index];
        let blends = if slot == NO_BLEND { &mut [][..] } else { std::slice::from_mut(&mut self.blends[slot as usize]) };
        let slot = self.special_of[index];
        let specials =
            if slot == NO_SPECIAL { &mut [][..] } else { std::slice::from_mut(&mut self.specials[slot as usize]) };
        let r = index..index + 1;
        let lanes = Lanes {
            base: index,
            clip: &self.clip[r.clone()],
            cycle: &mut self.cycle[r.clone()],
            local: &mut self.local[r.clone()],
            speed: &self.speed[r.clone()],
            duration: &self.duration[r.clone()],
            span: &self.span[r.clone()],
            rate: &self.rate[r.clone()],
            first: &self.first[r.clone()],
            cap: &self.cap[r.clone()],
            out: &mut self.instances[r],
            blends,
            specials,
        };
        // A fade's weight only ends by falling, which `dt = 0` does not do; handled anyway.
        let ended = lanes.run(&self.clips, &self.params, 0.0);
        self.drop_ended(ended);
    }
}
