//! The wire traffic of one case, as the report shows it.

use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The wire traffic of one case, kept for the report. Each line starts with
/// the seconds since the log began (`+1.234`), so a late answer shows where
/// the time went: in the bridge before it wrote, or in the harness after.
#[derive(Clone, Debug)]
pub struct WireLog {
    lines: Arc<Mutex<Vec<String>>>,
    began: Instant,
}

impl Default for WireLog {
    fn default() -> Self {
        WireLog { lines: Arc::default(), began: Instant::now() }
    }
}

impl WireLog {
    pub(crate) fn push(&self, line: &str) {
        let at = self.began.elapsed().as_secs_f64();
        let mut log = editor_link::lock(&self.lines);
        if log.len() < 200 {
            log.push(format!("+{at:.3} {line}"));
        }
    }

    pub fn lines(&self) -> Vec<String> {
        editor_link::lock(&self.lines).clone()
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
