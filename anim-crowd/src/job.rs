//! A crowd job: for N characters, each playing one clip, sample the clip at the
//! character's time into its own [`SoaPose`], build its model-space matrices with
//! [`soa::local_to_model`](anim_core::pose::hierarchy::local_to_model) and, optionally, its skinning
//! palette (matrices, dual quaternions or both), on one thread or across all cores.
//!
//! Every output is in one place the caller can read after a run: model matrices of all
//! characters in one contiguous `Vec` (stride: the skeleton's joint count), matrix
//! palettes in another (stride: the skin's joint count, ready to upload to the GPU as one
//! buffer), and a [`DqPalette`] per character for dual-quaternion skinning.
//!
//! Sampling is generic over [`SoaSampler`]: this module implements it for the exact
//! [`Clip`](anim_core::clip::Clip) and for [`BakedClip`](anim_core::clip::BakedClip); a runtime clip type implements it the same way. Each
//! character keeps its own [`SoaSampler::Context`] (key cursor or cache), so forward
//! playback stays cheap.
//!
//! Threads: [`CrowdJob::run`] / [`CrowdJob::update`] split the characters into one
//! contiguous run per thread (the calling thread takes the first). The other threads
//! belong to the job: started by the first call that needs them, parked between calls,
//! ended when the job is dropped. Each character is computed by the same code whichever
//! thread runs it, so the output is bit-identical for every thread count. Steady calls
//! allocate nothing.
//!
//! ```
//! use anim_crowd::job::{CrowdCharacter, CrowdJob, PaletteOutput};
//! use anim_core::clip::{Clip, Interpolation, JointTracks, Track};
//! use anim_core::pose::{JointDesc, Skeleton};
//! use anim_core::skin::Skin;
//! use anim_math::{Transform, Vec3};
//!
//! // A root and a child one unit up; the root slides along x over one second.
//! let skeleton = Skeleton::new(vec![
//!     JointDesc::new("root", None, Transform::IDENTITY),
//!     JointDesc::new("tip", Some(0), Transform::from_translation(Vec3::new(0.0, 1.0, 0.0))),
//! ])
//! .unwrap();
//! let mut slide = JointTracks::new(0);
//! slide.translation = Some(
//!     Track::new(Interpolation::Linear, vec![0.0, 1.0], vec![Vec3::zeros(), Vec3::new(2.0, 0.0, 0.0)]).unwrap(),
//! );
//! let clips = [Clip::new("slide", vec![slide], vec![]).unwrap()];
//! let skin = Skin::from_skeleton(&skeleton);
//! let mut job = CrowdJob::new(&skeleton, &clips).with_palettes(&skin, PaletteOutput::Matrices).unwrap();
//! for i in 0..8 {
//!     job.add(CrowdCharacter { clip: 0, time: 0.0, speed: 1.0 + i as f32, looping: true }).unwrap();
//! }
//! job.update(0.25, 2).unwrap(); // advance every character by 0.25 s, then sample on 2 threads
//! // Character 1 plays at speed 2: half-way through the clip, its tip is at x = 1.
//! let tip = job.model(1)[1];
//! assert!((tip[(0, 3)] - 1.0).abs() < 1e-6 && (tip[(1, 3)] - 1.0).abs() < 1e-6);
//! assert_eq!(job.palettes().len(), 8 * skin.len());
//! ```

use crate::pool::PoolSlot;
use anim_core::clip::{ClipError, SoaSampler, TimePolicy};
use anim_core::pose::hierarchy::local_to_model;
use anim_core::pose::{PoseError, Skeleton, SoaPose};
use anim_core::skin::{DqPalette, Skin};
use anim_math::{DualQuat, Mat4};
use thiserror::Error;

/// Fewest characters [`CrowdJob::run_parallel`] gives a thread: below that, handing the
/// work out costs more than it saves.
pub const MIN_PER_THREAD: usize = 16;

/// One character of a [`CrowdJob`]: which clip it plays, where and how fast.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrowdCharacter {
    /// Index into the job's clip slice.
    pub clip: usize,
    /// Playback time in seconds, in `[0, duration]` of its clip (brought there on add).
    pub time: f32,
    /// Playback speed (1 = real time; negative plays backwards).
    pub speed: f32,
    /// Looping playback wraps the time around the clip; otherwise it is clamped.
    pub looping: bool,
}

impl CrowdCharacter {
    /// The time policy of this character's playback.
    #[inline]
    pub fn policy(&self) -> TimePolicy {
        if self.looping { TimePolicy::Wrap } else { TimePolicy::Clamp }
    }

    /// Moves the time on by `speed · dt` under the character's policy, in a clip of
    /// `duration` seconds. What [`CrowdJob::advance`] does to each character.
    #[inline]
    pub fn advance(&mut self, dt: f32, duration: f32) {
        self.time = self.policy().apply(self.time + self.speed * dt, duration);
    }
}

/// Which skinning palettes a [`CrowdJob`] builds after the model matrices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PaletteOutput {
    /// None: the job stops at model matrices.
    #[default]
    None,
    /// Matrix palettes (`model(joint) · inverse_bind`), one contiguous buffer.
    Matrices,
    /// A [`DqPalette`] per character.
    DualQuats,
    /// Both.
    Both,
}

impl PaletteOutput {
    fn matrices(self) -> bool {
        matches!(self, Self::Matrices | Self::Both)
    }

    fn dual_quats(self) -> bool {
        matches!(self, Self::DualQuats | Self::Both)
    }
}

/// Why a [`CrowdJob`] refused a character or a run failed.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum CrowdJobError {
    /// A character names a clip the job does not have.
    #[error("character {character}: clip {clip} does not exist ({clips} clips)")]
    NoClip {
        /// The character (its index once added).
        character: usize,
        /// The clip index it names.
        clip: usize,
        /// Clips the job has.
        clips: usize,
    },
    /// A character's time or speed is NaN or infinite.
    #[error("character {character}: time {time} or speed {speed} is not finite")]
    NotFinite {
        /// The character (its index once added).
        character: usize,
        /// Its time.
        time: f32,
        /// Its speed.
        speed: f32,
    },
    /// No such character.
    #[error("character {character} does not exist ({count} characters)")]
    NoCharacter {
        /// The index asked for.
        character: usize,
        /// Characters in the job.
        count: usize,
    },
    /// The time step is NaN or infinite.
    #[error("time step {0} is not finite")]
    NonFiniteStep(f32),
    /// The skin does not fit the job's skeleton.
    #[error("skin: {0}")]
    Skin(#[source] PoseError),
    /// A clip was made for another skeleton than the job's (a runtime clip compiled for
    /// the full skeleton, played on a trimmed one).
    #[error("clip {clip}: {source}")]
    ClipSkeleton {
        /// The clip index.
        clip: usize,
        /// The mix-up.
        source: PoseError,
    },
    /// Sampling a character's clip failed (the first such character, by index).
    #[error("character {character}: {source}")]
    Sample {
        /// The character.
        character: usize,
        /// What went wrong.
        source: ClipError,
    },
}

/// Sampling, local-to-model and palettes for N characters of one skeleton, each with its
/// own clip, time, sampling context and output buffers. See the [module docs](self).
pub struct CrowdJob<'a, S: SoaSampler> {
    skeleton: &'a Skeleton,
    clips: &'a [S],
    skin: Option<&'a Skin>,
    output: PaletteOutput,
    characters: Vec<CrowdCharacter>,
    contexts: Vec<S::Context>,
    poses: Vec<SoaPose>,
    models: Vec<Mat4>,
    palettes: Vec<Mat4>,
    dual_quats: Vec<DqPalette>,
    /// One slot per thread of the last run: the first sampling error of its characters.
    errors: Vec<Option<(usize, ClipError)>>,
    pool: PoolSlot,
}

impl<S: SoaSampler> std::fmt::Debug for CrowdJob<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrowdJob")
            .field("joints", &self.skeleton.len())
            .field("clips", &self.clips.len())
            .field("output", &self.output)
            .field("characters", &self.characters)
            .field("pool", &self.pool)
            .finish_non_exhaustive()
    }
}

impl<'a, S: SoaSampler> CrowdJob<'a, S> {
    /// A job with no characters over `skeleton`, whose characters play `clips`. It builds
    /// no palettes until [`CrowdJob::with_palettes`].
    pub fn new(skeleton: &'a Skeleton, clips: &'a [S]) -> Self {
        Self {
            skeleton,
            clips,
            skin: None,
            output: PaletteOutput::None,
            characters: Vec::new(),
            contexts: Vec::new(),
            poses: Vec::new(),
            models: Vec::new(),
            palettes: Vec::new(),
            dual_quats: Vec::new(),
            errors: Vec::new(),
            pool: PoolSlot::default(),
        }
    }

    /// Builds `output` palettes of `skin` after the model matrices (or none, with
    /// [`PaletteOutput::None`]). Buffers of characters already added are resized.
    ///
    /// # Errors
    /// The skin was made for another skeleton, or names a joint the skeleton does not have.
    pub fn with_palettes(mut self, skin: &'a Skin, output: PaletteOutput) -> Result<Self, CrowdJobError> {
        skin.check_skeleton(self.skeleton).map_err(CrowdJobError::Skin)?;
        let count = self.skeleton.len();
        if let Some((index, &joint)) = skin.joints().iter().enumerate().find(|(_, j)| **j >= count) {
            return Err(CrowdJobError::Skin(PoseError::JointOutOfRange { index, joint, count }));
        }
        self.skin = Some(skin);
        self.output = output;
        let n = self.characters.len();
        self.palettes.clear();
        self.palettes.resize(if output.matrices() { n * skin.len() } else { 0 }, Mat4::identity());
        self.dual_quats.clear();
        if output.dual_quats() {
            self.dual_quats.resize_with(n, || rigid_identity(skin.len()));
        }
        Ok(self)
    }

    /// Reserves room for `additional` more characters, so adding them allocates once.
    pub fn reserve(&mut self, additional: usize) {
        self.characters.reserve(additional);
        self.contexts.reserve(additional);
        self.poses.reserve(additional);
        self.models.reserve(additional * self.skeleton.len());
        self.palettes.reserve(additional * self.palette_stride());
        if self.output.dual_quats() {
            self.dual_quats.reserve(additional);
        }
    }

    /// Adds a character (its time brought into its clip by its policy) with a fresh
    /// sampling context, its pose at the skeleton's rest pose and identity outputs until
    /// the next run. Returns its index.
    ///
    /// # Errors
    /// Unknown clip, a clip made for another skeleton, or a time or speed that is not
    /// finite.
    pub fn add(&mut self, character: CrowdCharacter) -> Result<usize, CrowdJobError> {
        let index = self.characters.len();
        let clip = self.check(index, &character)?;
        let mut character = character;
        character.time = character.policy().apply(character.time, clip.duration());
        self.characters.push(character);
        self.contexts.push(clip.new_context());
        self.poses.push(SoaPose::from_pose(self.skeleton.rest_pose()));
        self.models.resize(self.models.len() + self.skeleton.len(), Mat4::identity());
        self.palettes.resize(self.palettes.len() + self.palette_stride(), Mat4::identity());
        if self.output.dual_quats() {
            let joints = self.skin.map_or(0, Skin::len);
            self.dual_quats.push(rigid_identity(joints));
        }
        Ok(index)
    }

    /// Replaces character `index` (a new clip gets a fresh sampling context; the pose is
    /// kept, so joints the new clip does not animate hold their last values).
    ///
    /// # Errors
    /// No such character, unknown clip, or a time or speed that is not finite.
    pub fn set(&mut self, index: usize, character: CrowdCharacter) -> Result<(), CrowdJobError> {
        let count = self.characters.len();
        if index >= count {
            return Err(CrowdJobError::NoCharacter { character: index, count });
        }
        let clip = self.check(index, &character)?;
        let mut character = character;
        character.time = character.policy().apply(character.time, clip.duration());
        if character.clip != self.characters[index].clip {
            self.contexts[index] = clip.new_context();
        }
        self.characters[index] = character;
        Ok(())
    }

    fn check(&self, index: usize, c: &CrowdCharacter) -> Result<&'a S, CrowdJobError> {
        let clips = self.clips;
        let clip =
            clips.get(c.clip).ok_or(CrowdJobError::NoClip { character: index, clip: c.clip, clips: clips.len() })?;
        if !(c.time.is_finite() && c.speed.is_finite()) {
            return Err(CrowdJobError::NotFinite { character: index, time: c.time, speed: c.speed });
        }
        if clip.skeleton_id().is_some_and(|id| id != self.skeleton.id()) {
            let source = PoseError::SkeletonMismatch { what: "clip", joints: self.skeleton.len() };
            return Err(CrowdJobError::ClipSkeleton { clip: c.clip, source });
        }
        Ok(clip)
    }

    fn palette_stride(&self) -> usize {
        if self.output.matrices() { self.skin.map_or(0, Skin::len) } else { 0 }
    }

    /// Number of characters.
    pub fn len(&self) -> usize {
        self.characters.len()
    }

    /// True when the job has no characters.
    pub fn is_empty(&self) -> bool {
        self.characters.is_empty()
    }

    /// The characters, by index.
    pub fn characters(&self) -> &[CrowdCharacter] {
        &self.characters
    }

    /// The skeleton every character shares.
    pub fn skeleton(&self) -> &'a Skeleton {
        self.skeleton
    }

    /// Which palettes the job builds.
    pub fn palette_output(&self) -> PaletteOutput {
        self.output
    }

    /// Character `index`'s local pose from the last run.
    ///
    /// # Panics
    /// `index >= len()`.
    pub fn pose(&self, index: usize) -> &SoaPose {
        &self.poses[index]
    }

    /// Model matrices of every character, character after character (stride: the
    /// skeleton's joint count).
    pub fn models(&self) -> &[Mat4] {
        &self.models
    }

    /// Character `index`'s model matrices.
    ///
    /// # Panics
    /// `index >= len()`.
    pub fn model(&self, index: usize) -> &[Mat4] {
        let j = self.skeleton.len();
        &self.models[index * j..(index + 1) * j]
    }

    /// Matrix palettes of every character, character after character (stride: the
    /// skin's joint count); empty unless the job builds [`PaletteOutput::Matrices`].
    pub fn palettes(&self) -> &[Mat4] {
        &self.palettes
    }

    /// Character `index`'s matrix palette (empty unless the job builds matrices).
    ///
    /// # Panics
    /// `index >= len()`.
    pub fn palette(&self, index: usize) -> &[Mat4] {
        let j = self.palette_stride();
        &self.palettes[index * j..(index + 1) * j]
    }

    /// Character `index`'s dual-quaternion palette, when the job builds them.
    pub fn dual_quat_palette(&self, index: usize) -> Option<&DqPalette> {
        self.dual_quats.get(index)
    }

    /// Moves every character's time on by `speed · dt` (wrapped or clamped), on the
    /// calling thread. [`CrowdJob::update`] does the same inside its threads.
    ///
    /// # Errors
    /// `dt` is not finite (nothing changes then).
    pub fn advance(&mut self, dt: f32) -> Result<(), CrowdJobError> {
        if !dt.is_finite() {
            return Err(CrowdJobError::NonFiniteStep(dt));
        }
        for c in &mut self.characters {
            c.advance(dt, self.clips[c.clip].duration());
        }
        Ok(())
    }

    /// Samples every character at its time, then builds its model matrices and palettes,
    /// on `threads` threads (the calling one included; at most one per character).
    ///
    /// # Errors
    /// A clip failed to sample (the lowest such character is named); every other
    /// character's outputs are still written.
    pub fn run(&mut self, threads: usize) -> Result<(), CrowdJobError> {
        self.execute(None, threads)
    }

    /// [`CrowdJob::advance`] then [`CrowdJob::run`], with each thread advancing its own
    /// characters.
    ///
    /// # Errors
    /// As [`CrowdJob::advance`] (nothing runs then) and [`CrowdJob::run`].
    pub fn update(&mut self, dt: f32, threads: usize) -> Result<(), CrowdJobError> {
        if !dt.is_finite() {
            return Err(CrowdJobError::NonFiniteStep(dt));
        }
        self.execute(Some(dt), threads)
    }

    /// [`CrowdJob::run`] on every core ([`cores`]), giving
    /// each thread at least [`MIN_PER_THREAD`] characters.
    ///
    /// # Errors
    /// As [`CrowdJob::run`].
    pub fn run_parallel(&mut self) -> Result<(), CrowdJobError> {
        let threads = self.parallel_threads();
        self.execute(None, threads)
    }

    /// [`CrowdJob::update`] on every core, as [`CrowdJob::run_parallel`].
    ///
    /// # Errors
    /// As [`CrowdJob::update`].
    pub fn update_parallel(&mut self, dt: f32) -> Result<(), CrowdJobError> {
        let threads = self.parallel_threads();
        self.update(dt, threads)
    }

    fn parallel_threads(&self) -> usize {
        cores().min(self.characters.len() / MIN_PER_THREAD).max(1)
    }

    fn execute(&mut self, dt: Option<f32>, threads: usize) -> Result<(), CrowdJobError> {
        let n = self.characters.len();
        if n == 0 {
            return Ok(());
        }
        let threads = threads.clamp(1, n);
        let chunk = n.div_ceil(threads);
        let mut tasks = n.div_ceil(chunk);
        if tasks > 1 && self.pool.get(tasks - 1, "crowd-job").is_none() {
            // Threads could not be started: everything on the calling thread.
            tasks = 1;
        }
        let chunk = n.div_ceil(tasks);
        if self.errors.len() < tasks {
            self.errors.resize(tasks, None);
        }
        let shared = Shared {
            skeleton: self.skeleton,
            clips: self.clips,
            skin: self.skin,
            output: self.output,
            dt,
            joints: self.skeleton.len(),
            palette_stride: self.palette_stride(),
        };
        if tasks == 1 {
            let views = Views {
                first: 0,
                characters: &mut self.characters,
                contexts: &mut self.contexts,
                poses: &mut self.poses,
                models: &mut self.models,
                palettes: &mut self.palettes,
                dual_quats: &mut self.dual_quats,
            };
            self.errors[0] = shared.run(views);
        } else {
            let raw = RawParts {
                characters: self.characters.as_mut_ptr(),
                contexts: self.contexts.as_mut_ptr(),
                poses: self.poses.as_mut_ptr(),
                models: self.models.as_mut_ptr(),
                palettes: self.palettes.as_mut_ptr(),
                dual_quats: self.dual_quats.as_mut_ptr(),
                errors: self.errors.as_mut_ptr(),
                n,
                has_dual_quats: !self.dual_quats.is_empty(),
            };
            let task = |t: usize| {
                let start = t * chunk;
                let end = ((t + 1) * chunk).min(n);
                // SAFETY: task `t` touches characters `start..end` and error slot `t`
                // only; the ranges of distinct tasks are disjoint, every task index runs
                // exactly once, and the vectors behind the pointers are neither touched
                // nor resized until `WorkerPool::run` has returned (it waits for every task).
                let (views, error) = unsafe { raw.views(start, end, t, &shared) };
                *error = shared.run(views);
            };
            let pool = self.pool.started().expect("tasks > 1 only with a started pool");
            pool.run(tasks, &task);
        }
        // The first error by character index (tasks hold ascending runs).
        match self.errors[..tasks].iter_mut().find_map(Option::take) {
            Some((character, source)) => {
                self.errors[..tasks].iter_mut().for_each(|e| *e = None);
                Err(CrowdJobError::Sample { character, source })
            }
            None => Ok(()),
        }
    }
}

/// The machine's core count ([`std::thread::available_parallelism`], 1 when unknown),
/// asked once: on Linux the question reads cgroup files, which allocates.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get))
}

/// An identity rigid dual-quaternion palette of `joints` entries (storage sized once).
fn rigid_identity(joints: usize) -> DqPalette {
    let mut p = DqPalette::new();
    p.set_rigid(joints, |_| DualQuat::identity());
    p
}

/// What every character of a run reads.
struct Shared<'a, S> {
    skeleton: &'a Skeleton,
    clips: &'a [S],
    skin: Option<&'a Skin>,
    output: PaletteOutput,
    dt: Option<f32>,
    joints: usize,
    palette_stride: usize,
}

/// One run of consecutive characters, starting at character `first`.
struct Views<'b, C> {
    first: usize,
    characters: &'b mut [CrowdCharacter],
    contexts: &'b mut [C],
    poses: &'b mut [SoaPose],
    models: &'b mut [Mat4],
    palettes: &'b mut [Mat4],
    dual_quats: &'b mut [DqPalette],
}

impl<S: SoaSampler> Shared<'_, S> {
    /// Advances (when stepping), samples, builds model matrices and palettes of every
    /// character in `v`; returns the first sampling error.
    fn run(&self, v: Views<'_, S::Context>) -> Option<(usize, ClipError)> {
        let mut error = None;
        let skin = self.skin.filter(|_| self.output != PaletteOutput::None);
        let stride = self.palette_stride;
        for (i, (character, (context, pose))) in
            v.characters.iter_mut().zip(v.contexts.iter_mut().zip(v.poses.iter_mut())).enumerate()
        {
            let clip = &self.clips[character.clip];
            let duration = clip.duration();
            if let Some(dt) = self.dt {
                character.advance(dt, duration);
            }
            if let Err(e) = clip.sample_soa(context, character.time, character.policy(), pose) {
                error.get_or_insert((v.first + i, e));
            }
            let model = &mut v.models[i * self.joints..(i + 1) * self.joints];
            local_to_model(self.skeleton, pose, model).expect("poses and model runs are sized to the skeleton");
            if let Some(skin) = skin {
                if stride > 0 {
                    let palette = &mut v.palettes[i * stride..(i + 1) * stride];
                    anim_core::skin::palette::skinning_matrices(model, skin, palette)
                        .expect("the skin was checked against the skeleton, palettes are sized to it");
                }
                if let Some(dq) = v.dual_quats.get_mut(i) {
                    dq.update(model, skin).expect("the skin was checked against the skeleton");
                }
            }
        }
        error
    }
}

/// Pointers to the job's per-character storage, for cutting disjoint runs in tasks.
struct RawParts<C> {
    characters: *mut CrowdCharacter,
    contexts: *mut C,
    poses: *mut SoaPose,
    models: *mut Mat4,
    palettes: *mut Mat4,
    dual_quats: *mut DqPalette,
    errors: *mut Option<(usize, ClipError)>,
    n: usize,
    has_dual_quats: bool,
}

// SAFETY: the pointers are only turned into slices of disjoint character runs (see
// `RawParts::views`), each used by one thread; the contexts are `Send` and the other
// element types are plain data.
unsafe impl<C: Send> Sync for RawParts<C> {}

impl<C> RawParts<C> {
    /// The run of characters `start..end` and error slot `slot`.
    ///
    /// # Safety
    /// `start <= end <= n`, `slot` is within the error slots, and no other live
    /// reference covers these characters or this slot while the result lives.
    #[allow(clippy::mut_from_ref)]
    unsafe fn views<S>(
        &self,
        start: usize,
        end: usize,
        slot: usize,
        shared: &Shared<'_, S>,
    ) -> (Views<'_, C>, &mut Option<(usize, ClipError)>) {
        let len = end - start;
        let (j, p) = (shared.joints, shared.palette_stride);
        debug_assert!(end <= self.n);
        // SAFETY: per the contract, each range lies inside its vector (models hold
        // `n · joints`, palettes `n · p`, dual quaternions `n` or none) and is not
        // aliased.
        unsafe {
            let views = Views {
                first: start,
                characters: std::slice::from_raw_parts_mut(self.characters.add(start), len),
                contexts: std::slice::from_raw_parts_mut(self.contexts.add(start), len),
                poses: std::slice::from_raw_parts_mut(self.poses.add(start), len),
                models: std::slice::from_raw_parts_mut(self.models.add(start * j), len * j),
                palettes: std::slice::from_raw_parts_mut(self.palettes.add(start * p), len * p),
                dual_quats: if self.has_dual_quats {
                    std::slice::from_raw_parts_mut(self.dual_quats.add(start), len)
                } else {
                    &mut []
                },
            };
            (views, &mut *self.errors.add(slot))
        }
    }
}
