//! The crate's examples (`cargo run -p anim-mannequin --example NAME`) run end to end.

mod inspect {
    include!("../examples/inspect.rs");

    #[test]
    fn runs() {
        main();
    }
}
