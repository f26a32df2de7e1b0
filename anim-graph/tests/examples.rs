//! The crate's examples (`cargo run -p anim-graph --example NAME`) run end to end and do
//! what they say.

mod locomotion {
    include!("../examples/locomotion.rs");

    #[test]
    fn walks_then_runs_forwards_at_the_speed_asked() {
        let s = drive().expect("the example runs");
        println!("{s:?}");
        assert_eq!(s.states, ["locomotion", "locomotion"]);
        // Straight ahead: the sideways drift is only the pelvis's sway.
        assert!(s.positions.iter().all(|p| p.x.abs() < 0.01 && p.y.abs() < 1e-6), "{s:?}");
        // 1.4 m/s lies between walk (0.85 m/s in the graph) and run (2.21 m/s): the blend
        // travels between their speeds.
        let walk_phase = s.positions[0].z / 2.0;
        assert!(walk_phase > 0.85 && walk_phase < 2.21, "{walk_phase}");
        // 3 m/s is beyond the run's point: the run alone plays, at its own travel speed.
        let run = anim_mannequin::build().travel_velocity("run").expect("run travels").norm();
        let run_phase = (s.positions[1].z - s.positions[0].z) / 2.0;
        assert!((run_phase - run).abs() < 0.03 * run, "{run_phase} against the run's {run}");
    }
}
