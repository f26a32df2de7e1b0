// The mannequin's locomotion graph driven for a few seconds as a game would: set the
// parameters through handles, update, move the character by the root motion the graph
// returns, and read which states are active. `cargo run -p anim-graph --example locomotion`.

use anim_graph::clips::ClipSet;
use anim_graph::instance::GraphInstance;
use anim_math::{Transform, Vec3};
use std::sync::Arc;

/// Where the character went and what the body machine did.
#[derive(Debug)]
#[allow(dead_code)] // read through Debug and by the test
pub struct Summary {
    /// The character's position after each phase: walking, then running.
    pub positions: [Vec3; 2],
    /// The body machine's state at the end of each phase.
    pub states: [String; 2],
}

/// Walks forwards at 1.4 m/s for two seconds, then runs at 3 m/s for two more.
pub fn drive() -> Result<Summary, Box<dyn std::error::Error>> {
    let mannequin = anim_mannequin::build();
    let clips = ClipSet::from_clips(mannequin.root_motion_clips().into_iter().map(Arc::new));
    let graph =
        Arc::new(anim_graph::file::load(anim_mannequin::LOCOMOTION_GRAPH.as_bytes(), &mannequin.skeleton, &clips)?);
    // Names are looked up once; every frame uses the handles.
    let move_z = graph.float_param("move_z")?;
    let body = graph.node("body").ok_or("the graph has a body machine")?;

    let mut character = GraphInstance::new(graph.clone());
    let mut pose = mannequin.skeleton.rest_pose().clone();
    let (mut step, mut events) = (Transform::IDENTITY, Vec::with_capacity(64));
    let mut world = Transform::IDENTITY;
    let mut positions = [Vec3::zeros(); 2];
    let mut states = [String::new(), String::new()];
    for (phase, speed) in [1.4, 3.0].into_iter().enumerate() {
        character.set_float(move_z, speed)?;
        for _ in 0..120 {
            character.update(1.0 / 60.0, &mut pose, &mut step, &mut events)?;
            world = world.combine(&step);
        }
        positions[phase] = world.translation;
        let state = character.current_state(body).ok_or("the body machine has a state")?;
        states[phase] = graph.state_name(body, state).unwrap_or("?").to_owned();
        println!(
            "after {} s at {speed} m/s: at {:.2?}, state {}",
            2 * (phase + 1),
            world.translation.as_slice(),
            states[phase]
        );
    }
    Ok(Summary { positions, states })
}

#[allow(dead_code)] // the test includes this file and calls `drive`
fn main() -> Result<(), Box<dyn std::error::Error>> {
    drive().map(|_| ())
}
