//! Decoding tasks shared between the pool and the thread that feeds it:
//! that thread writes or hands over the previous chunk, then decodes this
//! chunk's remaining tasks beside the pool rather than waiting for it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Fills `slots`, `per_task` at a time (the last task takes what is left),
/// by `fill(scratch, first, task_slots)`, where `first` is the index of
/// `task_slots[0]` in `slots`. All of the pool's threads but one start at
/// once; this thread runs `meanwhile` first and then takes tasks too, so
/// the tasks run on as many threads as the pool has. `beside`, when
/// given, runs on the pool too (the next chunk's read), so that this
/// thread's own work is `meanwhile` alone.
///
/// Waiting for the pool instead left a core idle whenever this thread's
/// own work ran out first: on 2 cores the four-process pipeline on 1M
/// events spent 15% of its CPU time idle.
pub(crate) fn fill_while<T, S, R>(
    slots: &mut [T],
    per_task: usize,
    scratch: impl Fn() -> S + Sync,
    fill: impl Fn(&mut S, usize, &mut [T]) + Sync,
    meanwhile: impl FnOnce() -> R,
    beside: Option<impl FnOnce() + Send>,
) -> R
where
    T: Send,
{
    let per_task = per_task.max(1);
    // Each task's slots behind a lock that is never contended: the counter
    // gives each task to one thread. It lends the slots without `unsafe`.
    let tasks: Vec<Mutex<&mut [T]>> = slots.chunks_mut(per_task).map(Mutex::new).collect();
    let next = AtomicUsize::new(0);
    let take_tasks = || {
        let mut scratch = scratch();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(task) = tasks.get(i) else { break };
            // A poisoned lock means a task panicked; the scope re-raises it.
            let Ok(mut task_slots) = task.lock() else {
                break;
            };
            fill(&mut scratch, i * per_task, &mut task_slots);
        }
    };
    let helpers = rayon::current_num_threads()
        .saturating_sub(1)
        .min(tasks.len());
    rayon::in_place_scope(|scope| {
        for _ in 0..helpers {
            scope.spawn(|_| take_tasks());
        }
        if let Some(beside) = beside {
            scope.spawn(|_| beside());
        }
        let r = meanwhile();
        take_tasks();
        r
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_slot_is_filled_once_with_its_own_index() {
        for (len, per_task) in [(0, 4), (1, 4), (7, 3), (256, 16), (1000, 1), (5, 0)] {
            let mut slots = vec![usize::MAX; len];
            let scratches = AtomicUsize::new(0);
            let ran = fill_while(
                &mut slots,
                per_task,
                || scratches.fetch_add(1, Ordering::SeqCst),
                |_, first, task| {
                    for (k, slot) in task.iter_mut().enumerate() {
                        assert_eq!(*slot, usize::MAX, "slot {} filled twice", first + k);
                        *slot = first + k;
                    }
                },
                || "meanwhile ran",
                None::<fn()>,
            );
            assert_eq!(ran, "meanwhile ran");
            // One scratch per thread, not one per task.
            let made = scratches.load(Ordering::SeqCst);
            assert!(
                made <= rayon::current_num_threads().max(1),
                "{made} scratches for {len} slots"
            );
            assert_eq!(
                slots,
                (0..len).collect::<Vec<_>>(),
                "len {len} per task {per_task}"
            );
        }
    }

    #[test]
    fn the_pool_decodes_while_this_thread_is_busy() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let filled = AtomicUsize::new(0);
        let mut slots = vec![0u8; 64];
        let seen_while_busy = pool.install(|| {
            fill_while(
                &mut slots,
                1,
                || (),
                |_, _, task| {
                    task[0] = 1;
                    filled.fetch_add(1, Ordering::SeqCst);
                },
                || {
                    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
                    while filled.load(Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline
                    {
                        std::thread::yield_now();
                    }
                    filled.load(Ordering::SeqCst) > 0
                },
                None::<fn()>,
            )
        });
        assert!(seen_while_busy, "no task was decoded while `meanwhile` ran");
        assert!(slots.iter().all(|s| *s == 1));
    }

    #[test]
    fn without_helpers_this_thread_decodes_everything_after_its_own_work() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let busy_done = std::sync::atomic::AtomicBool::new(false);
        let mut slots = vec![None; 10];
        pool.install(|| {
            let here = std::thread::current().id();
            fill_while(
                &mut slots,
                3,
                || (),
                |_, _, task| {
                    assert!(
                        busy_done.load(Ordering::SeqCst),
                        "decoded before `meanwhile` ended"
                    );
                    task.fill(Some(std::thread::current().id()));
                },
                || busy_done.store(true, Ordering::SeqCst),
                None::<fn()>,
            );
            assert!(slots.iter().all(|s| *s == Some(here)));
        });
    }

    #[test]
    fn what_runs_beside_runs_on_the_pool_while_this_thread_is_busy() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let beside_ran = std::sync::atomic::AtomicBool::new(false);
        let mut slots = vec![0u8; 4];
        let (seen, here, beside_thread) = pool.install(|| {
            let beside_thread = Mutex::new(None);
            let seen = fill_while(
                &mut slots,
                1,
                || (),
                |_, _, task| task[0] = 1,
                || {
                    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
                    while !beside_ran.load(Ordering::SeqCst) && std::time::Instant::now() < deadline
                    {
                        std::thread::yield_now();
                    }
                    beside_ran.load(Ordering::SeqCst)
                },
                Some(|| {
                    *beside_thread.lock().unwrap() = Some(std::thread::current().id());
                    beside_ran.store(true, Ordering::SeqCst);
                }),
            );
            let thread = beside_thread.lock().unwrap().take();
            (seen, std::thread::current().id(), thread)
        });
        assert!(seen, "`beside` did not run while `meanwhile` ran");
        assert_ne!(beside_thread, Some(here));
        assert!(slots.iter().all(|s| *s == 1));
    }
}
