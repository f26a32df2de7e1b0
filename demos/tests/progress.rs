//! `animtool bake`, `compress` and `retarget` with standard error piped (not a terminal):
//! plain progress lines on stderr naming every clip in order with its number, and standard
//! output byte-identical to a run with progress hidden (`ANIM_PROGRESS=0`).

use anim_testkit::assets::path_str as asset;
use std::path::PathBuf;
use std::process::{Command, Output};

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// Runs animtool with `ANIM_PROGRESS` set to `progress` (unset for `None`), no log filter.
fn animtool(args: &[&str], progress: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_animtool"));
    c.args(args).env_remove("RUST_LOG").env_remove("ANIM_PROGRESS");
    if let Some(p) = progress {
        c.env("ANIM_PROGRESS", p);
    }
    let out = c.output().expect("animtool runs");
    assert!(out.status.success(), "animtool {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// Runs `args` with progress shown and hidden: asserts the same stdout and an empty stderr
/// when hidden, and returns (stdout, stderr) of the shown run.
fn with_and_without_progress(args: &[&str]) -> (String, String) {
    let shown = animtool(args, None);
    let hidden = animtool(args, Some("0"));
    assert_eq!(
        String::from_utf8_lossy(&shown.stdout),
        String::from_utf8_lossy(&hidden.stdout),
        "progress changed stdout of {args:?}"
    );
    assert!(hidden.stderr.is_empty(), "ANIM_PROGRESS=0: {}", String::from_utf8_lossy(&hidden.stderr));
    let (out, err) = (String::from_utf8(shown.stdout).unwrap(), String::from_utf8(shown.stderr).unwrap());
    assert!(!err.contains('\x1b'), "no terminal escapes off a terminal:\n{err}");
    (out, err)
}

/// The names between the first pair of double quotes of each stdout line with `marker`.
fn quoted_names(stdout: &str, marker: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| l.contains(marker))
        .map(|l| l.split('"').nth(1).unwrap_or_else(|| panic!("no quoted name in {l:?}")).to_owned())
        .collect()
}

/// Asserts that `lines` are exactly the plain progress of `label` over `names`:
/// `LABEL: K/N NAME (elapsed T)` for the first item, `… (elapsed T, about L left)` for the
/// others, then `LABEL: N/N done in T`.
fn assert_progress(lines: &[&str], label: &str, names: &[String]) {
    let n = names.len();
    assert_eq!(lines.len(), n + 1, "{label}: one line an item and a last one:\n{}", lines.join("\n"));
    for (k, (line, name)) in lines.iter().zip(names).enumerate() {
        let head = format!("{label}: {}/{n} {name} (elapsed ", k + 1);
        let rest = line.strip_prefix(&head).unwrap_or_else(|| panic!("{line:?} should start with {head:?}"));
        let (elapsed, left) = match rest.strip_suffix(" s left)").and_then(|r| r.split_once(" s, about ")) {
            Some((e, l)) => (e, Some(l)),
            None => (rest.strip_suffix(" s)").unwrap_or_else(|| panic!("{line:?}: no time")), None),
        };
        elapsed.parse::<f64>().unwrap_or_else(|_| panic!("{line:?}: elapsed {elapsed:?}"));
        // The estimate comes once an item is done.
        assert_eq!(left.is_some(), k > 0, "{line:?}");
        if let Some(l) = left {
            l.parse::<f64>().unwrap_or_else(|_| panic!("{line:?}: left {l:?}"));
        }
    }
    let last = lines[n];
    assert!(last.starts_with(&format!("{label}: {n}/{n} done in ")) && last.ends_with(" s"), "{last:?}");
}

#[test]
fn bake_shows_each_clip_on_stderr_and_keeps_stdout() {
    let out = tmp("progress_mannequin.atlas");
    let (stdout, stderr) =
        with_and_without_progress(&["bake", "default", "--layout", "matrix", "--out", out.to_str().unwrap()]);
    // The clips in atlas order, from the report's `clip i "name": frames …` lines.
    let names = quoted_names(&stdout, ": frames ");
    assert_eq!(names.len(), 15, "{stdout}");
    assert_eq!(names[..3], ["idle", "walk", "run"]);
    assert!(!stdout.contains("bake: ") && !stdout.contains("elapsed"), "progress on stdout:\n{stdout}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2 * (names.len() + 1), "{stderr}");
    // Sampling every clip, then measuring every clip's error.
    assert_progress(&lines[..names.len() + 1], "bake", &names);
    assert_progress(&lines[names.len() + 1..], "bake error", &names);
}

#[test]
fn compress_and_retarget_show_each_clip() {
    let fox = asset("Fox/Fox.glb");
    let (stdout, stderr) = with_and_without_progress(&["compress", &fox]);
    let names = quoted_names(&stdout, "  clip ");
    assert_eq!(names, ["Survey", "Walk", "Run"]);
    assert_progress(&stderr.lines().collect::<Vec<_>>(), "compress", &names);

    let out = tmp("progress_retarget.glb");
    let (stdout, stderr) = with_and_without_progress(&[
        "retarget",
        "default",
        "--onto",
        "default",
        "--clip",
        "all",
        "--rate",
        "15",
        "--out",
        out.to_str().unwrap(),
    ]);
    // The report's per-clip lines (`  clip "walk": 16 frames, …`) in order.
    let names = quoted_names(&stdout, "  clip \"");
    assert_eq!(names.len(), 15, "{stdout}");
    assert_eq!(names[..3], ["idle", "walk", "run"]);
    assert_progress(&stderr.lines().collect::<Vec<_>>(), "retarget", &names);
}
