//! The crate's examples (`cargo run -p anim-retarget --example NAME`) run end to end.

mod retarget {
    include!("../examples/retarget.rs");

    #[test]
    fn runs() {
        main().expect("retarget");
    }

    /// Every mannequin clip lands on CesiumMan (the shared assets are next to the
    /// repository in CI): same duration, a frame every 1/30 s both ends included, the
    /// planted feet within 1 cm (scaled to the target's leg length, as in `tests/retarget.rs`)
    /// of where the scaled source put them, and the leg ratio of the two rigs.
    #[test]
    fn every_clip_on_cesium_man() {
        let (target, ratio, lines) = run().expect("retarget");
        assert_eq!(target, "CesiumMan");
        let man = anim_gltf::mannequin_model();
        assert_eq!(lines.len(), man.clips.len());
        for (line, clip) in lines.iter().zip(&man.clips) {
            assert_eq!(line.name, clip.name());
            assert_eq!(line.duration, clip.duration(), "{}", line.name);
            assert_eq!(line.frames, anim_retarget::offline::sample_times(clip.duration(), 30.0).len(), "{}", line.name);
            assert!(line.contact_error <= 0.01 * ratio, "{}: contact error {}", line.name, line.contact_error);
        }
        let rig = |m: &anim_gltf::Model| {
            HumanoidRig::new(&m.skeleton, auto_map(&m.skeleton).map, Reference::Bind(&m.skins[0].skin)).expect("rig")
        };
        let cesium =
            anim_gltf::load(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/assets/CesiumMan/CesiumMan.glb"))
                .expect("CesiumMan loads");
        assert_eq!(ratio, rig(&cesium).hips_height() / rig(&man).hips_height());
    }
}
