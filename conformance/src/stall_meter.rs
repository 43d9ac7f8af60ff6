//! How long the machine kept this harness from running during a window.
//!
//! A deadline check ("answered by its TimeoutSeconds plus a margin") reads
//! the wall clock, and on a loaded machine (CI beside a build, eight cases
//! side by side on two cores) every process in the path, the bridge, the
//! embedded fake and the harness, can be held off the CPU for seconds. A
//! fixed margin large enough for the worst machine would let through the
//! bridge it exists to catch (one that answers 8 s late), so the margin
//! stays small and grows by what was measured: a task on the harness's
//! runtime asks to wake every [`TICK`] and adds up how much later than
//! that it did wake. A quiet machine measures about nothing.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use tokio::time::Instant;

/// How often the meter asks to run.
pub const TICK: Duration = Duration::from_millis(10);

/// Lateness per tick below this is the timer's own granularity, not a stall.
const JITTER: Duration = Duration::from_millis(2);

/// A running meter; it stops when dropped.
#[derive(Debug)]
pub struct StallMeter {
    stalled_us: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl StallMeter {
    /// Starts measuring on the current runtime.
    pub fn start() -> StallMeter {
        let stalled_us = Arc::new(AtomicU64::new(0));
        let task = tokio::spawn({
            let stalled_us = stalled_us.clone();
            async move {
                loop {
                    let asked = Instant::now() + TICK;
                    tokio::time::sleep_until(asked).await;
                    let late = Instant::now().saturating_duration_since(asked);
                    if late > JITTER {
                        let us = u64::try_from(late.as_micros()).unwrap_or(u64::MAX);
                        stalled_us.fetch_add(us, Ordering::Relaxed);
                    }
                }
            }
        });
        StallMeter { stalled_us, task }
    }

    /// The stalls measured since the start.
    pub fn stalled(&self) -> Duration {
        Duration::from_micros(self.stalled_us.load(Ordering::Relaxed))
    }
}

impl Drop for StallMeter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn a_runtime_held_by_blocking_work_is_measured_as_stalled() {
        let meter = StallMeter::start();
        tokio::time::sleep(TICK * 3).await;
        let before = meter.stalled();
        // The runtime's one thread is blocked: the meter cannot run for 300 ms.
        std::thread::sleep(Duration::from_millis(300));
        tokio::time::sleep(TICK * 3).await;
        let held = meter.stalled() - before;
        assert!(held >= Duration::from_millis(250), "measured {held:?} of a 300 ms stall");
    }
}
