//! How long the machine kept the processes of a check off the CPU during
//! a window.
//!
//! A deadline check ("answered by its TimeoutSeconds plus a margin") reads
//! the wall clock, and on a loaded machine (CI beside a build, eight cases
//! side by side on two cores, mono compiling snippets) every process in the
//! path, the bridge, the embedded fake and the harness, can be held up for
//! seconds. A fixed margin large enough for the worst machine would let
//! through the bridge it exists to catch (one that answers late), so the
//! margin stays small and grows by what was measured, up to
//! [`MOST_ALLOWED`]:
//!
//! - the harness: the task that waits for the answer asks to wake every
//!   [`TICK`] and adds up how much later than that it woke. It is measured
//!   in that task itself, not beside it: a thread held in a blocking call
//!   (a rename on a busy disk) holds the tasks queued on it and no other, so
//!   a meter of its own would run on elsewhere and see nothing (issue 34);
//! - the bridge (Linux): the time its threads, and those of its child
//!   processes, were ready to run and waited for a CPU
//!   (`/proc/PID/task/TID/schedstat`, the second field).
//!
//! A quiet machine measures about nothing.

use std::{future::Future, time::Duration};

use tokio::time::Instant;

/// How often the meter asks to run.
pub const TICK: Duration = Duration::from_millis(10);

/// Lateness per tick below this is the timer's own granularity, not a stall.
const JITTER: Duration = Duration::from_millis(2);

/// The most a measured stall may add to a deadline's margin: enough for a
/// badly loaded machine, never the 30 s late of a bridge that waits for
/// something else (`bridge_defect::MISSED_BY`). Only time the harness was
/// held or a process was ready to run and got no CPU counts: a bridge that
/// sleeps or waits on purpose is not excused by it.
pub const MOST_ALLOWED: Duration = Duration::from_secs(20);

/// Runs `work` in the calling task, measuring meanwhile how long that task
/// was held up, plus the waits for a CPU of process `pid` and its children
/// (where the system tells them). Returns `work`'s output and the stalls,
/// at most [`MOST_ALLOWED`].
pub async fn measure<F: Future>(pid: Option<u32>, work: F) -> (F::Output, Duration) {
    let at_start = pid.and_then(|pid| Some((pid, run_queue_wait(pid)?)));
    let mut held = Duration::ZERO;
    let mut work = std::pin::pin!(work);
    let mut asked = Instant::now() + TICK;
    let output = loop {
        let done = tokio::select! {
            biased;
            output = &mut work => Some(output),
            () = tokio::time::sleep_until(asked) => None,
        };
        // Checked on every wake-up, the last one too: a task held for
        // seconds finds its answer ready and its tick long overdue at once.
        let now = Instant::now();
        if now >= asked {
            let late = now - asked;
            if late > JITTER {
                held += late;
            }
            asked = now + TICK;
        }
        if let Some(output) = done {
            break output;
        }
    };
    let process =
        at_start.and_then(|(pid, at_start)| Some(run_queue_wait(pid)?.saturating_sub(at_start))).unwrap_or_default();
    (output, (held + process).min(MOST_ALLOWED))
}

/// How long the threads of `pid` and of its descendants have waited for a
/// CPU while ready to run, in all (Linux `schedstat`); `None` where the
/// system does not say.
pub fn run_queue_wait(pid: u32) -> Option<Duration> {
    let (mut waited_ns, mut seen) = (0u64, false);
    for process in process_tree(pid).ok()? {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{process}/task")) else { continue };
        for task in tasks.flatten() {
            let schedstat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
            if let Some(wait) = schedstat.split_whitespace().nth(1).and_then(|w| w.parse::<u64>().ok()) {
                waited_ns += wait;
                seen = true;
            }
        }
    }
    seen.then(|| Duration::from_nanos(waited_ns))
}

/// `pid` and its descendants, `pid` first (Linux `/proc`).
pub fn process_tree(pid: u32) -> std::io::Result<Vec<u32>> {
    let mut children: std::collections::HashMap<u32, Vec<u32>> = std::collections::HashMap::new();
    for entry in std::fs::read_dir("/proc")?.flatten() {
        let Some(child) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        // `stat` is `pid (comm) state ppid …`; comm may hold spaces.
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else { continue };
        if let Some(ppid) = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok()) {
            children.entry(ppid).or_default().push(child);
        }
    }
    let (mut tree, mut stack) = (Vec::new(), vec![pid]);
    while let Some(next) = stack.pop() {
        tree.push(next);
        stack.extend(children.get(&next).into_iter().flatten());
    }
    Ok(tree)
}

const _: () = assert!(MOST_ALLOWED.as_secs() + 5 < crate::bridge_defect::MISSED_BY.as_secs());

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn the_task_held_by_blocking_work_is_measured_as_stalled() {
        // The work itself blocks the task's thread for 300 ms (as a rename
        // on a busy disk does), then finishes at once.
        let ((), held) = measure(None, async {
            tokio::time::sleep(TICK * 3).await;
            std::thread::sleep(Duration::from_millis(300));
        })
        .await;
        assert!(held >= Duration::from_millis(250), "measured {held:?} of a 300 ms stall");
    }

    #[test]
    fn a_process_s_waits_for_a_cpu_are_read_where_the_system_tells_them() {
        let waited = run_queue_wait(std::process::id());
        if cfg!(target_os = "linux") {
            assert!(waited.is_some(), "Linux tells schedstat");
        }
        assert_eq!(run_queue_wait(u32::MAX), None, "no such process");
    }
}
