//! Conditions that hold the whole Editor for a while, as a real one gets
//! held: a **hang** (a debugger break, SIGSTOP, a frozen main thread — nothing
//! is read, written, accepted or run, yet every socket stays open) and a
//! **dead listener** (the port is bound, the kernel completes connections
//! into the backlog, and nothing ever accepts them).
//!
//! A condition lasts for a time, until the fault rule that started it is
//! removed (the scenario timeline's `removeFault`, `DELETE /faults/NAME`, a
//! dropped [`crate::FaultGuard`]), or until it is ended explicitly (`DELETE
//! /hang`, quit).

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use tokio::sync::watch;

use crate::faults::Faults;

/// One condition: on (with the generation that started it) or off.
#[derive(Debug)]
pub struct Stall {
    what: &'static str,
    state: watch::Sender<Option<u64>>,
    next: AtomicU64,
}

impl Stall {
    pub fn new(what: &'static str) -> Arc<Stall> {
        Arc::new(Stall { what, state: watch::channel(None).0, next: AtomicU64::new(0) })
    }

    pub fn is_on(&self) -> bool {
        self.state.borrow().is_some()
    }

    /// Starts the condition (or starts it again, with the new limits): it
    /// ends after `duration`, when no rule named `rule` is installed any
    /// more, or at [`Stall::end`].
    pub fn start(self: &Arc<Self>, faults: &Arc<Faults>, duration: Option<Duration>, rule: Option<String>) {
        let generation = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        self.state.send_replace(Some(generation));
        tracing::info!(what = self.what, ?duration, ?rule, "the Editor is held");
        let stall = self.clone();
        let faults = faults.clone();
        tokio::spawn(async move {
            let mut changes = faults.subscribe();
            let mut own = stall.state.subscribe();
            let timer = async {
                match duration {
                    Some(duration) => tokio::time::sleep(duration).await,
                    None => std::future::pending().await,
                }
            };
            tokio::pin!(timer);
            loop {
                tokio::select! {
                    _ = &mut timer => break,
                    // Ended or started again by someone else: not ours to end.
                    _ = own.wait_for(|s| *s != Some(generation)) => return,
                    changed = changes.changed() => {
                        let gone = rule.as_deref().is_some_and(|name| faults.fired(name).is_none());
                        if changed.is_err() || gone {
                            break;
                        }
                    }
                }
            }
            let ended = stall.state.send_if_modified(|s| {
                let ours = *s == Some(generation);
                if ours {
                    *s = None;
                }
                ours
            });
            if ended {
                tracing::info!(what = stall.what, "the Editor is no longer held");
            }
        });
    }

    /// Ends the condition now, whatever started it.
    pub fn end(&self) {
        if self.state.send_replace(None).is_some() {
            tracing::info!(what = self.what, "the Editor is no longer held");
        }
    }

    /// Waits until the condition is off (at once when it is).
    pub async fn cleared(&self) {
        let mut state = self.state.subscribe();
        let _ = state.wait_for(Option::is_none).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::{Fault, RuleSpec};

    #[tokio::test]
    async fn a_stall_ends_after_its_time_when_its_rule_goes_or_when_told() {
        let faults = Arc::new(Faults::new(1, 1.0));
        let stall = Stall::new("hang");
        stall.start(&faults, Some(Duration::from_millis(20)), None);
        assert!(stall.is_on());
        tokio::time::timeout(Duration::from_secs(5), stall.cleared()).await.unwrap();

        faults.add(vec![RuleSpec::new(Fault::Hang(crate::faults::Hang { ms: None })).named("h")]).unwrap();
        stall.start(&faults, None, Some("h".into()));
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(stall.is_on(), "lasts while its rule is installed");
        faults.remove("h").unwrap();
        tokio::time::timeout(Duration::from_secs(5), stall.cleared()).await.unwrap();

        stall.start(&faults, None, None);
        stall.end();
        assert!(!stall.is_on());
        // A stall started again is not ended by the first one's timer.
        stall.start(&faults, Some(Duration::from_millis(10)), None);
        stall.start(&faults, None, None);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(stall.is_on());
    }
}
