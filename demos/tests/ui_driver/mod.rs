//! Driving a demo's panel from a test: egui pointer and text events at the positions of
//! the widgets the panel tagged (read from egui's layout, never fixed pixels), in a
//! headless session or in a window, through [`Session`]; and running a test again inside
//! `xvfb-run` so that its window has a display.
#![allow(dead_code)]

use anim_render_vk::ui::egui;
use demos::ui::widget_rect;
use demos::{CommonArgs, Scene, Session};

/// The command line of a demo with its panel and validation on, `w × h`, `extra` added.
pub fn args(extra: &[&str], headless: bool, w: u32, h: u32) -> CommonArgs {
    let mut argv: Vec<String> = vec!["demo".into(), "--validation".into(), "--frames".into(), "1".into()];
    if headless {
        argv.push("--headless".into());
    }
    argv.extend(["--width".into(), w.to_string(), "--height".into(), h.to_string()]);
    argv.extend(extra.iter().map(|s| s.to_string()));
    let args = <CommonArgs as clap::Parser>::parse_from(argv);
    assert!(args.ui_on() && args.validation);
    args
}

/// `n` frames.
pub fn frames<S: Scene>(run: &mut impl Session<S>, n: usize) {
    for _ in 0..n {
        run.frame().unwrap();
    }
}

/// The panel's egui context.
pub fn ctx<S: Scene>(run: &impl Session<S>) -> &egui::Context {
    &run.ui().expect("the panel is on").ctx
}

/// The rectangle of the widget tagged `name` in the last frame that showed it.
pub fn rect<S: Scene>(run: &impl Session<S>, name: &str) -> egui::Rect {
    widget_rect(ctx(run), name).unwrap_or_else(|| panic!("no widget tagged {name:?}"))
}

/// Queues `e` for the next frame.
pub fn push<S: Scene>(run: &mut impl Session<S>, e: egui::Event) {
    run.ui_mut().expect("the panel is on").push_event(e);
}

/// A press (or release) of the primary button at `pos`.
pub fn button(pos: egui::Pos2, pressed: bool) -> egui::Event {
    egui::Event::PointerButton { pos, button: egui::PointerButton::Primary, pressed, modifiers: Default::default() }
}

/// Presses at `pos` in one frame and releases in the next.
pub fn click_at<S: Scene>(run: &mut impl Session<S>, pos: egui::Pos2) {
    push(run, egui::Event::PointerMoved(pos));
    push(run, button(pos, true));
    run.frame().unwrap();
    push(run, button(pos, false));
    run.frame().unwrap();
}

/// Clicks the middle of the widget tagged `name`.
pub fn click<S: Scene>(run: &mut impl Session<S>, name: &str) {
    let p = rect(run, name).center();
    click_at(run, p);
}

/// Presses at `from`, moves to `to` over three frames and releases there.
pub fn drag<S: Scene>(run: &mut impl Session<S>, from: egui::Pos2, to: egui::Pos2) {
    drag_steps(run, from, to, 3);
}

/// Presses at `from`, moves to `to` over `steps` frames and releases there (one frame
/// each).
pub fn drag_steps<S: Scene>(run: &mut impl Session<S>, from: egui::Pos2, to: egui::Pos2, steps: usize) {
    push(run, egui::Event::PointerMoved(from));
    push(run, button(from, true));
    run.frame().unwrap();
    for k in 1..=steps {
        push(run, egui::Event::PointerMoved(from + (to - from) * (k as f32 / steps as f32)));
        run.frame().unwrap();
    }
    push(run, button(to, false));
    run.frame().unwrap();
}

/// Clicks the text field tagged `name`, selects all and types `text` over it.
pub fn type_into<S: Scene>(run: &mut impl Session<S>, name: &str, text: &str) {
    click(run, name);
    let select_all = egui::Modifiers { ctrl: true, command: true, ..Default::default() };
    push(
        run,
        egui::Event::Key { key: egui::Key::A, physical_key: None, pressed: true, repeat: false, modifiers: select_all },
    );
    push(run, egui::Event::Text(text.to_owned()));
    run.frame().unwrap();
}

/// Set in the environment of a test run again inside `xvfb-run`.
pub const IN_XVFB: &str = "ANIM_TEST_IN_XVFB";

/// Whether this process is the run inside `xvfb-run` that [`under_xvfb`] started.
pub fn in_xvfb() -> bool {
    std::env::var_os(IN_XVFB).is_some()
}

/// Runs the test `name` of this test binary again, alone, inside `xvfb-run` (a virtual X
/// display), where [`in_xvfb`] is true, and asserts that it passed. Returns `false` (the
/// caller skips) only when `xvfb-run` is missing and `ANIM_SKIP_WINDOW=1` names the skip;
/// a machine without it otherwise fails the test.
pub fn under_xvfb(name: &str) -> bool {
    let xvfb = std::env::var_os("PATH")
        .and_then(|p| std::env::split_paths(&p).map(|d| d.join("xvfb-run")).find(|c| c.is_file()));
    let Some(xvfb) = xvfb else {
        if std::env::var("ANIM_SKIP_WINDOW").as_deref() == Ok("1") {
            eprintln!("skipped: {name}, xvfb-run is not installed (ANIM_SKIP_WINDOW)");
            return false;
        }
        panic!(
            "xvfb-run is not installed, so {name} cannot open its window: install it (apt install xvfb, or \
             scripts/setup.sh), or set ANIM_SKIP_WINDOW=1 to skip"
        );
    };
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new(xvfb)
        .args(["-a", "-s", "-screen 0 1920x1080x24"])
        .arg(exe)
        .args([name, "--exact", "--nocapture", "--test-threads", "1"])
        .env(IN_XVFB, "1")
        .output()
        .expect("xvfb-run starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{name} in a window under xvfb-run failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

/// A horizontal slider's rail (its tagged rectangle) with the span its handle's centre
/// covers: egui keeps half the handle (from the style's handle shape and the rail's
/// height) free at both ends.
#[derive(Clone, Copy, Debug)]
pub struct Rail {
    /// The tagged rectangle.
    pub rect: egui::Rect,
    /// What the handle keeps free at each end, points.
    pub margin: f32,
}

impl Rail {
    /// The slider tagged `name`.
    pub fn of<S: Scene>(run: &impl Session<S>, name: &str) -> Self {
        let rect = rect(run, name);
        let radius = rect.height() / 2.5;
        let margin = match ctx(run).style().visuals.handle_shape {
            egui::style::HandleShape::Circle => radius,
            egui::style::HandleShape::Rect { aspect_ratio } => radius * aspect_ratio,
        };
        Self { rect, margin }
    }

    /// Where the value at `t` of the slider's range (0 to 1) sits.
    pub fn at(&self, t: f32) -> egui::Pos2 {
        let span = self.rect.width() - 2.0 * self.margin;
        egui::pos2(self.rect.left() + self.margin + t * span, self.rect.center().y)
    }

    /// Which fraction of the range pointer x `x` stands for (inverse of [`Rail::at`]).
    pub fn fraction(&self, x: f32) -> f32 {
        ((x - self.rect.left() - self.margin) / (self.rect.width() - 2.0 * self.margin)).clamp(0.0, 1.0)
    }

    /// The share of the range one point covers.
    pub fn step(&self) -> f32 {
        1.0 / (self.rect.width() - 2.0 * self.margin)
    }
}
