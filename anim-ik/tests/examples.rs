//! The crate's examples (`cargo run -p anim-ik --example NAME`) run end to end.

mod two_bone {
    include!("../examples/two_bone.rs");

    #[test]
    fn runs() {
        main().expect("two_bone");
    }
}
