//! When an in-process map of expiring entries drops the expired ones: at
//! most once per period, on a write. Without it a map pruned only when
//! full grows with every key seen until it is (tens of megabytes of
//! entries nobody will read again).

use std::time::{Duration, Instant};

/// A schedule of sweeps.
#[derive(Debug)]
pub struct Sweep {
    every: Duration,
    last: Instant,
}

impl Sweep {
    /// Sweeps at most once per `every` (and not more often than once a
    /// second).
    pub fn every(every: Duration) -> Self {
        Self {
            every: every.max(Duration::from_secs(1)),
            last: Instant::now(),
        }
    }

    /// Whether a sweep is due now; if so, the next one is a period away.
    pub fn due(&mut self) -> bool {
        if self.last.elapsed() < self.every {
            return false;
        }
        self.last = Instant::now();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_is_due_once_per_period() {
        let mut s = Sweep::every(Duration::from_secs(3600));
        assert!(!s.due());
        s.last -= Duration::from_secs(3600);
        assert!(s.due());
        assert!(!s.due());
    }
}
