// Two-bone IK on the default character: its left foot put on a step 20 cm high while it
// stands, the knee bending forwards. `cargo run -p anim-ik --example two_bone`.
use anim_core::pose::Pose;
use anim_ik::TwoBoneIk;
use anim_mannequin::Side;
use anim_math::{Mat4, Transform, Vec3};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let m = anim_mannequin::build();
    let leg = m.leg(Side::Left);
    let ik = TwoBoneIk::new(&m.skeleton, leg.hip, leg.knee, leg.ankle)?;
    let mut pose: Pose = m.skeleton.rest_pose().clone();
    let mut model = vec![Mat4::identity(); m.skeleton.len()];
    pose.local_to_model(&m.skeleton, &mut model)?;
    let ankle = model[leg.ankle].column(3).xyz();
    let target = ankle + Vec3::new(0.0, 0.2, 0.1);
    // The pole: the knee bends towards +z, the character's front.
    let knee = model[leg.knee].column(3).xyz();
    let pole = knee + Vec3::z();
    let result = ik.solve(&m.skeleton, &mut pose, &Transform::IDENTITY, &target, Some(&pole))?;
    pose.local_to_model(&m.skeleton, &mut model)?;
    let reached = (model[leg.ankle].column(3).xyz() - target).norm();
    println!(
        "ankle on the step: reached {}, {reached:.5} m off; knee at {:?}",
        result.reached,
        model[leg.knee].column(3).xyz()
    );
    assert!(result.reached && reached < 1e-3);
    Ok(())
}
