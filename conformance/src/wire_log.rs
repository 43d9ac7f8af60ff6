//! The wire traffic of one case, as the report shows it.

use std::sync::{Arc, Mutex};

/// The wire traffic of one case, kept for the report.
#[derive(Clone, Debug, Default)]
pub struct WireLog(Arc<Mutex<Vec<String>>>);

impl WireLog {
    pub(crate) fn push(&self, line: String) {
        let mut log = editor_link::lock(&self.0);
        if log.len() < 200 {
            log.push(line);
        }
    }

    pub fn lines(&self) -> Vec<String> {
        editor_link::lock(&self.0).clone()
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
