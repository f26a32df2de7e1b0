//! The crate's examples (`cargo run -p anim-render-vk --example NAME`) run end to end.

mod headless {
    include!("../examples/headless.rs");

    #[test]
    fn runs() {
        main().expect("headless");
    }
}
