//! The clips a graph plays: a [`ClipSet`] of named [`GraphClip`]s, each an exact
//! [`Clip`] and optionally the [`RuntimeClip`] compiled from it.
//!
//! The graph samples the runtime clip when there is one (through anim-core's
//! [`SoaSampler`](anim_core::clip::SoaSampler) contexts) and the exact clip otherwise. The
//! exact clip always supplies what is not a pose: events, root motion (its
//! [`MotionTrack`](anim_core::clip::MotionTrack)), scalar curves (foot contacts) and the
//! foot markers sync groups align ([`foot_markers`]).

use anim_core::clip::events::threshold_events;
use anim_core::clip::{Clip, RuntimeClip};
use std::sync::Arc;

/// Prefix of the marker events of a planted foot.
pub const FOOT_DOWN: &str = "foot_down:";
/// Prefix of the marker events of a lifted foot.
pub const FOOT_UP: &str = "foot_up:";

/// One clip as a graph plays it.
#[derive(Clone, Debug)]
pub struct GraphClip {
    name: String,
    clip: Arc<Clip>,
    runtime: Option<Arc<RuntimeClip>>,
}

impl GraphClip {
    /// An exact clip, named as the clip is.
    pub fn exact(clip: Arc<Clip>) -> Self {
        Self { name: clip.name().to_owned(), clip, runtime: None }
    }

    /// A runtime clip compiled from `clip` (which supplies events, root motion and curves),
    /// named as the clip is. The graph checks that it was compiled for its skeleton.
    pub fn runtime(clip: Arc<Clip>, runtime: Arc<RuntimeClip>) -> Self {
        Self { name: clip.name().to_owned(), clip, runtime: Some(runtime) }
    }

    /// The same clip under another name.
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The name graphs refer to it by.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The exact clip.
    pub fn clip(&self) -> &Arc<Clip> {
        &self.clip
    }

    /// The runtime clip, when there is one.
    pub fn runtime_clip(&self) -> Option<&Arc<RuntimeClip>> {
        self.runtime.as_ref()
    }

    /// Duration in seconds: the runtime clip's when there is one.
    pub fn duration(&self) -> f32 {
        self.runtime.as_ref().map_or_else(|| self.clip.duration(), |r| anim_core::clip::SoaSampler::duration(&**r))
    }
}

/// Named clips, as graph files refer to them.
#[derive(Clone, Debug, Default)]
pub struct ClipSet {
    clips: Vec<GraphClip>,
}

impl ClipSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Exact clips under their own names.
    pub fn from_clips(clips: impl IntoIterator<Item = Arc<Clip>>) -> Self {
        Self { clips: clips.into_iter().map(GraphClip::exact).collect() }
    }

    /// Adds a clip.
    pub fn push(&mut self, clip: GraphClip) {
        self.clips.push(clip);
    }

    /// The set with `clip` added.
    #[must_use]
    pub fn with(mut self, clip: GraphClip) -> Self {
        self.push(clip);
        self
    }

    /// The clips, in the order added.
    pub fn clips(&self) -> &[GraphClip] {
        &self.clips
    }

    /// The index of the clip named `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.clips.iter().position(|c| c.name == name)
    }

    /// Number of clips.
    pub fn len(&self) -> usize {
        self.clips.len()
    }

    /// True without clips.
    pub fn is_empty(&self) -> bool {
        self.clips.is_empty()
    }
}

/// The foot markers of `clip`: its events named `foot_down:<curve>` / `foot_up:<curve>`,
/// or, when it has none, those its contact curves give where they cross 0.5 (as
/// `anim_ik::FootGrounding::contact_events` makes them) for the curves named in
/// `contact_curves` or whose names start with `foot_contact`. `(time, name)` pairs sorted by
/// time. Load-time work (allocates).
pub fn foot_markers(clip: &Clip, contact_curves: &[&str]) -> Vec<(f32, String)> {
    let mut out: Vec<(f32, String)> = clip
        .events()
        .iter()
        .filter(|e| e.name.starts_with(FOOT_DOWN) || e.name.starts_with(FOOT_UP))
        .map(|e| (e.time, e.name.clone()))
        .collect();
    if out.is_empty() {
        for c in clip.curves() {
            if contact_curves.contains(&c.name.as_str()) || c.name.starts_with("foot_contact") {
                let (down, up) = (format!("{FOOT_DOWN}{}", c.name), format!("{FOOT_UP}{}", c.name));
                out.extend(threshold_events(&c.track, 0.5, &down, &up).into_iter().map(|e| (e.time, e.name)));
            }
        }
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}
