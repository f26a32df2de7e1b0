//! The crate's examples (`cargo run -p anim-core --example NAME`) run end to end.

mod blend {
    include!("../examples/blend.rs");

    #[test]
    fn runs() {
        main().expect("blend");
    }
}
