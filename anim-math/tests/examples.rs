//! The crate's examples (`cargo run -p anim-math --example NAME`) run end to end.

mod transform {
    include!("../examples/transform.rs");

    #[test]
    fn runs() {
        main();
    }
}
