//! The allocator, and handing its free memory back when keel goes idle.
//!
//! mimalloc returns freed memory to the OS (purges it) only after a delay,
//! and a delayed purge runs when the thread that owns the memory next
//! allocates. A runtime thread that has gone idle never does: whatever
//! was freed just before (start-up's working memory, a burst's buffers)
//! stayed resident, 1.6 MiB of an idle server's 30. So each runtime thread
//! collects as it parks (runs out of work), which costs it a walk of its
//! own heap at a moment it has nothing else to do.

use std::cell::Cell;
use std::time::{Duration, Instant};

// Returns freed memory to the OS promptly (glibc keeps large freed blocks,
// such as argon2's 19 MiB, per thread arena) and is faster under load.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A thread parking more often than this collects once: a burst of short
/// parks under load does not walk the heap each time.
const AT_MOST_EVERY: Duration = Duration::from_millis(50);

/// For `on_thread_park`: collect, unless this thread did a moment ago.
pub fn on_park() {
    thread_local! {
        static LAST: Cell<Option<Instant>> = const { Cell::new(None) };
    }
    let now = Instant::now();
    let due = LAST.with(|last| {
        let due = last
            .get()
            .is_none_or(|t| now.duration_since(t) >= AT_MOST_EVERY);
        if due {
            last.set(Some(now));
        }
        due
    });
    if due {
        collect();
    }
}

/// Runs this thread's delayed purges whose delay has passed, and the
/// process-wide ones.
fn collect() {
    // SAFETY: mi_collect takes no arguments that point anywhere and may be
    // called on any thread at any time; it only frees what is free.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_collect(false);
    }
}
