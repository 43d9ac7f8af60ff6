//! What the simulated Editor did, as it happened: reloads, crashes,
//! restarts, quits, the faults that fired. Whoever watches gets them in
//! order (the suite writes them into a case's wire log, between the
//! messages, so its report can draw a scenario's time line: the reload a
//! call ran into, the fault that answered it).
//!
//! Watching costs the Editor nothing when no one watches, and a watcher
//! that falls behind loses the oldest events (told how many), never slows
//! the Editor.

use std::fmt;

use tokio::sync::broadcast;

use crate::faults::Trigger;

/// One thing the Editor did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// Listening for the first time (`port` 0 on a local socket).
    Listening { port: u16 },
    /// A domain reload began: the Editor's connections close.
    ReloadBegan,
    /// The reload is over: listening again.
    Reloaded { port: u16 },
    /// Quitting.
    Quitting,
    /// The process died (`restarting`: a new Unity opens the project).
    Crashed { restarting: bool },
    /// A new Editor process listens.
    Restarted { port: u16 },
    /// A fault rule went off.
    FaultFired { rule: String, fault: &'static str, trigger: Trigger, method: Option<String> },
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let on = |port: u16| if port == 0 { String::new() } else { format!(" on port {port}") };
        match self {
            Event::Listening { port } => write!(f, "unity: listening{}", on(*port)),
            Event::ReloadBegan => f.write_str("unity: reload began"),
            Event::Reloaded { port } => write!(f, "unity: reloaded, listening{}", on(*port)),
            Event::Quitting => f.write_str("unity: quitting"),
            Event::Crashed { restarting: false } => f.write_str("unity: crashed"),
            Event::Crashed { restarting: true } => f.write_str("unity: crashed (a restart follows)"),
            Event::Restarted { port } => write!(f, "unity: restarted, listening{}", on(*port)),
            Event::FaultFired { rule, fault, trigger, method } => {
                write!(f, "fault: {rule} ({fault}) on {}", trigger.as_str())?;
                match method {
                    Some(method) => write!(f, " {method}"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// Where an Editor tells its events; cloned into what fires them.
#[derive(Clone, Debug)]
pub struct Events(broadcast::Sender<Event>);

impl Default for Events {
    fn default() -> Self {
        // A scenario's busiest second is a few dozen events.
        Events(broadcast::channel(256).0)
    }
}

impl Events {
    pub fn send(&self, event: Event) {
        // No one watching: nothing to do.
        let _ = self.0.send(event);
    }

    /// Every event from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.0.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_watcher_gets_them_in_order_and_a_slow_one_is_told_what_it_lost() {
        let events = Events::default();
        let mut watcher = events.subscribe();
        events.send(Event::ReloadBegan);
        events.send(Event::Reloaded { port: 4123 });
        assert_eq!(watcher.recv().await.unwrap().to_string(), "unity: reload began");
        assert_eq!(watcher.recv().await.unwrap().to_string(), "unity: reloaded, listening on port 4123");
        for _ in 0..300 {
            events.send(Event::Quitting);
        }
        assert!(matches!(watcher.recv().await, Err(broadcast::error::RecvError::Lagged(44))));
    }

    #[test]
    fn a_fault_says_which_rule_and_what_it_hit() {
        let fired = Event::FaultFired {
            rule: "slow-compile".into(),
            fault: "slowTool",
            trigger: Trigger::ToEditor,
            method: Some("compile".into()),
        };
        assert_eq!(fired.to_string(), "fault: slow-compile (slowTool) on toEditor compile");
        assert_eq!(Event::Listening { port: 0 }.to_string(), "unity: listening");
    }
}
