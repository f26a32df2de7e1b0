// The README's first program, as a crate of its own would hold it: the file is the
// example the README shows (anim-gltf/examples/first_program.rs), pasted in verbatim.
include!("../../../anim-gltf/examples/first_program.rs");
