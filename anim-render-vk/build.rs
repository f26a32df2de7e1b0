//! Compiles every GLSL pass under `shaders/` (`*.vert`, `*.frag`, `*.comp`) to Vulkan 1.2
//! SPIR-V in `OUT_DIR` (`<name>.<stage>.spv`); `*.glsl` files are includes. Errors are
//! reported as `file:line: message` and fail the build.

use std::path::{Path, PathBuf};

fn main() {
    let dir =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("shaders");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("readable shader directory entry").path())
        .collect();
    entries.sort();
    let compiler = shaderc::Compiler::new().expect("shaderc compiler");
    let mut failures = Vec::new();
    for path in &entries {
        println!("cargo:rerun-if-changed={}", path.display());
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let kind = match ext {
            "vert" => shaderc::ShaderKind::Vertex,
            "frag" => shaderc::ShaderKind::Fragment,
            "comp" => shaderc::ShaderKind::Compute,
            _ => continue,
        };
        let source = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut options = shaderc::CompileOptions::new().expect("shaderc options");
        // Vulkan 1.2 SPIR-V: the 1.3 target emits LocalSizeId, which needs maintenance4.
        options.set_target_env(shaderc::TargetEnv::Vulkan, shaderc::EnvVersion::Vulkan1_2 as u32);
        options.set_optimization_level(shaderc::OptimizationLevel::Performance);
        options.set_generate_debug_info();
        let include_dir = dir.clone();
        options.set_include_callback(move |name, _kind, _from, _depth| {
            let p = include_dir.join(name);
            std::fs::read_to_string(&p)
                .map(|content| shaderc::ResolvedInclude { resolved_name: p.display().to_string(), content })
                .map_err(|e| format!("{}: {e}", p.display()))
        });
        let file_name = path.display().to_string();
        match compiler.compile_into_spirv(&source, kind, &file_name, "main", Some(&options)) {
            Ok(artifact) => {
                let name = path.file_name().and_then(|n| n.to_str()).expect("utf-8 shader file name");
                let bytes: Vec<u8> = artifact.as_binary().iter().flat_map(|w| w.to_le_bytes()).collect();
                write(&out.join(format!("{name}.spv")), &bytes);
                if artifact.get_num_warnings() > 0 {
                    println!("cargo:warning={}", artifact.get_warning_messages().replace('\n', " | "));
                }
            }
            // shaderc's messages already read `file:line: error: ...`.
            Err(e) => failures.push(e.to_string()),
        }
    }
    if !failures.is_empty() {
        panic!("{} shader(s) failed to compile:\n{}", failures.len(), failures.join("\n"));
    }
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}
