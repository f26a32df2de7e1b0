//! The crate's examples (`cargo run -p anim-crowd --example NAME`) run end to end.

mod crowd {
    include!("../examples/crowd.rs");

    #[test]
    fn runs() {
        main().expect("crowd");
    }
}
