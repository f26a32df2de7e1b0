//! The book's `CrossFadeController` (chapter 12): plays one clip and fades to others.
//!
//! Behaviour, step for step as in the book:
//! - [`CrossFadeController::play`] clears every fade, makes the clip current from its start
//!   time and resets the pose to the rest pose.
//! - [`CrossFadeController::fade_to`] queues a fade target, unless the clip is already the
//!   last queued target (or, with nothing queued, the current clip). With no current clip
//!   it behaves like `play`.
//! - [`CrossFadeController::update`] first promotes a finished target (elapsed ≥ duration,
//!   from earlier updates) to the current clip, keeping that target's play time. The
//!   targets queued before it are dropped too: they were blended *under* it, and at full
//!   weight it hid them completely, so dropping them changes nothing on screen. (The book
//!   removes one finished target per update and keeps the others; with several
//!   overlapping fades that let an older, half-faded target reappear over the new
//!   current clip.) Then it resets the pose to the rest pose, samples the current clip at
//!   `time + dt`, and for every target in queue order samples it at its `time + dt`, adds
//!   `dt` to its elapsed time and blends it over the pose with weight
//!   `min(elapsed / duration, 1)`. So a fade always starts from the *current clip's*
//!   pose, never from a frozen snapshot, and after `k` updates of `dt` the new target has
//!   weight `k·dt / duration`.
//! - A negative `dt` runs everything backwards: clips play in reverse, fades move back
//!   towards their source and stop at weight 0 (a fade that finished, and so became the
//!   current clip, stays finished). Weights stay in `[0, 1]`.
//!
//! Clips are shared as [`Arc<Clip>`] and compared by identity ([`Arc::ptr_eq`]). Each slot
//! plays with its own [`TimePolicy`] (looping or clamped) and [`SamplingCache`].
//! `update` allocates nothing: the pose buffers of the targets come from a pool sized at
//! construction; `play` and `fade_to` allocate a sampling cache for the clip they start
//! (and a pose only when more fades overlap than the pool holds).
//!
//! ```
//! use std::sync::Arc;
//! use anim_core::clip::{Clip, Interpolation, JointTracks, TimePolicy, Track};
//! use anim_core::pose::{JointDesc, Skeleton};
//! use anim_core::blend::crossfade::CrossFadeController;
//! use anim_math::{Transform, Vec3};
//!
//! let skeleton = Skeleton::new(vec![JointDesc::new("root", None, Transform::IDENTITY)]).unwrap();
//! let still = |x: f32| {
//!     let mut jt = JointTracks::new(0);
//!     jt.translation = Some(Track::new(Interpolation::Linear, vec![0.0, 1.0],
//!         vec![Vec3::new(x, 0.0, 0.0); 2]).unwrap());
//!     Arc::new(Clip::new("still", vec![jt], vec![]).unwrap())
//! };
//! let (a, b) = (still(0.0), still(4.0));
//! let mut fader = CrossFadeController::new(&skeleton, 4);
//! fader.play(a, TimePolicy::Wrap).unwrap();
//! fader.fade_to(b, 0.5, TimePolicy::Wrap).unwrap();
//! fader.update(0.25).unwrap(); // half way: weight 0.25 / 0.5
//! assert!((fader.pose().locals()[0].translation.x - 2.0).abs() < 1e-6);
//! ```

use crate::clip::root_motion::blend_deltas;
use crate::clip::{Clip, ClipError, LoopMode, Playback, SamplingCache, Step, TimePolicy};
use crate::pose::{Pose, Skeleton};
use anim_math::Transform;
use std::sync::Arc;
use thiserror::Error;

/// Why a crossfade request or update failed.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum CrossFadeError {
    /// Sampling a clip failed (it animates a joint the skeleton lacks, or a time is not finite).
    #[error(transparent)]
    Clip(#[from] ClipError),
    /// The time step is NaN or infinite.
    #[error("time step {0} is not finite")]
    NonFiniteDelta(f32),
    /// A fade duration is negative, NaN or infinite.
    #[error("fade duration {0} is negative or not finite")]
    BadDuration(f32),
}

/// One playing clip: the clip, its playback state and its key cache.
#[derive(Clone, Debug)]
struct Playing {
    clip: Arc<Clip>,
    playback: Playback,
    time: f32,
    cache: SamplingCache,
    delta: Transform,
}

/// The playback a [`TimePolicy`] stands for: `Wrap` loops forever, `Clamp` plays once.
fn playback_for(clip: &Clip, policy: TimePolicy) -> Playback {
    match policy {
        TimePolicy::Wrap => Playback::new(clip.duration(), LoopMode::Repeat),
        TimePolicy::Clamp => Playback::once(clip.duration()),
    }
}

impl Playing {
    fn start(clip: Arc<Clip>, mut playback: Playback) -> Self {
        let cache = SamplingCache::new(&clip);
        playback.seek(f64::from(clip.start_time()));
        Self { time: playback.time(), clip, playback, cache, delta: Transform::IDENTITY }
    }

    fn advance(&mut self, dt: f32, pose: &mut Pose) -> Result<(), ClipError> {
        let step = self.playback.advance(dt);
        self.delta = match self.clip.root_motion() {
            Some(m) => m.delta(&self.playback, step.from, step.to),
            None => Transform::IDENTITY,
        };
        self.time = self.clip.sample_cached(&mut self.cache, self.playback.time(), TimePolicy::Clamp, pose)?;
        Ok(())
    }
}

/// A clip being faded in (the book's `CrossFadeTarget`).
#[derive(Clone, Debug)]
struct Target {
    playing: Playing,
    pose: Pose,
    duration: f32,
    elapsed: f32,
}

impl Target {
    fn weight(&self) -> f32 {
        if self.duration <= 0.0 { 1.0 } else { (self.elapsed / self.duration).clamp(0.0, 1.0) }
    }
}

/// A read-only view of one queued fade.
#[derive(Clone, Copy, Debug)]
pub struct FadeInfo<'a> {
    /// The clip fading in.
    pub clip: &'a Arc<Clip>,
    /// Its play time (already brought into the clip by its policy).
    pub time: f32,
    /// Seconds faded so far.
    pub elapsed: f32,
    /// Length of the fade in seconds.
    pub duration: f32,
    /// The weight it was blended with in the last update.
    pub weight: f32,
}

/// Plays a clip and crossfades to others; see the [module docs](self) for the exact rules.
///
/// ```
/// use anim_core::blend::CrossFadeController;
/// use anim_core::clip::TimePolicy;
///
/// let m = anim_mannequin::build();
/// let (walk, run) = (m.clip("walk").unwrap().clone(), m.clip("run").unwrap().clone());
/// let mut fader = CrossFadeController::new(&m.skeleton, 2);
/// fader.play(walk.into(), TimePolicy::Wrap)?;
/// fader.fade_to(run.into(), 0.2, TimePolicy::Wrap)?;
/// fader.update(0.1)?; // half way
/// assert_eq!(fader.targets().next().map(|fade| fade.weight), Some(0.5));
/// fader.update(-0.1)?; // a step back runs the fade back to its source
/// assert_eq!(fader.targets().next().map(|fade| fade.weight), Some(0.0));
/// # Ok::<(), anim_core::blend::CrossFadeError>(())
/// ```
#[derive(Clone, Debug)]
pub struct CrossFadeController {
    rest: Pose,
    pose: Pose,
    current: Option<Playing>,
    targets: Vec<Target>,
    spare: Vec<Pose>,
    delta: Transform,
}

impl CrossFadeController {
    /// A controller for `skeleton` with room for `target_capacity` overlapping fades
    /// before it allocates. The pose starts as the rest pose; nothing plays.
    pub fn new(skeleton: &Skeleton, target_capacity: usize) -> Self {
        let rest = skeleton.rest_pose().clone();
        Self {
            pose: rest.clone(),
            spare: vec![rest.clone(); target_capacity],
            targets: Vec::with_capacity(target_capacity),
            current: None,
            rest,
            delta: Transform::IDENTITY,
        }
    }

    /// Clears every fade, makes `clip` current from its start time and resets the pose to
    /// the rest pose (the book's `Play`).
    ///
    /// # Errors
    /// The clip animates a joint the skeleton lacks.
    pub fn play(&mut self, clip: Arc<Clip>, policy: TimePolicy) -> Result<(), CrossFadeError> {
        let playback = playback_for(&clip, policy);
        self.play_with(clip, playback)
    }

    /// [`Self::play`] with explicit playback settings (speed, loop mode, repetitions); the
    /// playback starts at the clip's start time.
    ///
    /// # Errors
    /// The clip animates a joint the skeleton lacks.
    pub fn play_with(&mut self, clip: Arc<Clip>, playback: Playback) -> Result<(), CrossFadeError> {
        clip.check_joints(self.rest.len())?;
        self.clear_targets();
        self.delta = Transform::IDENTITY;
        self.current = Some(Playing::start(clip, playback));
        self.pose.locals_mut().copy_from_slice(self.rest.locals());
        Ok(())
    }

    /// Queues a fade to `clip` over `duration` seconds (the book's `FadeTo`). Returns
    /// `false` and does nothing when `clip` is already the last queued target, or the
    /// current clip when nothing is queued. With no current clip this is [`Self::play`].
    ///
    /// # Errors
    /// A negative or non-finite duration, or a clip that animates a joint the skeleton lacks.
    pub fn fade_to(&mut self, clip: Arc<Clip>, duration: f32, policy: TimePolicy) -> Result<bool, CrossFadeError> {
        let playback = playback_for(&clip, policy);
        self.fade_to_with(clip, duration, playback)
    }

    /// [`Self::fade_to`] with explicit playback settings for the clip fading in.
    ///
    /// # Errors
    /// As [`Self::fade_to`].
    pub fn fade_to_with(&mut self, clip: Arc<Clip>, duration: f32, playback: Playback) -> Result<bool, CrossFadeError> {
        if !duration.is_finite() || duration < 0.0 {
            return Err(CrossFadeError::BadDuration(duration));
        }
        clip.check_joints(self.rest.len())?;
        let Some(current) = &self.current else {
            self.play_with(clip, playback)?;
            return Ok(true);
        };
        let last = self.targets.last().map_or(&current.clip, |t| &t.playing.clip);
        if Arc::ptr_eq(last, &clip) {
            return Ok(false);
        }
        let mut pose = match self.spare.pop() {
            Some(p) => p,
            None => {
                // More overlapping fades than the pool holds: grow it, and make room in the
                // pool for every pose now in use so returning them never allocates.
                self.spare.reserve(self.targets.len() + 1);
                self.rest.clone()
            }
        };
        pose.locals_mut().copy_from_slice(self.rest.locals());
        self.targets.push(Target { playing: Playing::start(clip, playback), pose, duration, elapsed: 0.0 });
        Ok(true)
    }

    /// Advances every clip by `dt` seconds and rebuilds the pose (the book's `Update`).
    /// Does nothing while no clip plays. Allocates nothing.
    ///
    /// Any finite `dt` is a step: a negative one runs time backwards (every clip plays in
    /// reverse, as its [`Playback`] does, and every fade moves back towards its source and
    /// stops there, at weight 0, still queued); zero re-samples without moving. Fade
    /// weights stay in `[0, 1]` whatever the sequence of steps.
    ///
    /// # Errors
    /// A non-finite `dt`.
    pub fn update(&mut self, dt: f32) -> Result<(), CrossFadeError> {
        if !dt.is_finite() {
            return Err(CrossFadeError::NonFiniteDelta(dt));
        }
        let Some(current) = &mut self.current else {
            return Ok(());
        };
        if let Some(done) = self.targets.iter().rposition(|t| t.elapsed >= t.duration) {
            for t in self.targets.drain(..=done) {
                let Target { playing, pose, .. } = t;
                self.spare.push(pose);
                // The last drained target is the finished one: it becomes current.
                *current = playing;
            }
        }
        self.pose.locals_mut().copy_from_slice(self.rest.locals());
        current.advance(dt, &mut self.pose)?;
        self.delta = current.delta;
        for target in &mut self.targets {
            target.playing.advance(dt, &mut target.pose)?;
            // A negative step runs the fade back towards its source, and stops there.
            target.elapsed = (target.elapsed + dt).max(0.0);
            let w = target.weight();
            // The layered job's two-layer case (current pose at 1 − w, target at w).
            crate::blend::layered::mix_two_into(self.pose.locals_mut(), target.pose.locals(), w);
            // The root-motion deltas mix with the same weight as the poses.
            self.delta = blend_deltas([(&self.delta, 1.0 - w), (&target.playing.delta, w)]);
        }
        Ok(())
    }

    /// The pose built by the last update (the rest pose before the first).
    pub fn pose(&self) -> &Pose {
        &self.pose
    }

    /// The root-motion delta of the last update: every playing clip's step delta (identity
    /// for a clip without [`Clip::root_motion`]) mixed with the weights its pose was mixed
    /// with. Apply it as `world = world · delta`.
    pub fn root_motion_delta(&self) -> &Transform {
        &self.delta
    }

    /// The current clip's playback state, if one plays.
    pub fn current_playback(&self) -> Option<&Playback> {
        self.current.as_ref().map(|c| &c.playback)
    }

    /// The current clip's last step (unwrapped positions before and after, and whether it
    /// finished the clip): query its events with [`crate::clip::events::crossed_into`].
    pub fn current_step(&self) -> Option<Step> {
        self.current.as_ref().map(|c| c.playback.last_step())
    }

    /// Clears `out` and fills it with the current clip's events crossed by the last
    /// update, in order (see [`crate::clip::events`]). Allocates nothing while `out` has room.
    pub fn current_events(&self, out: &mut Vec<crate::clip::events::FiredEvent>) {
        out.clear();
        if let Some(c) = &self.current {
            let s = c.playback.last_step();
            crate::clip::events::crossed_into(c.clip.events(), &c.playback, s.from, s.to, out);
        }
    }

    /// The current clip, if one plays.
    pub fn current_clip(&self) -> Option<&Arc<Clip>> {
        self.current.as_ref().map(|c| &c.clip)
    }

    /// Play time of the current clip (brought into the clip by its policy).
    pub fn current_time(&self) -> Option<f32> {
        self.current.as_ref().map(|c| c.time)
    }

    /// The queued fades, oldest first.
    pub fn targets(&self) -> impl ExactSizeIterator<Item = FadeInfo<'_>> {
        self.targets.iter().map(|t| FadeInfo {
            clip: &t.playing.clip,
            time: t.playing.time,
            elapsed: t.elapsed,
            duration: t.duration,
            weight: t.weight(),
        })
    }

    /// True while at least one fade is queued.
    pub fn is_fading(&self) -> bool {
        !self.targets.is_empty()
    }

    fn clear_targets(&mut self) {
        for t in self.targets.drain(..) {
            self.spare.push(t.pose);
        }
    }
}
