//! The crate's one worker pool: persistent threads, parked between runs, that
//! [`Crowd::update_parallel`](crate::crowd::Crowd::update_parallel) and
//! [`CrowdJob`](crate::job::CrowdJob) hand contiguous chunks of characters to.
//!
//! A run is `tasks` calls of one `Fn(usize)`: task 0 on the calling thread, task `w + 1` on
//! worker `w`. The caller cuts its characters into disjoint chunks by task index, so the
//! result does not depend on which thread ran which chunk (the same bits for any thread
//! count). A run allocates nothing: handing it out and waiting for it take a mutex and two
//! condition variables. A panic in any task is resumed on the caller once every task has
//! finished, so no borrow handed to a worker outlives the run.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

/// A task handed to the workers, called once per task index. The borrow is stretched to
/// `'static` for the hand-over; [`WorkerPool::run`] returns only once every task is done.
#[derive(Clone, Copy)]
struct TaskRef(&'static (dyn Fn(usize) + Sync));

struct State {
    /// Bumped for every run handed out.
    epoch: u64,
    task: Option<TaskRef>,
    /// Task indices of this run; worker `w` runs index `w + 1` when it is below this.
    tasks: usize,
    /// Worker tasks not yet done.
    pending: usize,
    panicked: bool,
    shutdown: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled when a run is handed out (or on shutdown).
    start: Condvar,
    /// Signalled when the last pending task is done.
    done: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Tasks run outside the lock, so a poisoned lock still holds consistent state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Persistent worker threads, ended when the pool is dropped.
pub(crate) struct WorkerPool {
    shared: Arc<Shared>,
    handles: Vec<JoinHandle<()>>,
}

impl WorkerPool {
    /// Starts `workers` threads named `{name}-{w}`; `None` when the system refuses one
    /// (those already started end).
    pub(crate) fn new(workers: usize, name: &str) -> Option<Self> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State { epoch: 0, task: None, tasks: 0, pending: 0, panicked: false, shutdown: false }),
            start: Condvar::new(),
            done: Condvar::new(),
        });
        let mut pool = Self { shared, handles: Vec::with_capacity(workers) };
        for w in 0..workers {
            let shared = Arc::clone(&pool.shared);
            let spawned = std::thread::Builder::new().name(format!("{name}-{w}")).spawn(move || work(&shared, w));
            // On failure `pool` drops here, which stops the threads already started.
            pool.handles.push(spawned.ok()?);
        }
        Some(pool)
    }

    /// Number of worker threads (the calling thread not counted).
    pub(crate) fn workers(&self) -> usize {
        self.handles.len()
    }

    /// Runs `task(0)` on the calling thread and `task(1..tasks)` on the workers; returns
    /// when all are done. A panic in any task is resumed here after every task finished.
    ///
    /// # Panics
    /// Resumes a task's panic; `tasks` must be between 1 and `workers() + 1`.
    pub(crate) fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        assert!(tasks >= 1 && tasks - 1 <= self.workers(), "{tasks} tasks for {} workers", self.workers());
        // SAFETY: only the lifetime is changed; the reference is dropped from the shared
        // state and by every worker before this function returns (it waits below, even
        // when its own task panics), so it never outlives `task`.
        let stretched =
            unsafe { std::mem::transmute::<&(dyn Fn(usize) + Sync), &'static (dyn Fn(usize) + Sync)>(task) };
        let mut st = self.shared.lock();
        st.task = Some(TaskRef(stretched));
        st.tasks = tasks;
        st.pending = tasks - 1;
        st.panicked = false;
        st.epoch = st.epoch.wrapping_add(1);
        drop(st);
        self.shared.start.notify_all();
        let own = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| task(0)));
        let mut st = self.shared.lock();
        while st.pending > 0 {
            st = self.shared.done.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
        st.task = None;
        let panicked = st.panicked;
        drop(st);
        match own {
            Err(e) => std::panic::resume_unwind(e),
            Ok(()) if panicked => panic!("a crowd worker thread panicked"),
            Ok(()) => {}
        }
    }
}

/// A worker: waits for a run that has a task for it, runs it, reports it done.
fn work(shared: &Shared, w: usize) {
    let mut seen = 0u64;
    loop {
        let task = {
            let mut st = shared.lock();
            loop {
                if st.shutdown {
                    return;
                }
                if st.epoch != seen {
                    seen = st.epoch;
                    if let Some(task) = st.task.filter(|_| w + 1 < st.tasks) {
                        break task;
                    }
                }
                st = shared.start.wait(st).unwrap_or_else(PoisonError::into_inner);
            }
        };
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (task.0)(w + 1)));
        let mut st = shared.lock();
        if result.is_err() {
            st.panicked = true;
        }
        st.pending -= 1;
        if st.pending == 0 {
            shared.done.notify_all();
        }
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.start.notify_all();
        for h in self.handles.drain(..) {
            // A worker only ends by returning (its tasks' panics are caught).
            let _ = h.join();
        }
    }
}

/// An owner's worker pool, or none yet: started by the first run that needs it, grown
/// when a run needs more workers. Cloning the owner does not share or copy it.
#[derive(Default)]
pub(crate) struct PoolSlot(Option<WorkerPool>);

impl PoolSlot {
    /// A pool of at least `workers` threads named `name-…` (the one kept, or a new one:
    /// the smaller pool is dropped first, so its threads end before new ones start);
    /// `None` when threads cannot be started.
    pub(crate) fn get(&mut self, workers: usize, name: &str) -> Option<&WorkerPool> {
        if self.0.as_ref().is_none_or(|p| p.workers() < workers) {
            self.0 = None;
            self.0 = WorkerPool::new(workers, name);
        }
        self.0.as_ref()
    }

    /// The pool started by the last [`PoolSlot::get`], if any.
    pub(crate) fn started(&self) -> Option<&WorkerPool> {
        self.0.as_ref()
    }
}

impl Clone for PoolSlot {
    fn clone(&self) -> Self {
        Self(None)
    }
}

impl std::fmt::Debug for PoolSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PoolSlot({} workers)", self.0.as_ref().map_or(0, WorkerPool::workers))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn every_task_runs_once_and_panics_reach_the_caller() {
        let pool = WorkerPool::new(3, "test").expect("threads start");
        let hits: Vec<AtomicUsize> = (0..4).map(|_| AtomicUsize::new(0)).collect();
        for tasks in 1..=4 {
            pool.run(tasks, &|t| {
                hits[t].fetch_add(1, Ordering::Relaxed);
            });
        }
        let counts: Vec<usize> = hits.iter().map(|h| h.load(Ordering::Relaxed)).collect();
        assert_eq!(counts, [4, 3, 2, 1]);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pool.run(4, &|t| assert_ne!(t, 2))));
        assert!(caught.is_err());
        // The pool still works after a task panicked.
        let sum = AtomicUsize::new(0);
        pool.run(4, &|t| {
            sum.fetch_add(t, Ordering::Relaxed);
        });
        assert_eq!(sum.into_inner(), 6);
    }

    #[test]
    fn a_slot_grows_and_clones_start_empty() {
        let mut slot = PoolSlot::default();
        assert_eq!(slot.get(1, "test").map(WorkerPool::workers), Some(1));
        assert_eq!(slot.get(1, "test").map(WorkerPool::workers), Some(1));
        assert_eq!(slot.get(3, "test").map(WorkerPool::workers), Some(3));
        assert_eq!(format!("{:?}", slot.clone()), "PoolSlot(0 workers)");
    }
}
