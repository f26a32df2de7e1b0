//! `seeds ASSETS_DIR OUT_DIR`: writes a self-contained `NAME.gltf` (data URIs) and
//! `NAME.glb` for every `.glb`/`.gltf` under `ASSETS_DIR` (see [`seeds`]), where
//! `NAME` is the asset's path below `ASSETS_DIR` with `/` as `_` and no extension.

mod seeds;

use std::path::{Path, PathBuf};

fn main() {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [assets, out] = args.as_slice() else {
        eprintln!("usage: seeds ASSETS_DIR OUT_DIR");
        std::process::exit(2);
    };
    if let Err(e) = run(assets, out) {
        eprintln!("seeds: {e}");
        std::process::exit(1);
    }
}

fn run(assets: &Path, out: &Path) -> Result<(), String> {
    let mut files = Vec::new();
    collect(assets, &mut files)?;
    files.sort();
    if files.is_empty() {
        return Err(format!("no .glb or .gltf under {}", assets.display()));
    }
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    for f in files {
        let rel = f.strip_prefix(assets).unwrap_or(&f).with_extension("");
        let name = rel.to_string_lossy().replace(['/', '\\'], "_");
        let bytes = std::fs::read(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let dir = f.parent().unwrap_or(Path::new("."));
        let seed = seeds::convert(&bytes, dir).map_err(|e| format!("{}: {e}", f.display()))?;
        for (ext, data) in [("gltf", &seed.gltf), ("glb", &seed.glb)] {
            let path = out.join(format!("{name}.{ext}"));
            std::fs::write(&path, data).map_err(|e| format!("{}: {e}", path.display()))?;
            println!("{} ({} bytes)", path.display(), data.len());
        }
    }
    Ok(())
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_dir() {
            collect(&path, files)?;
        } else if path.extension().is_some_and(|e| e == "glb" || e == "gltf") {
            files.push(path);
        }
    }
    Ok(())
}
