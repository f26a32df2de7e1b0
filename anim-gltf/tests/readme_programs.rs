//! The README's Rust programs: every ```rust block of README.md is one of this crate's
//! examples, verbatim (so `cargo test` compiles it), and each runs here end to end on the
//! shared assets, from the repository's root as the README says to run them.

use std::path::Path;

mod first_program {
    include!("../examples/first_program.rs");

    pub fn run() -> Result<(), Box<dyn std::error::Error>> {
        main()
    }
}
mod morph {
    include!("../examples/morph.rs");

    pub fn run() -> Result<(), Box<dyn std::error::Error>> {
        main()
    }
}
mod playback {
    include!("../examples/playback.rs");

    pub fn run() -> Result<(), Box<dyn std::error::Error>> {
        main()
    }
}
mod runtime_path {
    include!("../examples/runtime_path.rs");

    pub fn run() -> Result<(), Box<dyn std::error::Error>> {
        main()
    }
}

const EXAMPLES: [&str; 4] = ["first_program", "runtime_path", "morph", "playback"];

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// An example's code as the README shows it: the file less its opening comment lines.
fn body(example: &str) -> String {
    let path = root().join(format!("anim-gltf/examples/{example}.rs"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().skip_while(|l| l.starts_with("//")).collect::<Vec<_>>().join("\n").trim().to_owned()
}

/// The ```rust blocks of the README, in order.
fn readme_blocks() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md at the repository's root");
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in readme.lines() {
        match &mut current {
            None if line.trim_start() == "```rust" => current = Some(Vec::new()),
            Some(lines) if line.trim_start() == "```" => {
                blocks.push(lines.join("\n").trim().to_owned());
                current = None;
            }
            Some(lines) => lines.push(line),
            None => {}
        }
    }
    assert!(current.is_none(), "README.md ends inside a code block");
    blocks
}

#[test]
fn every_readme_rust_block_is_an_example_verbatim() {
    let blocks = readme_blocks();
    assert!(!blocks.is_empty(), "the README has Rust blocks");
    let bodies: Vec<(&str, String)> = EXAMPLES.iter().map(|e| (*e, body(e))).collect();
    for (i, block) in blocks.iter().enumerate() {
        assert!(
            bodies.iter().any(|(_, b)| b == block),
            "README Rust block {i} is not any of anim-gltf/examples/{EXAMPLES:?} verbatim:\n{block}"
        );
    }
    for (name, b) in &bodies {
        assert!(blocks.contains(b), "example {name} is not in the README");
    }
}

/// The programs run as the README says: from the repository's root, where
/// `../shared/assets` is the shared models' folder. One test, because the working
/// directory is the process's.
#[test]
fn every_readme_program_runs() {
    std::env::set_current_dir(root()).expect("the repository's root");
    first_program::run().expect("first program");
    runtime_path::run().expect("runtime path");
    morph::run().expect("morph");
    playback::run().expect("playback");
}
