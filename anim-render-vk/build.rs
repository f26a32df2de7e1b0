//! Puts the Vulkan 1.2 SPIR-V of every GLSL pass under `shaders/` (`*.vert`, `*.frag`,
//! `*.comp`; `*.glsl` files are includes) into `OUT_DIR` as `<name>.<stage>.spv`.
//!
//! The crate carries its compiled SPIR-V in `spirv/` (written by `scripts/spirv.sh`;
//! `tests/packaged_spirv.rs` checks it matches the sources), so a game that depends on it
//! needs no GLSL compiler: a pass whose packaged SPIR-V is at least as new as its source and
//! every include is copied. A pass whose source is newer (or whose SPIR-V is missing) is
//! recompiled with `glslc` when one is found (`$GLSLC`, else `$VULKAN_SDK/bin/glslc`, else
//! `glslc` on the PATH); without one the build says so and uses the packaged SPIR-V, and
//! only a missing one stops it, with a message that says how to get glslc. Compiler errors
//! are reported as `file:line: message` and fail the build.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

/// The flags every pass is compiled with (`scripts/spirv.sh` uses the same).
/// Vulkan 1.2 SPIR-V: the 1.3 target emits LocalSizeId, which needs maintenance4.
const FLAGS: [&str; 2] = ["--target-env=vulkan1.2", "-O"];

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let dir = root.join("shaders");
    let packaged = root.join("spirv");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed={}", dir.display());
    println!("cargo:rerun-if-changed={}", packaged.display());
    println!("cargo:rerun-if-env-changed=GLSLC");
    println!("cargo:rerun-if-env-changed=VULKAN_SDK");

    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("readable shader directory entry").path())
        .collect();
    entries.sort();
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let mut newest_include = SystemTime::UNIX_EPOCH;
    for path in &entries {
        println!("cargo:rerun-if-changed={}", path.display());
        if path.extension().is_some_and(|e| e == "glsl") {
            newest_include = newest_include.max(modified(path).unwrap_or(SystemTime::UNIX_EPOCH));
        }
    }
    // Passes whose packaged SPIR-V is missing, or older than the pass or an include.
    let mut stale = Vec::new();
    let mut missing = Vec::new();
    for path in &entries {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !matches!(ext, "vert" | "frag" | "comp") {
            continue;
        }
        let name = path.file_name().and_then(|n| n.to_str()).expect("utf-8 shader file name");
        let spv = packaged.join(format!("{name}.spv"));
        match modified(&spv) {
            None => missing.push(path.clone()),
            Some(t) if modified(path).is_some_and(|s| s > t) || newest_include > t => stale.push(path.clone()),
            Some(_) => {}
        }
        if spv.is_file() {
            std::fs::copy(&spv, out.join(format!("{name}.spv")))
                .unwrap_or_else(|e| panic!("copying {}: {e}", spv.display()));
        }
    }
    if stale.is_empty() && missing.is_empty() {
        return;
    }
    let Some(glslc) = find_glslc() else {
        if missing.is_empty() {
            println!(
                "cargo:warning=anim-render-vk: {} shader source(s) are newer than their packaged SPIR-V (spirv/), and no \
                 glslc was found ($GLSLC, $VULKAN_SDK/bin/glslc, or the PATH): using the packaged SPIR-V",
                stale.len()
            );
            return;
        }
        eprintln!(
            "error: anim-render-vk has no packaged SPIR-V for {} shader(s) and compiles them with `glslc` (GLSL to \
             SPIR-V), but none was found ($GLSLC, $VULKAN_SDK/bin/glslc, or glslc on the PATH).\n\
             \n  In the anim-rs workspace: run `scripts/setup.sh` (or `make setup`) first; it installs glslc \
             with the other system packages.\
             \n  Elsewhere: install glslc (Debian and Ubuntu: `apt install glslc`; Fedora: `dnf install glslc`; \
             Arch: `pacman -S shaderc`; or the Vulkan SDK), or set GLSLC to its path.\n",
            missing.len()
        );
        std::process::exit(1);
    };
    // One glslc per pass, all running at once; then collect them in order.
    let mut jobs = Vec::new();
    for path in stale.iter().chain(&missing) {
        let name = path.file_name().and_then(|n| n.to_str()).expect("utf-8 shader file name");
        let child = Command::new(&glslc)
            .args(FLAGS)
            .arg("-I")
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
