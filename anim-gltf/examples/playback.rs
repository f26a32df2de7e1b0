// The README's playback program, verbatim (a test checks that the two agree, and runs it).
// `cargo run -p anim-gltf --example playback`.
use anim_gltf::anim_core::clip::events::{crossed_into, threshold_events};
use anim_gltf::anim_core::offline::root_motion::{RootMotionSettings, extract};
use anim_gltf::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mannequin = anim_gltf::mannequin_model();
    let skeleton = &mannequin.skeleton;
    let walk = &mannequin.clips[mannequin.clip_index("walk")?];

    // Once: the hips' travel moved into a motion track (the walk now plays in place), and
    // the left foot's contact curve turned into foot_down / foot_up events.
    let hips = skeleton.find("pelvis").ok_or("the mannequin has a pelvis")?;
    let contact = walk.curves().iter().find(|c| c.name == "foot_contact_l").ok_or("a contact curve")?;
    let events = threshold_events(&contact.track, 0.5, "foot_down", "foot_up");
    let walk = extract(walk, skeleton, &RootMotionSettings::new(hips))?.with_events(events)?;
    let motion = walk.root_motion().ok_or("extracted")?;

    // Every frame: a step of the playback gives the events it crossed, in order, and the
    // root motion to apply to the character's place in the world.
    let mut playback = Playback::new(walk.duration(), LoopMode::Repeat).with_speed(1.5);
    let (mut world, mut fired, mut steps) = (Transform::IDENTITY, Vec::new(), 0);
    let mut pose = skeleton.rest_pose().clone();
    for _ in 0..240 {
        let step = playback.advance(1.0 / 60.0);
        crossed_into(walk.events(), &playback, step.from, step.to, &mut fired);
        steps += fired.iter().filter(|e| walk.events()[e.index].name == "foot_down").count();
        world = world.combine(&motion.delta(&playback, step.from, step.to));
        walk.sample(playback.time(), TimePolicy::Wrap, &mut pose)?;
    }
    println!("4 s at 1.5x: {steps} left steps, {:.2} m travelled", world.translation.norm());
    Ok(())
}
