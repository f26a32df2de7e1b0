//! A storm of 100 window resizes on a real X11 window (Xvfb) with validation on: the window
//! is asked for 100 different sizes in a row (1×1, thin 1×N and N×1 strips, and sizes
//! scattered up to 640×480; X11 has no 0×0 window, so minimizing is requested too, which a
//! window manager would turn into a zero extent), a frame is rendered after each, every
//! frame at a real size is presented at exactly the window's size, and the validation
//! layer reports nothing, teardown included.
//!
//! Without `DISPLAY` the test re-runs itself under `xvfb-run -a`; when `xvfb-run` is not
//! installed it fails, unless `ANIM_SKIP_WINDOW=1` names the skip.

#![cfg(all(feature = "window", target_os = "linux"))]

mod common;

use anim_math::Mat4;
use anim_render_vk::ash::vk;
use anim_render_vk::{Coloring, Context, ContextDesc, FrameData, Renderer, Swapchain};
use std::sync::Arc;
use std::time::{Duration, Instant};
use winit::application::ApplicationHandler;
use winit::dpi::PhysicalSize;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, EventLoop};
use winit::platform::pump_events::EventLoopExtPumpEvents;
use winit::platform::x11::EventLoopBuilderExtX11;
use winit::window::{Window, WindowId};

/// Set in the re-executed test, so that a missing display there is a failure, not a loop.
const UNDER_XVFB: &str = "ANIM_VK_RESIZE_STORM_UNDER_XVFB";
const TEST: &str = "resize_storm_keeps_validation_clean";

#[test]
fn resize_storm_keeps_validation_clean() {
    if std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()) {
        storm();
        return;
    }
    assert!(std::env::var_os(UNDER_XVFB).is_none(), "xvfb-run started the test without a DISPLAY");
    let Some(xvfb) = find_in_path("xvfb-run") else {
        if std::env::var("ANIM_SKIP_WINDOW").as_deref() == Ok("1") {
            eprintln!("skipped: {TEST}, DISPLAY is unset and xvfb-run is not installed (ANIM_SKIP_WINDOW)");
            return;
        }
        panic!(
            "DISPLAY is unset and xvfb-run is not installed, so the storm has no window: install it (apt install \
             xvfb), or set ANIM_SKIP_WINDOW=1 to skip"
        );
    };
    eprintln!("{TEST}: DISPLAY is unset, re-running under xvfb-run -a");
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new(xvfb)
        .args(["-a", "-s", "-screen 0 1024x768x24"])
        .arg(exe)
        .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
        .env(UNDER_XVFB, "1")
        .output()
        .expect("xvfb-run starts");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the storm under xvfb-run failed:\n{text}");
    // The child ran the storm, not a filtered-out nothing.
    assert!(text.contains("1 passed"), "{text}");
    let summary = text.lines().find(|l| l.contains("frames presented"));
    eprintln!("{TEST} under xvfb-run: {}", summary.unwrap_or("no summary"));
    assert!(summary.is_some(), "{text}");
}

fn find_in_path(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

/// The window, created once the event loop resumes, and the last size the X server
/// reported for it.
#[derive(Default)]
struct App {
    window: Option<Arc<Window>>,
    reported: Option<PhysicalSize<u32>>,
}

impl ApplicationHandler for App {
    fn resumed(&mut self, el: &ActiveEventLoop) {
        if self.window.is_none() {
            let attrs = Window::default_attributes()
                .with_title("anim-render-vk resize storm")
                .with_inner_size(PhysicalSize::new(320u32, 240u32));
            self.window = Some(Arc::new(el.create_window(attrs).expect("an X11 window")));
        }
    }

    fn window_event(&mut self, _el: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        if let WindowEvent::Resized(size) = event {
            self.reported = Some(size);
        }
    }
}

/// 100 distinct sizes: 1×1, thin strips, then a scatter up to 640×480.
fn sizes() -> Vec<PhysicalSize<u32>> {
    let mut s =
        vec![PhysicalSize::new(1, 1), PhysicalSize::new(1, 37), PhysicalSize::new(53, 1), PhysicalSize::new(2, 2)];
    let mut r = common::Rng(0x5eed_1234_abcd);
    while s.len() < 100 {
        let size = PhysicalSize::new(1 + (r.next() * 640.0) as u32, 1 + (r.next() * 480.0) as u32);
        if !s.contains(&size) {
            s.push(size);
        }
    }
    s
}

/// Runs the event loop until `done` holds or two seconds pass.
fn pump_until(el: &mut EventLoop<()>, app: &mut App, done: impl Fn(&App) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while !done(app) && Instant::now() < deadline {
        let _ = el.pump_app_events(Some(Duration::from_millis(5)), app);
    }
}

/// Draws `frame`, allowing the swapchain to skip a couple of frames while it recreates
/// itself (a size change seen at acquire or present); returns whether a frame was presented.
fn draw(sc: &mut Swapchain, r: &mut Renderer, frame: &FrameData) -> bool {
    (0..4).any(|_| sc.draw(r, frame).expect("a frame after a resize"))
}

fn storm() {
    // One event loop per process, on the test's thread.
    let mut el = EventLoop::builder().with_x11().with_any_thread(true).build().expect("an X11 event loop");
    let mut app = App::default();
    pump_until(&mut el, &mut app, |a| a.window.is_some());
    let window = app.window.clone().expect("the event loop resumed and created the window");
    let ctx = Context::new(&ContextDesc { validation: true, window: Some(window.clone()) })
        .expect("a Vulkan context (lavapipe) for the window, with validation");
    let log = ctx.validation_log();
    let first = window.inner_size();
    let mut sc = Swapchain::new(&ctx, first.width, first.height).unwrap();
    let mut r = Renderer::new(&ctx, sc.format()).unwrap();
    let quad = r.add_mesh(&common::quad(1.0), &Coloring::Uniform([0.9, 0.5, 0.2])).unwrap();
    let mut frame = FrameData::default();
    anim_render_vk::lines::grid(&mut frame, 4, 0.5, 0.0);
    frame.add_static(quad, Mat4::identity(), [1.0; 3]);
    assert!(draw(&mut sc, &mut r, &frame), "the first frame");

    let mut presented = 0;
    for (k, want) in sizes().into_iter().enumerate() {
        let _ = window.request_inner_size(want);
        pump_until(&mut el, &mut app, |a| a.reported == Some(want));
        let got = window.inner_size();
        assert_eq!(got, want, "step {k}: Xvfb (no window manager) gives the window the size asked for");
        sc.resized(got.width, got.height);
        assert!(draw(&mut sc, &mut r, &frame), "step {k}: no frame presented at {}×{}", got.width, got.height);
        assert_eq!(sc.extent(), vk::Extent2D { width: got.width, height: got.height }, "step {k}");
        presented += 1;
        assert_eq!(ctx.validation_count(), 0, "step {k} ({want:?}):\n{}", ctx.validation_messages().join("\n"));
    }
    // Minimized: without a window manager the X server keeps the window as it is; with one,
    // the extent becomes zero and frames are skipped. Either way nothing fails.
    window.set_minimized(true);
    pump_until(&mut el, &mut app, |_| false);
    sc.resized(0, 0);
    for _ in 0..3 {
        let shown = sc.draw(&mut r, &frame).expect("a frame while minimized");
        assert!(shown || sc.extent().width == 0 || sc.extent().height == 0, "a skipped frame at a real size");
    }
    window.set_minimized(false);
    let back = PhysicalSize::new(200, 150);
    let _ = window.request_inner_size(back);
    pump_until(&mut el, &mut app, |a| a.reported == Some(back));
    let got = window.inner_size();
    sc.resized(got.width, got.height);
    assert!(draw(&mut sc, &mut r, &frame), "a frame after restoring");
    r.wait_idle().unwrap();
    assert!(sc.creations() > 100, "{} swapchains for 100 sizes", sc.creations());
    eprintln!("{presented} frames presented at 100 sizes, {} swapchains", sc.creations());
    drop(r);
    drop(sc);
    drop(ctx);
    drop(window);
    assert_eq!(log.count(), 0, "validation messages (teardown included):\n{}", log.messages().join("\n"));
}
