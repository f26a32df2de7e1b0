//! Compiles every GLSL pass under `shaders/` (`*.vert`, `*.frag`, `*.comp`) to Vulkan 1.2
//! SPIR-V in `OUT_DIR` (`<name>.<stage>.spv`) with `glslc`; `*.glsl` files are includes.
//! Errors are reported as `file:line: message` and fail the build.
//!
//! `glslc` is the one tool this crate needs at build time: `$GLSLC` when set, else
//! `$VULKAN_SDK/bin/glslc`, else `glslc` on the PATH. Without it the build stops here with
//! a message that says how to get it (nothing else in the workspace can fail before this
//! for want of a system package, so it is the first error a fresh checkout shows).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn main() {
    let dir =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("shaders");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed={}", dir.display());
    println!("cargo:rerun-if-env-changed=GLSLC");
    println!("cargo:rerun-if-env-changed=VULKAN_SDK");
    let glslc = find_glslc().unwrap_or_else(|| {
        eprintln!(
            "error: anim-render-vk compiles its shaders with `glslc` (GLSL to SPIR-V), and none was found \
             ($GLSLC, $VULKAN_SDK/bin/glslc, or glslc on the PATH).\n\
             \n  In the anim-rs workspace: run `scripts/setup.sh` (or `make setup`) first; it installs glslc \
             with the other system packages.\
             \n  Elsewhere: install glslc (Debian and Ubuntu: `apt install glslc`; Fedora: `dnf install glslc`; \
             Arch: `pacman -S shaderc`; or the Vulkan SDK), or set GLSLC to its path.\n"
        );
        std::process::exit(1);
    });

    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("readable shader directory entry").path())
        .collect();
    entries.sort();
    // One glslc per pass, all running at once; then collect them in order.
    let mut jobs = Vec::new();
    for path in &entries {
        println!("cargo:rerun-if-changed={}", path.display());
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !matches!(ext, "vert" | "frag" | "comp") {
            continue;
        }
        let name = path.file_name().and_then(|n| n.to_str()).expect("utf-8 shader file name");
        let child = Command::new(&glslc)
            // Vulkan 1.2 SPIR-V: the 1.3 target emits LocalSizeId, which needs maintenance4.
            .arg("--target-env=vulkan1.2")
            .args(["-O", "-g", "-I"])
            .arg(&dir)
            .arg("-o")
            .arg(out.join(format!("{name}.spv")))
            .arg(path)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", glslc.display()));
        jobs.push(child);
    }
    let mut failures = Vec::new();
    for job in jobs {
        let result = job.wait_with_output().unwrap_or_else(|e| panic!("waiting for {}: {e}", glslc.display()));
        // glslc's messages already read `file:line: error: ...`.
        let messages = String::from_utf8_lossy(&result.stderr).trim().to_string();
        if !result.status.success() {
            failures.push(messages);
        } else if !messages.is_empty() {
            println!("cargo:warning={}", messages.replace('\n', " | "));
        }
    }
    if !failures.is_empty() {
        panic!("{} shader(s) failed to compile:\n{}", failures.len(), failures.join("\n"));
    }
}

/// `$GLSLC`, else `$VULKAN_SDK/bin/glslc`, else `glslc` on the PATH.
fn find_glslc() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GLSLC").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let exe = format!("glslc{}", std::env::consts::EXE_SUFFIX);
    let sdk = std::env::var_os("VULKAN_SDK").map(|sdk| Path::new(&sdk).join("bin").join(&exe));
    let path = std::env::var_os("PATH").unwrap_or_default();
    sdk.into_iter().chain(std::env::split_paths(&path).map(|d| d.join(&exe))).find(|p| p.is_file())
}
