//! The wire traffic of one case, as the report shows it.

use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The wire traffic of one case, kept for the report. Each line starts with
/// the seconds since the log began (`+1.234`), so a late answer shows where
/// the time went: in the bridge before it wrote, or in the harness after.
///
/// A long case keeps its first [`HEAD`] lines and its last [`TAIL`], and says
/// how many it left out between them: the start shows how it was set up, the
/// end how it failed.
#[derive(Clone, Debug)]
pub struct WireLog {
    kept: Arc<Mutex<Kept>>,
    began: Instant,
}

/// Lines kept at the start of a case's log.
pub const HEAD: usize = 120;
/// Lines kept at its end.
pub const TAIL: usize = 80;

#[derive(Debug, Default)]
struct Kept {
    head: Vec<String>,
    tail: std::collections::VecDeque<(f64, String)>,
    /// Lines that fell out of the tail, and the time of the first of them.
    left_out: usize,
    left_out_at: f64,
}

impl Default for WireLog {
    fn default() -> Self {
        WireLog { kept: Arc::default(), began: Instant::now() }
    }
}

impl WireLog {
    pub(crate) fn push(&self, line: &str) {
        let at = self.began.elapsed().as_secs_f64();
        let line = format!("+{at:.3} {line}");
        let mut kept = editor_link::lock(&self.kept);
        if kept.head.len() < HEAD {
            kept.head.push(line);
            return;
        }
        kept.tail.push_back((at, line));
        if kept.tail.len() > TAIL {
            if let Some((first, _)) = kept.tail.pop_front() {
                if kept.left_out == 0 {
                    kept.left_out_at = first;
                }
                kept.left_out += 1;
            }
        }
    }

    pub fn lines(&self) -> Vec<String> {
        let kept = editor_link::lock(&self.kept);
        let mut lines = kept.head.clone();
        if kept.left_out > 0 {
            lines.push(format!(
                "+{:.3} ({} lines left out here: a case's log keeps its first {HEAD} and last {TAIL})",
                kept.left_out_at, kept.left_out
            ));
        }
        lines.extend(kept.tail.iter().map(|(_, line)| line.clone()));
        lines
    }
}

/// At most 300 bytes of `bytes` as one line of text (CR and LF shown as
/// `\r` and `\n`, so a header frame stays on its line of the wire log).
pub(crate) fn excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let one_line = |s: &str| s.replace('\r', "\\r").replace('\n', "\\n");
    if text.len() <= 300 {
        return one_line(&text);
    }
    let mut end = 300;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", one_line(&text[..end]), bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_log_keeps_its_start_and_its_end_and_says_what_it_left_out() {
        let log = WireLog::default();
        for n in 0..1000 {
            log.push(&format!("line {n}"));
        }
        let lines = log.lines();
        assert_eq!(lines.len(), HEAD + 1 + TAIL);
        assert!(lines[0].ends_with(" line 0") && lines[HEAD - 1].ends_with(&format!(" line {}", HEAD - 1)));
        assert!(lines[HEAD].contains(&format!("({} lines left out here", 1000 - HEAD - TAIL)), "{}", lines[HEAD]);
        assert!(lines.last().unwrap().ends_with(" line 999"));
        let short = WireLog::default();
        short.push("only");
        assert_eq!(short.lines().len(), 1);
    }
}
