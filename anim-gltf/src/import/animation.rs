//! Animations: each becomes a [`Clip`] (its channels as joint tracks, the named curves in
//! its extras) and a [`ClipInfo`].

use super::Importer;
use super::buffers::{F32, Want, check_accessor};
use crate::error::GltfError;
use crate::model::ClipInfo;
use anim_core::clip::{Clip, Interpolation, JointTracks, ScalarCurve, Track, TrackError};
use anim_core::pose::Skeleton;
use anim_math::Vec3;
use gltf::accessor::{DataType, Dimensions};
use gltf::animation::Property;
use nalgebra::Quaternion;

/// Translation and scale outputs.
const VEC3_F32: Want = Want { dims: &[Dimensions::Vec3], types: &[F32], what: "VEC3 FLOAT" };

impl Importer<'_> {
    /// Every animation as a clip, with what it animates.
    pub(super) fn clips(&mut self, skeleton: &Skeleton) -> Result<(Vec<Clip>, Vec<ClipInfo>), GltfError> {
        let mut clips = Vec::new();
        let mut infos = Vec::new();
        for anim in self.doc.animations() {
            let a = anim.index();
            let name = anim.name().unwrap_or("").to_owned();
            let mut tracks: Vec<JointTracks> = Vec::new();
            let mut seen = std::collections::HashMap::new();
            let mut slots = std::collections::HashMap::new();
            let mut channels = Vec::new();
            let mut weight_tracks = Vec::new();
            for ch in anim.channels() {
                let cpath = format!("animations[{a}].channels[{}]", ch.index());
                let node = ch.target().node().index();
                let prop = ch.target().property();
                if let Some(prev) = seen.insert((node, prop_name(prop)), ch.index()) {
                    return Err(GltfError::Schema {
                        path: cpath,
                        message: format!(
                            "targets node {node} {} like channel {prev}; a target may be animated once per animation",
                            prop_name(prop)
                        ),
                    });
                }
                if prop == Property::MorphTargetWeights {
                    let (track, info) = self.weight_channel(skeleton, &ch, a)?;
                    weight_tracks.push(track);
                    channels.push(info);
                    continue;
                }
                let sampler = ch.sampler();
                let spath = format!("animations[{a}].samplers[{}]", sampler.index());
                let interp = match sampler.interpolation() {
                    gltf::animation::Interpolation::Step => Interpolation::Step,
                    gltf::animation::Interpolation::Linear => Interpolation::Linear,
                    gltf::animation::Interpolation::CubicSpline => Interpolation::CubicSpline,
                };
                let input = sampler.input();
                check_accessor(
                    &input,
                    self.buffers,
                    &Want { dims: &[Dimensions::Scalar], types: &[F32], what: "SCALAR FLOAT" },
                    &format!("{spath}.input"),
                )?;
                let output = sampler.output();
                let opath = format!("{spath}.output");
                let want = match prop {
                    Property::Rotation => Want {
                        dims: &[Dimensions::Vec4],
                        types: &[
                            F32,
                            (DataType::I8, true),
                            (DataType::U8, true),
                            (DataType::I16, true),
                            (DataType::U16, true),
                        ],
                        what: "VEC4 FLOAT or normalized integers",
                    },
                    _ => VEC3_F32,
                };
                check_accessor(&output, self.buffers, &want, &opath)?;
                let per_key = if interp == Interpolation::CubicSpline { 3 } else { 1 };
                if output.count() != input.count() * per_key {
                    return Err(GltfError::accessor(
                        opath,
                        format!(
                            "accessors[{}] has {} values for {} keys ({} expected with {:?})",
                            output.index(),
                            output.count(),
                            input.count(),
                            input.count() * per_key,
                            interp
                        ),
                    ));
                }
                let reader = ch.reader(self.data());
                let times: Vec<f32> =
                    reader.read_inputs().map_or_else(|| vec![0.0; ch.sampler().input().count()], |it| it.collect());
                let ipath = format!("{spath}.input");
                for (k, &t) in times.iter().enumerate() {
                    if !t.is_finite() {
                        return Err(GltfError::NonFinite { path: ipath, what: format!("key time {k}") });
                    }
                    if k > 0 && t <= times[k - 1] {
                        return Err(GltfError::KeysNotIncreasing { path: ipath, index: k, time: t });
                    }
                }
                let joint = skeleton.from_source_index(node).expect("node is a joint");
                // A map, not a search of `tracks`: linear in the channel count.
                let slot = *slots.entry(joint).or_insert_with(|| {
                    tracks.push(JointTracks::new(joint));
                    tracks.len() - 1
                });
                let track_err = |e: TrackError| match e {
                    TrackError::NonFiniteValue { index } => {
                        GltfError::NonFinite { path: opath.clone(), what: format!("value {index}") }
                    }
                    TrackError::TimesNotIncreasing { index, time } => {
                        GltfError::KeysNotIncreasing { path: ipath.clone(), index, time }
                    }
                    other => GltfError::accessor(opath.clone(), other.to_string()),
                };
                let Some(outputs) = reader.read_outputs() else {
                    // An output accessor without data: all zeros (a zero rotation becomes
                    // the identity when sampled).
                    let count = ch.sampler().output().count();
                    match prop {
                        Property::Translation => {
                            tracks[slot].translation =
                                Some(Track::new(interp, times.clone(), vec![Vec3::zeros(); count]).map_err(track_err)?);
                        }
                        Property::Scale => {
                            tracks[slot].scale =
                                Some(Track::new(interp, times.clone(), vec![Vec3::zeros(); count]).map_err(track_err)?);
                        }
                        Property::Rotation => {
                            let zero = Quaternion::new(0.0, 0.0, 0.0, 0.0);
                            tracks[slot].rotation =
                                Some(Track::new(interp, times.clone(), vec![zero; count]).map_err(track_err)?);
                        }
                        Property::MorphTargetWeights => {
                            unreachable!("weights channels are read by weight_channel above")
                        }
                    }
                    continue;
                };
                match outputs {
                    gltf::animation::util::ReadOutputs::Translations(it) => {
                        let v: Vec<Vec3> = it.map(Vec3::from).collect();
                        tracks[slot].translation = Some(Track::new(interp, times.clone(), v).map_err(track_err)?);
                    }
                    gltf::animation::util::ReadOutputs::Scales(it) => {
                        let v: Vec<Vec3> = it.map(Vec3::from).collect();
                        tracks[slot].scale = Some(Track::new(interp, times.clone(), v).map_err(track_err)?);
                    }
                    gltf::animation::util::ReadOutputs::Rotations(r) => {
                        let v: Vec<Quaternion<f32>> =
                            r.into_f32().map(|q| Quaternion::new(q[3], q[0], q[1], q[2])).collect();
                        tracks[slot].rotation = Some(Track::new(interp, times.clone(), v).map_err(track_err)?);
                    }
                    gltf::animation::util::ReadOutputs::MorphTargetWeights(_) => {
                        unreachable!("weights channels are read by weight_channel above")
                    }
                }
                channels.push(crate::model::ChannelInfo {
                    node,
                    property: prop_name(prop),
                    interpolation: interp,
                    keys: times.len(),
                    start: times[0],
                    end: *times.last().expect("count checked ≥ 1"),
                });
            }
            let curves = self.curves_from_extras(&anim)?;
            let clip = Clip::new(name.clone(), tracks, curves)
                .and_then(|c| c.with_weight_tracks(weight_tracks))
                .map_err(|e| GltfError::Schema { path: format!("animations[{a}]"), message: e.to_string() })?;
            let clip = events_from_extras(&anim, clip)?;
            infos.push(ClipInfo { name: anim.name().map(str::to_owned), channels });
            clips.push(clip);
        }
        Ok((clips, infos))
    }

    /// Named scalar curves stored by [`crate::export::export_glb`] in the animation's extras.
    fn curves_from_extras(&mut self, anim: &gltf::Animation) -> Result<Vec<ScalarCurve>, GltfError> {
        let Some(raw) = anim.extras() else { return Ok(Vec::new()) };
        let path = format!("animations[{}].extras", anim.index());
        let value: serde_json::Value = serde_json::from_str(raw.get())
            .map_err(|e| GltfError::Schema { path: path.clone(), message: e.to_string() })?;
        let Some(list) = value.get(crate::model::CURVES_KEY).and_then(|v| v.as_array()) else { return Ok(Vec::new()) };
        let mut curves = Vec::new();
        for (i, c) in list.iter().enumerate() {
            let cpath = format!("{path}.{}[{i}]", crate::model::CURVES_KEY);
            let bad = |m: &str| GltfError::Schema { path: cpath.clone(), message: m.to_owned() };
            let name = c.get("name").and_then(|v| v.as_str()).ok_or_else(|| bad("missing name"))?;
            let interp = match c.get("interpolation").and_then(|v| v.as_str()).unwrap_or("LINEAR") {
                "STEP" => Interpolation::Step,
                "LINEAR" => Interpolation::Linear,
                "CUBICSPLINE" => Interpolation::CubicSpline,
                _ => return Err(bad("unknown interpolation")),
            };
            let floats = |key: &str| -> Result<Vec<f32>, GltfError> {
                c.get(key)
                    .and_then(|v| v.as_array())
                    .ok_or_else(|| bad(&format!("missing {key}")))?
                    .iter()
                    .map(|v| v.as_f64().map(|x| x as f32).ok_or_else(|| bad(&format!("{key} holds a non-number"))))
                    .collect()
            };
            let track = Track::new(interp, floats("times")?, floats("values")?).map_err(|e| bad(&e.to_string()))?;
            curves.push(ScalarCurve { name: name.to_owned(), track });
        }
        Ok(curves)
    }
}

/// The glTF name of an animated property.
fn prop_name(p: Property) -> &'static str {
    match p {
        Property::Translation => "translation",
        Property::Rotation => "rotation",
        Property::Scale => "scale",
        Property::MorphTargetWeights => "weights",
    }
}

/// Clip events stored in the animation's extras under [`crate::model::EVENTS_KEY`] as
/// `[{"name": "foot_down", "time": 0.4}, …]` (times in seconds within the clip).
fn events_from_extras(anim: &gltf::Animation, clip: Clip) -> Result<Clip, GltfError> {
    let Some(raw) = anim.extras() else { return Ok(clip) };
    let path = format!("/animations/{}/extras/{}", anim.index(), crate::model::EVENTS_KEY);
    let value: serde_json::Value = serde_json::from_str(raw.get())
        .map_err(|e| GltfError::Schema { path: path.clone(), message: e.to_string() })?;
    let Some(list) = value.get(crate::model::EVENTS_KEY) else { return Ok(clip) };
    let list = list
        .as_array()
        .ok_or_else(|| GltfError::Schema { path: path.clone(), message: "events must be an array".into() })?;
    let mut events = Vec::with_capacity(list.len());
    for (i, e) in list.iter().enumerate() {
        let bad = |m: &str| GltfError::Schema { path: format!("{path}/{i}"), message: m.to_owned() };
        let name = e.get("name").and_then(|v| v.as_str()).ok_or_else(|| bad("missing string \"name\""))?;
        let time = e.get("time").and_then(|v| v.as_f64()).ok_or_else(|| bad("missing number \"time\""))?;
        events.push(anim_core::clip::events::ClipEvent::new(name, time as f32));
    }
    clip.with_events(events).map_err(|e| {
        let anim_core::clip::events::EventError::TimeOutOfRange { index, .. } = &e;
        GltfError::Schema { path: format!("{path}/{index}"), message: e.to_string() }
    })
}
