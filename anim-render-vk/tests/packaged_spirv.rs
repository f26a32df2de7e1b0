//! The SPIR-V the crate carries (`spirv/`, what a build without glslc uses) is what its
//! GLSL sources compile to today: every pass has one, byte for byte, and nothing else is
//! there. When this fails, run `scripts/spirv.sh`.

use std::path::Path;
use std::process::Command;

#[test]
fn packaged_spirv_matches_the_sources() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let glslc = std::env::var_os("GLSLC").filter(|g| !g.is_empty()).unwrap_or_else(|| "glslc".into());
    let out = std::env::temp_dir().join(format!("anim-packaged-spirv-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let mut passes = Vec::new();
    for entry in std::fs::read_dir(root.join("shaders")).unwrap() {
        let path = entry.unwrap().path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !matches!(ext, "vert" | "frag" | "comp") {
            continue;
        }
        let name = format!("{}.spv", path.file_name().unwrap().to_str().unwrap());
        let status = Command::new(&glslc)
            .args(["--target-env=vulkan1.2", "-O", "-I"])
            .arg(root.join("shaders"))
            .arg("-o")
            .arg(out.join(&name))
            .arg(&path)
            .status()
            .expect("glslc runs (scripts/setup.sh installs it)");
        assert!(status.success(), "{} does not compile", path.display());
        let fresh = std::fs::read(out.join(&name)).unwrap();
        let packaged = std::fs::read(root.join("spirv").join(&name))
            .unwrap_or_else(|e| panic!("spirv/{name}: {e}; run scripts/spirv.sh"));
        assert!(fresh == packaged, "spirv/{name} is not what {} compiles to: run scripts/spirv.sh", path.display());
        passes.push(name);
    }
    let mut packaged: Vec<String> =
        std::fs::read_dir(root.join("spirv")).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    packaged.sort();
    passes.sort();
    assert_eq!(packaged, passes, "spirv/ holds exactly one file a pass: run scripts/spirv.sh");
    let _ = std::fs::remove_dir_all(&out);
}
