//! Progress of long command-line work (`crowd_report`'s configurations, `animtool bake`,
//! `compress` and `retarget`'s clips): the item being worked on, how many are done, the
//! time elapsed and an estimate of the time left.
//!
//! Progress goes to standard error, so that standard output keeps only the command's
//! result (tests and scripts parse it). How it is shown is chosen when a [`Progress`] is
//! made ([`Mode::from_env`]):
//!
//! - a bar (`indicatif`) redrawn in place when standard error is a terminal and `TERM` is
//!   not `dumb`;
//! - otherwise plain lines, one when each item starts and one at the end, never with
//!   terminal escapes:
//!
//! ```text
//! bake: 1/3 Survey (elapsed 0.0 s)
//! bake: 2/3 Walk (elapsed 2.0 s, about 4.0 s left)
//! bake: 3/3 Run (elapsed 4.5 s, about 1.5 s left)
//! bake: 3/3 done in 6.0 s
//! ```
//!
//! `ANIM_PROGRESS=0` (or `off`) shows nothing; `ANIM_PROGRESS=plain` shows plain lines on a
//! terminal too. The bar has no colours (so `NO_COLOR` has nothing to turn off).
//!
//! The time left ([`time_left`]) is the mean time of the items done so far times the items
//! left, less the time already spent on the current item: with `d` of `n` items done after
//! `T_d` seconds and `t` seconds into item `d + 1`, it is `max(0, T_d / d · (n − d) − t)`
//! (unknown before the first item is done). The bar updates it four times a second, so it
//! counts down during a long item; a plain line, printed when an item starts (`t ≈ 0`),
//! shows the same estimate.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Not at all.
    Hidden,
    /// Plain lines on standard error.
    Lines,
    /// A bar on standard error, redrawn in place.
    Bar,
}

impl Mode {
    /// The mode for this process: `ANIM_PROGRESS` (`0` or `off`: [`Mode::Hidden`],
    /// `plain`: [`Mode::Lines`]), else [`Mode::Bar`] when standard error is a terminal and
    /// `TERM` is not `dumb`, else [`Mode::Lines`].
    pub fn from_env() -> Self {
        let setting = std::env::var("ANIM_PROGRESS").unwrap_or_default();
        let term = std::env::var("TERM").unwrap_or_default();
        Self::choose(&setting, &term, std::io::stderr().is_terminal())
    }

    /// [`Mode::from_env`] from its inputs: the `ANIM_PROGRESS` and `TERM` values (empty when
    /// unset) and whether standard error is a terminal.
    pub fn choose(setting: &str, term: &str, stderr_is_terminal: bool) -> Self {
        match setting.trim() {
            "0" | "off" => Mode::Hidden,
            "plain" => Mode::Lines,
            _ if stderr_is_terminal && term != "dumb" => Mode::Bar,
            _ => Mode::Lines,
        }
    }
}

/// The time left: `max(0, done_elapsed / done · (total − done) − in_item)`, where
/// `done_elapsed` is the time at which the `done`-th item finished and `in_item` the time
/// spent since on the next one. `None` before the first item is done.
pub fn time_left(done_elapsed: Duration, done: u64, total: u64, in_item: Duration) -> Option<Duration> {
    if done == 0 {
        return None;
    }
    let per_item = done_elapsed.as_secs_f64() / done as f64;
    let left = per_item * total.saturating_sub(done) as f64 - in_item.as_secs_f64();
    Some(Duration::from_secs_f64(left.max(0.0)))
}

/// A duration for a person: `4.2 s` under a minute, `3 min 07 s` (to the nearest second)
/// under an hour, else `2 h 05 min` (whole minutes of the nearest second, rounded down).
pub fn format_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 59.95 {
        format!("{s:.1} s")
    } else if s < 3599.5 {
        let s = s.round() as u64;
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        let s = s.round() as u64;
        format!("{} h {:02} min", s / 3600, s % 3600 / 60)
    }
}

/// `elapsed 1.2 s, about 3.4 s left` (without the estimate before the first item is done).
fn status(elapsed: Duration, left: Option<Duration>) -> String {
    match left {
        Some(l) => format!("elapsed {}, about {} left", format_duration(elapsed), format_duration(l)),
        None => format!("elapsed {}", format_duration(elapsed)),
    }
}

/// Where a [`Progress`] goes.
enum Sink {
    Hidden,
    Lines {
        out: Box<dyn Write>,
        clock: Box<dyn FnMut() -> Duration>,
    },
    /// The bar, and the start of the times it shows.
    Bar {
        bar: ProgressBar,
        start: Instant,
    },
}

/// Progress over a known number of items (see the [module docs](self)).
///
/// Call [`Progress::item`] when an item starts, [`Progress::inc`] when it is done, and
/// [`Progress::finish`] at the end. Printing to standard output while a bar is drawn
/// goes through [`Progress::suspend`], so the bar does not mix with the output.
pub struct Progress {
    label: String,
    total: u64,
    done: u64,
    /// Nanoseconds from the start to the end of the last item done (shared with the bar's
    /// status, which reads it on every redraw).
    done_at: Arc<AtomicU64>,
    sink: Sink,
}

impl Progress {
    /// Progress over `total` items, labelled `label` (the command: `bake`, `compress`…),
    /// shown as [`Mode::from_env`] says.
    pub fn new(label: &str, total: usize) -> Self {
        Self::with_mode(label, total, Mode::from_env())
    }

    /// Progress shown in `mode` (standard error for lines and the bar).
    pub fn with_mode(label: &str, total: usize, mode: Mode) -> Self {
        match mode {
            Mode::Hidden => Self::make(label, total, Sink::Hidden),
            Mode::Lines => {
                let start = Instant::now();
                Self::lines(label, total, Box::new(std::io::stderr()), Box::new(move || start.elapsed()))
            }
            Mode::Bar => {
                let start = Instant::now();
                let mut p = Self::make(label, total, Sink::Hidden);
                let done_at = Arc::clone(&p.done_at);
                let status_key = move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let elapsed = start.elapsed();
                    let done_at = Duration::from_nanos(done_at.load(Ordering::Relaxed));
                    let total = state.len().unwrap_or(0);
                    let left = time_left(done_at, state.pos(), total, elapsed.saturating_sub(done_at));
                    let _ = write!(w, "{}", status(elapsed, left));
                };
                let item_key = |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let total = state.len().unwrap_or(0);
                    let _ = write!(w, "{}", if state.is_finished() { total } else { (state.pos() + 1).min(total) });
                };
                // The template is fixed and valid; `with_template` checks only its syntax.
                let style = ProgressStyle::with_template("{prefix}: [{bar:12}] {item}/{len} {wide_msg} ({status})")
                    .expect("the progress template is valid")
                    .progress_chars("=> ")
                    .with_key("status", status_key)
                    .with_key("item", item_key);
                let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr())
                    .with_style(style)
                    .with_prefix(label.to_owned());
                bar.enable_steady_tick(Duration::from_millis(250));
                p.sink = Sink::Bar { bar, start };
                p
            }
        }
    }

    /// Plain lines written to `out`, with times read from `clock` (the time since the
    /// start): what [`Mode::Lines`] writes to standard error, with any writer and clock.
    pub fn lines(label: &str, total: usize, out: Box<dyn Write>, clock: Box<dyn FnMut() -> Duration>) -> Self {
        Self::make(label, total, Sink::Lines { out, clock })
    }

    fn make(label: &str, total: usize, sink: Sink) -> Self {
        Self { label: label.to_owned(), total: total as u64, done: 0, done_at: Arc::new(AtomicU64::new(0)), sink }
    }

    /// Items done so far.
    pub fn done(&self) -> u64 {
        self.done
    }

    /// The next item starts: its name (a clip, a configuration) is shown with its number
    /// (`item K` for an empty name).
    pub fn item(&mut self, name: &str) {
        let (label, done, total) = (&self.label, self.done, self.total);
        let k = (done + 1).min(total);
        let unnamed;
        let name = if name.is_empty() {
            unnamed = format!("item {k}");
            &unnamed
        } else {
            name
        };
        let done_at = Duration::from_nanos(self.done_at.load(Ordering::Relaxed));
        match &mut self.sink {
            Sink::Hidden => {}
            Sink::Bar { bar, .. } => bar.set_message(name.to_owned()),
            Sink::Lines { out, clock } => {
                let now = clock();
                let left = time_left(done_at, done, total, now.saturating_sub(done_at));
                // Progress is advice: a closed stderr must not stop the work.
                let _ = writeln!(out, "{label}: {k}/{total} {name} ({})", status(now, left));
            }
        }
    }

    /// The current item is done.
    pub fn inc(&mut self) {
        self.done += 1;
        let now = match &mut self.sink {
            Sink::Hidden => return,
            Sink::Lines { clock, .. } => clock(),
            Sink::Bar { start, .. } => start.elapsed(),
        };
        self.done_at.store(u64::try_from(now.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
        if let Sink::Bar { bar, .. } = &self.sink {
            bar.inc(1);
        }
    }

    /// `n` of the items left will not run (a configuration that cannot be measured): the
    /// total drops by `n` (never below the items done), so the estimate counts only the
    /// items that will.
    pub fn skip(&mut self, n: usize) {
        self.total = self.total.saturating_sub(n as u64).max(self.done);
        if let Sink::Bar { bar, .. } = &self.sink {
            bar.set_length(self.total);
        }
    }

    /// Runs `f` (which prints to standard output or error) with the bar cleared, and redraws
    /// the bar after it; just runs `f` in the other modes.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.sink {
            Sink::Bar { bar, .. } => bar.suspend(f),
            _ => f(),
        }
    }

    /// The end: the bar stays with `done in T`; plain lines end with
    /// `LABEL: DONE/TOTAL done in T`.
    pub fn finish(mut self) {
        let (label, done, total) = (&self.label, self.done, self.total);
        match &mut self.sink {
            Sink::Hidden => {}
            Sink::Bar { bar, start } => {
                bar.set_style(
                    ProgressStyle::with_template("{prefix}: {pos}/{len} {msg}")
                        .expect("the progress template is valid"),
                );
                bar.finish_with_message(format!("done in {}", format_duration(start.elapsed())));
            }
            Sink::Lines { out, clock } => {
                let now = clock();
                let _ = writeln!(out, "{label}: {done}/{total} done in {}", format_duration(now));
                let _ = out.flush();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// A writer whose bytes the test reads back.
    #[derive(Clone, Default)]
    struct Shared(Rc<RefCell<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A clock that returns the given seconds in turn.
    fn clock<const N: usize>(times: [f64; N]) -> Box<dyn FnMut() -> Duration> {
        let mut it = times.into_iter();
        Box::new(move || Duration::from_secs_f64(it.next().expect("the test gave enough clock readings")))
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn time_left_is_the_mean_item_time_times_the_items_left_less_the_current_item() {
        assert_eq!(time_left(secs(5.0), 0, 10, secs(1.0)), None);
        // 2 of 5 done in 4 s: 2 s an item, 3 left = 6 s; 0.5 s into the third = 5.5 s.
        assert_eq!(time_left(secs(4.0), 2, 5, Duration::ZERO), Some(secs(6.0)));
        assert_eq!(time_left(secs(4.0), 2, 5, secs(0.5)), Some(secs(5.5)));
        // Longer into the item than the estimate: zero, never negative.
        assert_eq!(time_left(secs(4.0), 2, 5, secs(60.0)), Some(Duration::ZERO));
        // All done.
        assert_eq!(time_left(secs(9.0), 3, 3, Duration::ZERO), Some(Duration::ZERO));
        // 1 of 1000 done in 3 s: 2997 s.
        assert_eq!(time_left(secs(3.0), 1, 1000, Duration::ZERO), Some(secs(2997.0)));
    }

    #[test]
    fn durations_read_as_seconds_minutes_or_hours() {
        assert_eq!(format_duration(Duration::ZERO), "0.0 s");
        assert_eq!(format_duration(secs(1.24)), "1.2 s");
        assert_eq!(format_duration(secs(59.9)), "59.9 s");
        // 59.96 would print as 60.0 s: minutes from there.
        assert_eq!(format_duration(secs(59.96)), "1 min 00 s");
        assert_eq!(format_duration(secs(187.4)), "3 min 07 s");
        assert_eq!(format_duration(secs(187.6)), "3 min 08 s");
        assert_eq!(format_duration(secs(3599.0)), "59 min 59 s");
        assert_eq!(format_duration(secs(3599.6)), "1 h 00 min");
        assert_eq!(format_duration(secs(2.0 * 3600.0 + 5.0 * 60.0 + 59.0)), "2 h 05 min");
    }

    #[test]
    fn plain_lines_name_each_item_with_its_number_and_estimate() {
        let buf = Shared::default();
        // Readings: item 1 at 0, done at 2, item 2 at 2, done at 4, item 3 at 4.5, done at
        // 6, finish at 6.
        let mut p = Progress::lines("bake", 3, Box::new(buf.clone()), clock([0.0, 2.0, 2.0, 4.0, 4.5, 6.0, 6.0]));
        for name in ["Survey", "Walk", "Run"] {
            p.item(name);
            p.inc();
        }
        assert_eq!(p.done(), 3);
        p.finish();
        let text = String::from_utf8(buf.0.borrow().clone()).unwrap();
        assert_eq!(
            text,
            "bake: 1/3 Survey (elapsed 0.0 s)\n\
             bake: 2/3 Walk (elapsed 2.0 s, about 4.0 s left)\n\
             bake: 3/3 Run (elapsed 4.5 s, about 1.5 s left)\n\
             bake: 3/3 done in 6.0 s\n"
        );
        assert!(!text.contains('\x1b'), "no terminal escapes");
    }

    #[test]
    fn skipped_items_leave_the_total_and_unnamed_items_get_their_number() {
        let buf = Shared::default();
        // 10 items; 2 done in 4 s, then 5 skipped: 3 left, 1 to go after the third starts.
        let mut p = Progress::lines("report", 10, Box::new(buf.clone()), clock([0.0, 2.0, 2.0, 4.0, 4.0, 6.0, 6.0]));
        for name in ["a", ""] {
            p.item(name);
            p.inc();
        }
        p.skip(5);
        p.item("c");
        p.inc();
        p.skip(100);
        p.finish();
        let text = String::from_utf8(buf.0.borrow().clone()).unwrap();
        assert_eq!(
            text,
            "report: 1/10 a (elapsed 0.0 s)\n\
             report: 2/10 item 2 (elapsed 2.0 s, about 18.0 s left)\n\
             report: 3/5 c (elapsed 4.0 s, about 6.0 s left)\n\
             report: 3/3 done in 6.0 s\n"
        );
    }

    #[test]
    fn the_mode_follows_the_setting_the_terminal_and_term() {
        assert_eq!(Mode::choose("", "xterm-256color", true), Mode::Bar);
        assert_eq!(Mode::choose("", "xterm-256color", false), Mode::Lines);
        assert_eq!(Mode::choose("", "dumb", true), Mode::Lines);
        assert_eq!(Mode::choose("", "", true), Mode::Bar);
        assert_eq!(Mode::choose("plain", "xterm", true), Mode::Lines);
        assert_eq!(Mode::choose("0", "xterm", true), Mode::Hidden);
        assert_eq!(Mode::choose("off", "", false), Mode::Hidden);
    }

    #[test]
    fn hidden_progress_counts_and_writes_nothing() {
        let mut p = Progress::with_mode("compress", 2, Mode::Hidden);
        p.item("a");
        p.inc();
        assert_eq!(p.done(), 1);
        assert_eq!(p.suspend(|| 7), 7);
        p.finish();
    }
}
