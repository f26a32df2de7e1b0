//! The viewer's timeline state: how the clip loops ([`Looping`], over anim-core's
//! [`Playback`]) and what the timeline marks on the clip ([`Marks`]: its events, and the
//! spans where each foot is planted, from the clip's foot-contact curves).

use anim_core::clip::events::{ClipEvent, threshold_events};
use anim_core::clip::playback::{LoopMode, Playback};
use anim_core::clip::{Clip, TimePolicy};

/// Length of the timeline's frame step (the `,` and `.` keys, the step buttons), seconds.
pub const FRAME_STEP: f32 = 1.0 / 30.0;

/// Threshold at which a foot-contact curve counts as planted (as
/// `anim_ik::FootGrounding::contact_events` crosses it).
pub const CONTACT_THRESHOLD: f32 = 0.5;

/// How the clip continues at its ends: anim-core's [`LoopMode`]s, and playing once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Looping {
    /// Start to end, again and again ([`LoopMode::Repeat`]).
    #[default]
    Repeat,
    /// Forwards, then backwards ([`LoopMode::PingPong`]).
    PingPong,
    /// One cycle, then hold the last frame ([`Playback::once`]).
    Once,
}

impl Looping {
    /// Every mode, in the order the timeline lists them.
    pub const ALL: [Looping; 3] = [Self::Repeat, Self::PingPong, Self::Once];

    /// Short name.
    pub fn label(self) -> &'static str {
        match self {
            Self::Repeat => "repeat",
            Self::PingPong => "ping-pong",
            Self::Once => "once",
        }
    }

    /// A playback of a clip of `duration` seconds in this mode, at `speed`, from the start.
    pub fn playback(self, duration: f32, speed: f32) -> Playback {
        let p = match self {
            Self::Repeat => Playback::new(duration, LoopMode::Repeat),
            Self::PingPong => Playback::new(duration, LoopMode::PingPong),
            Self::Once => Playback::once(duration),
        };
        p.with_speed(speed)
    }
}

/// Where one foot-contact curve holds the foot planted.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactSpans {
    /// The curve's name (`foot_contact_l`, …).
    pub curve: String,
    /// Planted intervals `(start, end)` in clip seconds, in order.
    pub spans: Vec<(f32, f32)>,
}

/// What the timeline marks on a clip.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Marks {
    /// The clip's duration, seconds (0 for the rest pose).
    pub duration: f32,
    /// The clip's events, by time.
    pub events: Vec<ClipEvent>,
    /// One entry per foot-contact curve (a curve whose name contains `contact`).
    pub contacts: Vec<ContactSpans>,
}

impl Marks {
    /// The marks of `clip` (`None`: the rest pose, no marks). Foot contacts are where the
    /// curve is at or above [`CONTACT_THRESHOLD`]: the spans between the crossings
    /// anim-core's [`threshold_events`] finds (what `anim_ik::FootGrounding::contact_events`
    /// reports as `foot_down` / `foot_up`). Allocates (once per clip change).
    pub fn of(clip: Option<&Clip>) -> Self {
        let Some(clip) = clip else { return Self::default() };
        let d = clip.duration();
        let contacts = clip
            .curves()
            .iter()
            .enumerate()
            .filter(|(_, c)| c.name.to_lowercase().contains("contact"))
            .map(|(i, c)| {
                let planted_at_start =
                    clip.sample_curve(i, 0.0, TimePolicy::Clamp).is_some_and(|v| v >= CONTACT_THRESHOLD);
                let mut spans = Vec::new();
                let mut open = planted_at_start.then_some(0.0);
                for e in threshold_events(&c.track, CONTACT_THRESHOLD, "down", "up") {
                    match (e.name.as_str(), open) {
                        ("down", None) => open = Some(e.time),
                        ("up", Some(s)) => {
                            spans.push((s, e.time));
                            open = None;
                        }
                        _ => {}
                    }
                }
                if let Some(s) = open {
                    spans.push((s, d));
                }
                ContactSpans { curve: c.name.clone(), spans }
            })
            .collect();
        Self { duration: d, events: clip.events().to_vec(), contacts }
    }

    /// Whether curve `index` of [`Marks::contacts`] holds its foot planted at `time`: in a
    /// span `[start, end)`.
    pub fn planted(&self, index: usize, time: f32) -> bool {
        self.contacts.get(index).is_some_and(|c| c.spans.iter().any(|&(a, b)| a <= time && time < b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mannequin's walk: both feet have contact spans that cover where the curve is
    /// planted (checked against the curve itself, at many times away from the crossings).
    #[test]
    fn contact_spans_follow_the_curves() {
        let ch = crate::Character::mannequin();
        let walk = ch.find_clip("walk").expect("the mannequin walks");
        let clip = &ch.clips[walk];
        let marks = Marks::of(Some(clip));
        assert_eq!(marks.contacts.len(), 2, "{:?}", marks.contacts);
        for (k, c) in marks.contacts.iter().enumerate() {
            assert!(!c.spans.is_empty(), "{}: no planted span", c.curve);
            let i = clip.curve_index(&c.curve).expect("the curve the marks name");
            for s in 0..=200 {
                let t = clip.duration() * s as f32 / 200.0;
                let v = clip.sample_curve(i, t, TimePolicy::Clamp).expect("curve");
                // Away from the crossings (a step curve changes value on them).
                let on_edge = c.spans.iter().any(|&(a, b)| (t - a).abs() < 1e-4 || (t - b).abs() < 1e-4);
                if (v - CONTACT_THRESHOLD).abs() > 0.05 && !on_edge {
                    assert_eq!(marks.planted(k, t), v >= CONTACT_THRESHOLD, "{} at {t}: {v}", c.curve);
                }
            }
        }
        assert_eq!(marks.events, clip.events());
        assert_eq!(Marks::of(None), Marks::default());
    }

    #[test]
    fn looping_modes_make_their_playbacks() {
        let mut once = Looping::Once.playback(1.0, 1.0);
        once.advance(1.5);
        assert!(once.is_finished() && once.time() == 1.0);
        let mut pp = Looping::PingPong.playback(1.0, 1.0);
        pp.advance(1.25);
        assert!((pp.time() - 0.75).abs() < 1e-6);
        let mut back = Looping::Repeat.playback(1.0, -1.0);
        back.advance(0.25);
        assert!((back.time() - 0.75).abs() < 1e-6);
    }
}
