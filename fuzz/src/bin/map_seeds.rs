//! Writes the seeds of the `map_file` target ([`anim_fuzz::map_file::seeds`]) into the
//! folder given as the only argument (`fuzz/campaign.sh --target map_file` runs it, built
//! without the coverage flags).

fn main() -> std::process::ExitCode {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: map_seeds DIR");
        return std::process::ExitCode::FAILURE;
    };
    for (name, text) in anim_fuzz::map_file::seeds() {
        if let Err(e) = std::fs::write(std::path::Path::new(&dir).join(&name), text) {
            eprintln!("map_seeds: {name}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    }
    std::process::ExitCode::SUCCESS
}
