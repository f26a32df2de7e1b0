//! Foot-contact curves become `foot_down` / `foot_up` events.

mod common;

use anim_core::clip::{Clip, Interpolation, ScalarCurve, Track};
use anim_ik::{FootGrounding, FootSettings, Leg};
use common::legs;

#[test]
fn contact_curves_give_down_and_up_events_per_leg() {
    let s = legs();
    let leg = |side: &str| Leg {
        hip: s.find(&format!("hip_{side}")).unwrap(),
        knee: s.find(&format!("knee_{side}")).unwrap(),
        ankle: s.find(&format!("ankle_{side}")).unwrap(),
        toe: s.find(&format!("toe_{side}")).unwrap(),
        contact_curve: format!("foot_contact_{side}"),
    };
    let g = FootGrounding::new(&s, vec![leg("l"), leg("r")], FootSettings::default()).unwrap();
    // Left: planted until 0.6 (step). Right: linear lift 0.1 → 0.3 (crosses 0.5 at 0.2),
    // linear plant 0.7 → 0.9 (crosses at 0.8).
    let l = Track::new(Interpolation::Step, vec![0.0, 0.6, 1.0], vec![1.0f32, 0.0, 1.0]).unwrap();
    let r =
        Track::new(Interpolation::Linear, vec![0.0, 0.1, 0.3, 0.7, 0.9, 1.0], vec![1.0f32, 1.0, 0.0, 0.0, 1.0, 1.0])
            .unwrap();
    let clip = Clip::new(
        "walk",
        vec![],
        vec![
            ScalarCurve { name: "foot_contact_l".into(), track: l },
            ScalarCurve { name: "foot_contact_r".into(), track: r },
        ],
    )
    .unwrap();
    let ev = g.contact_events(&clip);
    let got: Vec<(&str, f32)> = ev.iter().map(|e| (e.name.as_str(), e.time)).collect();
    let want = [
        ("foot_up:foot_contact_r", 0.2),
        ("foot_up:foot_contact_l", 0.6),
        ("foot_down:foot_contact_r", 0.8),
        ("foot_down:foot_contact_l", 1.0),
    ];
    assert_eq!(got.len(), want.len(), "{got:?}");
    for ((gn, gt), (wn, wt)) in got.iter().zip(want) {
        assert_eq!(*gn, wn);
        assert!((gt - wt).abs() < 1e-5, "{gn}: {gt} vs {wt}");
    }
    // The events fit the clip.
    assert!(clip.with_events(ev).is_ok());
}
