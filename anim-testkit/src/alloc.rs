//! A counting global allocator for the "nothing allocated per frame" tests: a test binary
//! installs [`Counting`] as its `#[global_allocator]` and runs its frames inside
//! [`counted`], which counts the allocations the calling thread makes.
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: anim_testkit::alloc::Counting = anim_testkit::alloc::Counting;
//! let (allocations, bytes) = anim_testkit::alloc::counted(3, 240, |frame| job.run(frame));
//! assert_eq!(allocations, 0);
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // Const-initialized and without a destructor: reading it never allocates.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn note(size: usize) {
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(size, Ordering::Relaxed);
    }
}

/// The system allocator, counting what the thread inside [`counted`] allocates.
pub struct Counting;

// SAFETY: every call is forwarded unchanged to `System`; the bookkeeping only touches
// atomics and a const thread-local, neither of which allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: as for `alloc`; `ptr` and `layout` come from this allocator, i.e. System.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by System with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Runs `frame(i)` for `warm_up` frames (buffers reach their working size), then for
/// `frames` counted ones; returns the allocations and bytes of the counted frames made by
/// this thread. Meaningful only where [`Counting`] is the global allocator.
pub fn counted(warm_up: usize, frames: usize, mut frame: impl FnMut(usize)) -> (usize, usize) {
    for i in 0..warm_up {
        frame(i);
    }
    ALLOCATIONS.store(0, Ordering::Relaxed);
    BYTES.store(0, Ordering::Relaxed);
    COUNTING.with(|c| c.set(true));
    for i in warm_up..warm_up + frames {
        frame(i);
    }
    COUNTING.with(|c| c.set(false));
    (ALLOCATIONS.load(Ordering::Relaxed), BYTES.load(Ordering::Relaxed))
}
