//! Framing of the editor link (protocol §2): header framing
//! (`Content-Length: N\r\n\r\n` + body) and newline framing (one JSON value per
//! line), an incremental decoder fed arbitrary chunks, and the encoder.
//!
//! The decoder follows the mini-redis shape: a cheap scan decides whether a whole
//! frame is buffered ("need more bytes" is `Ok(None)`), then the frame is split
//! off the buffer. It implements [`tokio_util::codec::Decoder`], so a socket is
//! read with `FramedRead::new(read_half, FrameDecoder::detect(limit))`.
//!
//! Three outcomes are kept apart, because callers answer them differently:
//! - [`Frame::TooLarge`]: a frame over the limit was skipped *without being
//!   buffered*; the stream is still in sync and the connection stays usable
//!   (answer `frame_too_large`);
//! - [`FrameError::Protocol`]: the header block was malformed, sync is lost
//!   (answer `framing_error`, then close);
//! - [`FrameError::Io`] / [`FrameError::UnexpectedEof`]: the peer went away.
//!
//! Whether a body is valid JSON is not the framing's business: see
//! [`crate::jsonrpc::Message::parse`].

use std::{fmt, io};

use bytes::{Buf, BufMut, Bytes, BytesMut};

/// Longest header block accepted before the blank line, in bytes. Real header
/// blocks are ~20 bytes; anything near this is garbage.
pub const MAX_HEADER_BYTES: usize = 8 * 1024;

/// Default limit for frames an Editor receives (requests), protocol §2.
pub const DEFAULT_REQUEST_LIMIT: usize = 8 * 1024 * 1024;

/// How many leading bytes of a discarded over-limit frame a client keeps
/// ([`FrameDecoder::keep_head`]), so it can still tell whose answer it was:
/// the `id` comes early in a response.
pub const HEAD_BYTES: usize = 256;

/// Default limit for frames a client receives (responses), protocol §2.
pub const DEFAULT_RESPONSE_LIMIT: usize = 64 * 1024 * 1024;

/// The two framings of the editor link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Framing {
    /// `Content-Length: N\r\n\r\n` followed by N bytes of JSON (uLoopMCP ≥ 0.27).
    Header,
    /// One JSON value per `\n`-terminated line (the seeds' legacy uMCP).
    Newline,
}

impl Framing {
    /// The framing a receiver detects from the first byte that is not ASCII
    /// whitespace (protocol §2): `{` means newline framing, anything else header.
    pub fn detect(first_non_whitespace: u8) -> Framing {
        if first_non_whitespace == b'{' { Framing::Newline } else { Framing::Header }
    }

    /// Stable lower-case name, as used on command lines and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Framing::Header => "header",
            Framing::Newline => "newline",
        }
    }
}

impl fmt::Display for Framing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Framing {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "header" | "content-length" => Ok(Framing::Header),
            "newline" | "ndjson" | "line" => Ok(Framing::Newline),
            other => Err(format!("unknown framing {other:?} (expected \"header\" or \"newline\")")),
        }
    }
}

/// One decoded unit of the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete frame body, not yet checked to be JSON.
    Body(Bytes),
    /// A frame over the limit was discarded without being buffered. `size` is
    /// the declared length (header framing) or the bytes seen before the decoder
    /// gave up on the line (newline framing, where the length is not known).
    /// `head` holds the first bytes of the body when the decoder keeps them
    /// ([`FrameDecoder::keep_head`]); it is empty otherwise.
    TooLarge { size: u64, limit: usize, head: Bytes },
}

/// The ways a header block can be malformed. Each of them loses sync: the
/// receiver answers `framing_error` and closes the connection.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FramingError {
    #[error("header block has no Content-Length header")]
    MissingContentLength,
    #[error("header block has two different Content-Length values ({first} and {second})")]
    ConflictingContentLength { first: u64, second: u64 },
    #[error("Content-Length value {0:?} is not a non-negative base-10 integer")]
    InvalidContentLength(String),
    #[error("malformed header line {0:?}")]
    MalformedHeaderLine(String),
    #[error("header line ends in a bare line feed; header lines end in \\r\\n")]
    BareLineFeed,
    #[error("header block longer than {MAX_HEADER_BYTES} bytes without an end")]
    HeaderTooLong,
}

/// Why the decoder stopped.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// Reading the socket failed: the peer went away.
    #[error("connection error: {0}")]
    Io(#[from] io::Error),
    /// The stream ended in the middle of a frame: the peer went away mid-frame.
    #[error("connection closed in the middle of a frame ({buffered} bytes of it received)")]
    UnexpectedEof { buffered: u64 },
    /// The peer broke the framing; the stream cannot be resynchronised.
    #[error("framing error: {0}")]
    Protocol(#[from] FramingError),
}

impl FrameError {
    /// True when the peer went away rather than broke the protocol.
    pub fn is_peer_gone(&self) -> bool {
        !matches!(self, FrameError::Protocol(_))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Between frames.
    Idle,
    /// Header block read; waiting for `len` body bytes.
    Body { len: usize },
    /// Skipping the body of an over-limit header frame; `head_wanted` bytes
    /// of it are still to be kept in `head` before it is reported.
    Discard { remaining: u64, declared: u64, head_wanted: usize },
    /// Skipping the rest of an over-limit line.
    DiscardLine { seen: u64 },
    /// Sync was lost; everything after is dropped.
    Failed,
}

/// Incremental decoder for one direction of one connection.
#[derive(Debug)]
pub struct FrameDecoder {
    framing: Option<Framing>,
    limit: usize,
    state: State,
    /// How many leading bytes of an over-limit frame to report.
    head_len: usize,
    /// The head of an over-limit frame being discarded.
    head: BytesMut,
    /// How far the current header block or line has been scanned, so that a
    /// frame arriving one byte at a time is not rescanned from the start.
    scanned: usize,
}

impl FrameDecoder {
    /// A decoder that detects the framing from the first non-whitespace byte,
    /// as an Editor does for each new connection.
    pub fn detect(limit: usize) -> Self {
        FrameDecoder { framing: None, limit, state: State::Idle, head_len: 0, head: BytesMut::new(), scanned: 0 }
    }

    /// A decoder for a known framing, as a client uses.
    pub fn new(framing: Framing, limit: usize) -> Self {
        FrameDecoder {
            framing: Some(framing),
            limit,
            state: State::Idle,
            head_len: 0,
            head: BytesMut::new(),
            scanned: 0,
        }
    }

    /// Keep the first `bytes` of an over-limit frame and report them in
    /// [`Frame::TooLarge`]. A header frame is then reported once that much of
    /// its body has arrived rather than at once; clients use this to match a
    /// discarded response to its request, Editors do not (they answer at once).
    pub fn keep_head(mut self, bytes: usize) -> Self {
        self.head_len = bytes;
        self
    }

    /// The framing in use: `None` until a detecting decoder has seen a byte.
    pub fn framing(&self) -> Option<Framing> {
        self.framing
    }

    /// The frame size limit in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Decodes the next frame from `src`, consuming what it uses. `Ok(None)`
    /// means more bytes are needed. Bytes of an over-limit frame are consumed
    /// (dropped) as they arrive, so `src` never holds more than one frame within
    /// the limit plus a header block.
    pub fn decode_frame(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        loop {
            match self.state {
                State::Failed => {
                    src.clear();
                    return Ok(None);
                }
                State::Discard { remaining, declared, head_wanted } => {
                    if head_wanted > 0 {
                        let n = head_wanted.min(src.len());
                        self.head.extend_from_slice(&src[..n]);
                        src.advance(n);
                        let (remaining, head_wanted) = (remaining - n as u64, head_wanted - n);
                        self.state = State::Discard { remaining, declared, head_wanted };
                        if head_wanted > 0 {
                            return Ok(None);
                        }
                        let head = std::mem::take(&mut self.head).freeze();
                        if remaining == 0 {
                            self.state = State::Idle;
                        }
                        return Ok(Some(Frame::TooLarge { size: declared, limit: self.limit, head }));
                    }
                    let n = remaining.min(src.len() as u64);
                    src.advance(n as usize);
                    let remaining = remaining - n;
                    if remaining > 0 {
                        self.state = State::Discard { remaining, declared, head_wanted: 0 };
                        return Ok(None);
                    }
                    self.state = State::Idle;
                }
                State::DiscardLine { seen } => match memchr(b'\n', src) {
                    Some(pos) => {
                        src.advance(pos + 1);
                        self.state = State::Idle;
                    }
                    None => {
                        self.state = State::DiscardLine { seen: seen + src.len() as u64 };
                        src.clear();
                        return Ok(None);
                    }
                },
                State::Body { len } => {
                    if src.len() < len {
                        src.reserve(len - src.len());
                        return Ok(None);
                    }
                    self.state = State::Idle;
                    return Ok(Some(Frame::Body(src.split_to(len).freeze())));
                }
                State::Idle => {
                    let framing = match self.framing {
                        Some(framing) => framing,
                        None => match src.iter().position(|b| !b.is_ascii_whitespace()) {
                            Some(pos) => {
                                let framing = Framing::detect(src[pos]);
                                self.framing = Some(framing);
                                framing
                            }
                            None => {
                                src.clear();
                                return Ok(None);
                            }
                        },
                    };
                    let result = match framing {
                        Framing::Header => self.decode_header_block(src),
                        Framing::Newline => self.decode_line(src),
                    };
                    match result {
                        Ok(Some(Frame::Body(body))) => return Ok(Some(Frame::Body(body))),
                        Ok(Some(too_large)) => return Ok(Some(too_large)),
                        // A header block was read: loop to read the body.
                        Ok(None) if self.state != State::Idle => continue,
                        Ok(None) => return Ok(None),
                        Err(err) => {
                            self.state = State::Failed;
                            src.clear();
                            return Err(FrameError::Protocol(err));
                        }
                    }
                }
            }
        }
    }

    /// Called when the stream ended: `Ok(None)` for a clean end between frames,
    /// otherwise [`FrameError::UnexpectedEof`].
    pub fn decode_frame_eof(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        if let Some(frame) = self.decode_frame(src)? {
            return Ok(Some(frame));
        }
        let buffered = match self.state {
            State::Idle | State::Failed => src.iter().filter(|b| !b.is_ascii_whitespace()).count() as u64,
            State::Body { .. } => src.len() as u64,
            State::Discard { remaining, declared, .. } => declared - remaining,
            State::DiscardLine { seen } => seen,
        };
        let idle = matches!(self.state, State::Idle | State::Failed);
        src.clear();
        if idle && buffered == 0 {
            return Ok(None);
        }
        self.state = State::Idle;
        self.scanned = 0;
        Err(FrameError::UnexpectedEof { buffered: buffered.max(1) })
    }

    /// Reads a header block. `Ok(None)` with `state == Idle` means more bytes are
    /// needed; a state change means the block was consumed.
    fn decode_header_block(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FramingError> {
        if self.scanned == 0 {
            let skip = src.iter().take_while(|b| b.is_ascii_whitespace()).count();
            src.advance(skip);
            if src.is_empty() {
                return Ok(None);
            }
        }
        // Validate complete lines as they arrive, and the name part of the line
        // still arriving, so garbage is refused at once rather than after 8 KiB.
        let mut line_start = last_line_start(src, self.scanned);
        let mut pos = self.scanned;
        while pos < src.len() {
            if src[pos] == b'\n' {
                // The name first, as when the line arrives in pieces: the
                // same bytes give the same error however they are read.
                check_partial_header_line(&src[line_start..pos])?;
                if pos == 0 || src[pos - 1] != b'\r' {
                    return Err(FramingError::BareLineFeed);
                }
                if pos - 1 == line_start {
                    // Blank line: end of the header block.
                    let header = &src[..line_start];
                    let len = content_length(header)?;
                    src.advance(pos + 1);
                    self.scanned = 0;
                    if len > self.limit as u64 {
                        let head_wanted = (self.head_len as u64).min(len) as usize;
                        self.state = State::Discard { remaining: len, declared: len, head_wanted };
                        if head_wanted == 0 {
                            return Ok(Some(Frame::TooLarge { size: len, limit: self.limit, head: Bytes::new() }));
                        }
                        // Reported once its head has arrived.
                        return Ok(None);
                    }
                    self.state = State::Body { len: len as usize };
                    return Ok(None);
                }
                check_header_line(&src[line_start..pos - 1])?;
                line_start = pos + 1;
            }
            pos += 1;
        }
        check_partial_header_line(&src[line_start..])?;
        if src.len() > MAX_HEADER_BYTES {
            return Err(FramingError::HeaderTooLong);
        }
        self.scanned = src.len();
        Ok(None)
    }

    /// Reads one line of newline framing.
    fn decode_line(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FramingError> {
        loop {
            if self.scanned == 0 {
                let skip = src.iter().take_while(|b| b.is_ascii_whitespace()).count();
                src.advance(skip);
            }
            match memchr(b'\n', &src[self.scanned..]) {
                Some(offset) => {
                    let end = self.scanned + offset;
                    self.scanned = 0;
                    let mut line = src.split_to(end + 1);
                    line.truncate(end);
                    if line.last() == Some(&b'\r') {
                        line.truncate(end - 1);
                    }
                    if line.len() > self.limit {
                        let head = line.split_to(self.head_len.min(line.len())).freeze();
                        return Ok(Some(Frame::TooLarge {
                            size: line.len() as u64 + head.len() as u64,
                            limit: self.limit,
                            head,
                        }));
                    }
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    return Ok(Some(Frame::Body(line.freeze())));
                }
                None if src.len() > self.limit => {
                    let seen = src.len() as u64;
                    let head = Bytes::copy_from_slice(&src[..self.head_len.min(src.len())]);
                    src.clear();
                    self.scanned = 0;
                    self.state = State::DiscardLine { seen };
                    return Ok(Some(Frame::TooLarge { size: seen, limit: self.limit, head }));
                }
                None => {
                    self.scanned = src.len();
                    return Ok(None);
                }
            }
        }
    }
}

impl tokio_util::codec::Decoder for FrameDecoder {
    type Item = Frame;
    type Error = FrameError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        self.decode_frame(src)
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        self.decode_frame_eof(src)
    }
}

/// Error from [`encode_frame`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("a body sent in newline framing must not contain a raw newline")]
    RawNewline,
}

/// Appends one frame holding `body` to `dst`. Header framing writes exactly
/// `Content-Length: N\r\n\r\n` and the body; newline framing the body and `\n`.
pub fn encode_frame(framing: Framing, body: &[u8], dst: &mut BytesMut) -> Result<(), EncodeError> {
    match framing {
        Framing::Header => {
            dst.reserve(body.len() + 32);
            dst.put_slice(b"Content-Length: ");
            dst.put_slice(body.len().to_string().as_bytes());
            dst.put_slice(b"\r\n\r\n");
            dst.put_slice(body);
        }
        Framing::Newline => {
            if memchr(b'\n', body).is_some() {
                return Err(EncodeError::RawNewline);
            }
            dst.reserve(body.len() + 1);
            dst.put_slice(body);
            dst.put_u8(b'\n');
        }
    }
    Ok(())
}

/// [`encode_frame`] into a fresh buffer.
pub fn frame_bytes(framing: Framing, body: &[u8]) -> Result<Bytes, EncodeError> {
    let mut dst = BytesMut::new();
    encode_frame(framing, body, &mut dst)?;
    Ok(dst.freeze())
}

/// Encoder of already-serialised bodies, for `FramedWrite`.
#[derive(Clone, Copy, Debug)]
pub struct FrameEncoder(pub Framing);

impl tokio_util::codec::Encoder<Bytes> for FrameEncoder {
    type Error = io::Error;
    fn encode(&mut self, body: Bytes, dst: &mut BytesMut) -> io::Result<()> {
        encode_frame(self.0, &body, dst).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
    }
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}

/// Start of the line containing position `pos` (0 or just after a `\n`).
fn last_line_start(src: &[u8], pos: usize) -> usize {
    src[..pos].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
}

/// RFC 9110 token characters, which header names are made of.
fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn check_header_line(line: &[u8]) -> Result<(), FramingError> {
    let malformed = || FramingError::MalformedHeaderLine(String::from_utf8_lossy(line).into_owned());
    let colon = memchr(b':', line).ok_or_else(malformed)?;
    let name = trim(&line[..colon]);
    if name.is_empty() || !name.iter().all(|&b| is_token_char(b)) || line.contains(&b'\r') {
        return Err(malformed());
    }
    Ok(())
}

/// Checks the part of a header line received so far: its name must be a token.
fn check_partial_header_line(partial: &[u8]) -> Result<(), FramingError> {
    let name_part = match memchr(b':', partial) {
        Some(colon) => &partial[..colon],
        None => partial.strip_suffix(b"\r").unwrap_or(partial),
    };
    let ok = name_part.iter().all(|&b| is_token_char(b) || b == b' ' || b == b'\t');
    if !ok {
        return Err(FramingError::MalformedHeaderLine(String::from_utf8_lossy(partial).into_owned()));
    }
    Ok(())
}

/// The Content-Length of a complete header block (lines separated by `\r\n`,
/// the final `\r\n\r\n` excluded; every line already checked).
fn content_length(block: &[u8]) -> Result<u64, FramingError> {
    let mut found: Option<u64> = None;
    for line in block.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let colon = memchr(b':', line).unwrap_or(line.len());
        if !trim(&line[..colon]).eq_ignore_ascii_case(b"content-length") {
            continue;
        }
        let raw = trim(&line[(colon + 1).min(line.len())..]);
        let invalid = || FramingError::InvalidContentLength(String::from_utf8_lossy(raw).into_owned());
        if raw.is_empty() || !raw.iter().all(u8::is_ascii_digit) {
            return Err(invalid());
        }
        let value: u64 = std::str::from_utf8(raw).ok().and_then(|s| s.parse().ok()).ok_or_else(invalid)?;
        match found {
            Some(first) if first != value => {
                return Err(FramingError::ConflictingContentLength { first, second: value });
            }
            _ => found = Some(value),
        }
    }
    found.ok_or(FramingError::MissingContentLength)
}

fn trim(bytes: &[u8]) -> &[u8] {
    let is_space = |b: &u8| *b == b' ' || *b == b'\t';
    let start = bytes.iter().position(|b| !is_space(b)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !is_space(b)).map_or(start, |i| i + 1);
    &bytes[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: usize = 1024;

    fn decode_all(decoder: &mut FrameDecoder, input: &[u8]) -> Vec<Result<Frame, String>> {
        let mut buf = BytesMut::from(input);
        let mut out = Vec::new();
        loop {
            match decoder.decode_frame(&mut buf) {
                Ok(Some(frame)) => out.push(Ok(frame)),
                Ok(None) => break,
                Err(err) => {
                    out.push(Err(err.to_string()));
                    break;
                }
            }
        }
        out
    }

    fn body(s: &str) -> Result<Frame, String> {
        Ok(Frame::Body(Bytes::copy_from_slice(s.as_bytes())))
    }

    #[test]
    fn header_frame_round_trip() {
        let bytes = frame_bytes(Framing::Header, br#"{"a":1}"#).unwrap();
        assert_eq!(&bytes[..], b"Content-Length: 7\r\n\r\n{\"a\":1}");
        let mut dec = FrameDecoder::new(Framing::Header, LIMIT);
        assert_eq!(decode_all(&mut dec, &bytes), vec![body(r#"{"a":1}"#)]);
    }

    #[test]
    fn content_length_counts_bytes_not_characters() {
        let text = r#"{"m":"héllo ☃"}"#;
        let bytes = frame_bytes(Framing::Header, text.as_bytes()).unwrap();
        assert!(bytes.starts_with(format!("Content-Length: {}\r\n", text.len()).as_bytes()));
        assert_ne!(text.len(), text.chars().count());
        let mut dec = FrameDecoder::new(Framing::Header, LIMIT);
        assert_eq!(decode_all(&mut dec, &bytes), vec![body(text)]);
    }

    #[test]
    fn header_variants_are_accepted() {
        let cases: &[&[u8]] = &[
            b"content-length: 2\r\n\r\n{}",
            b"CONTENT-LENGTH:2\r\n\r\n{}",
            b"Content-Length:   2   \r\n\r\n{}",
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}",
            b"Content-Length: 2\r\nX-Extra: whatever: with colons\r\n\r\n{}",
            b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
            b"Content-Length: 002\r\n\r\n{}",
            b"\r\n\r\nContent-Length: 2\r\n\r\n{}",
        ];
        for case in cases {
            let mut dec = FrameDecoder::new(Framing::Header, LIMIT);
            assert_eq!(decode_all(&mut dec, case), vec![body("{}")], "{}", String::from_utf8_lossy(case));
        }
    }

    #[test]
    fn bad_header_blocks_are_framing_errors() {
        let cases: &[(&[u8], FramingError)] = &[
            (b"X-Other: 1\r\n\r\n{}", FramingError::MissingContentLength),
            (
                b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
                FramingError::ConflictingContentLength { first: 2, second: 3 },
            ),
            (b"Content-Length: abc\r\n\r\n", FramingError::InvalidContentLength("abc".into())),
            (b"Content-Length: -1\r\n\r\n", FramingError::InvalidContentLength("-1".into())),
            (b"Content-Length: +1\r\n\r\n", FramingError::InvalidContentLength("+1".into())),
            (b"Content-Length: 1.5\r\n\r\n", FramingError::InvalidContentLength("1.5".into())),
            (b"Content-Length: \r\n\r\n", FramingError::InvalidContentLength("".into())),
            (
                b"Content-Length: 99999999999999999999999\r\n\r\n",
                FramingError::InvalidContentLength("99999999999999999999999".into()),
            ),
            (b"Content-Length: 2\n\n{}", FramingError::BareLineFeed),
            (b"garbage line\r\n", FramingError::MalformedHeaderLine("garbage line".into())),
            (b"hello\x00world", FramingError::MalformedHeaderLine("hello\u{0}world".into())),
        ];
        for (input, expected) in cases {
            let mut dec = FrameDecoder::new(Framing::Header, LIMIT);
            let mut buf = BytesMut::from(*input);
            match dec.decode_frame(&mut buf) {
                Err(FrameError::Protocol(err)) => {
                    assert_eq!(&err, expected, "{}", String::from_utf8_lossy(input))
                }
                other => panic!("{}: expected {expected:?}, got {other:?}", String::from_utf8_lossy(input)),
            }
            // Sync is lost: later bytes are dropped, never decoded.
            let mut more = BytesMut::from(&b"Content-Length: 2\r\n\r\n{}"[..]);
            assert!(matches!(dec.decode_frame(&mut more), Ok(None)));
        }
    }

    #[test]
    fn garbage_is_refused_before_a_full_header_block() {
        // Newline-framed JSON sent to a header-framed reader fails at once.
        let mut dec = FrameDecoder::new(Framing::Header, LIMIT);
        let mut buf = BytesMut::from(&b"{\"jsonrpc\""[..]);
        assert!(matches!(dec.decode_frame(&mut buf), Err(FrameError::Protocol(FramingError::MalformedHeaderLine(_)))));
    }

    #[test]
    fn header_block_without_end_is_bounded() {
        let mut dec = FrameDecoder::new(Framing::Header, LIMIT);
        let mut input = b"Content-Length: 2\r\n".to_vec();
        while input.len() <= MAX_HEADER_BYTES {
            input.extend_from_slice(b"X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
        }
        let mut buf = BytesMut::from(&input[..]);
        assert!(matches!(dec.decode_frame(&mut buf), Err(FrameError::Protocol(FramingError::HeaderTooLong))));
    }

    #[test]
    fn over_limit_header_frame_is_skipped_without_buffering() {
        // An Editor's decoder reports at once.
        let mut dec = FrameDecoder::new(Framing::Header, 16);
        let mut buf = BytesMut::from(&b"Content-Length: 999999\r\n\r\n"[..]);
        assert_eq!(
            dec.decode_frame(&mut buf).unwrap(),
            Some(Frame::TooLarge { size: 999_999, limit: 16, head: Bytes::new() })
        );
        // A client's keeps the head.
        let mut dec = FrameDecoder::new(Framing::Header, 16).keep_head(HEAD_BYTES);
        let big = vec![b'x'; 100];
        let mut buf = BytesMut::new();
        encode_frame(Framing::Header, &big, &mut buf).unwrap();
        let header_len = buf.len() - big.len();
        // Only the header and a few body bytes have arrived.
        let mut head = buf.split_to(header_len + 10);
        assert_eq!(dec.decode_frame(&mut head).unwrap(), None, "reported once its head is in");
        assert!(head.is_empty(), "discarded bytes must not stay buffered");
        let mut rest = buf.split_to(90);
        assert_eq!(
            dec.decode_frame(&mut rest).unwrap(),
            Some(Frame::TooLarge { size: 100, limit: 16, head: Bytes::from(vec![b'x'; 100]) })
        );
        assert!(rest.is_empty());
        buf.extend_from_slice(&frame_bytes(Framing::Header, b"{}").unwrap());
        assert_eq!(decode_all(&mut dec, &buf), vec![body("{}")]);
    }

    #[test]
    fn over_limit_line_is_skipped_and_the_next_line_decodes() {
        let mut dec = FrameDecoder::new(Framing::Newline, 16).keep_head(HEAD_BYTES);
        let mut buf = BytesMut::from(&[b'a'; 40][..]);
        assert_eq!(
            dec.decode_frame(&mut buf).unwrap(),
            Some(Frame::TooLarge { size: 40, limit: 16, head: Bytes::from(vec![b'a'; 40]) })
        );
        assert!(buf.is_empty());
        buf.extend_from_slice(b"aaaa\n{\"ok\":true}\n");
        assert_eq!(decode_all(&mut dec, &buf), vec![body(r#"{"ok":true}"#)]);
        // A too-long line arriving whole is also rejected.
        let mut dec = FrameDecoder::new(Framing::Newline, 4).keep_head(HEAD_BYTES);
        assert_eq!(
            decode_all(&mut dec, b"{\"long\":1}\n{}\n"),
            vec![Ok(Frame::TooLarge { size: 10, limit: 4, head: Bytes::from_static(b"{\"long\":1}") }), body("{}")]
        );
    }

    #[test]
    fn newline_framing_drops_cr_and_blank_lines() {
        let mut dec = FrameDecoder::new(Framing::Newline, LIMIT);
        assert_eq!(
            decode_all(&mut dec, b"{\"a\":1}\r\n\n  \r\n{\"b\":2}\n"),
            vec![body(r#"{"a":1}"#), body(r#"{"b":2}"#)]
        );
    }

    #[test]
    fn detection_uses_first_non_whitespace_byte() {
        let mut dec = FrameDecoder::detect(LIMIT);
        assert_eq!(dec.framing(), None);
        assert_eq!(decode_all(&mut dec, b" \r\n\t"), vec![]);
        assert_eq!(dec.framing(), None);
        assert_eq!(decode_all(&mut dec, b"  {\"a\":1}\n"), vec![body(r#"{"a":1}"#)]);
        assert_eq!(dec.framing(), Some(Framing::Newline));

        let mut dec = FrameDecoder::detect(LIMIT);
        assert_eq!(decode_all(&mut dec, b"Content-Length: 2\r\n\r\n{}"), vec![body("{}")]);
        assert_eq!(dec.framing(), Some(Framing::Header));
    }

    #[test]
    fn eof_between_frames_is_clean_and_mid_frame_is_an_error() {
        let mut dec = FrameDecoder::new(Framing::Header, LIMIT);
        let mut buf = BytesMut::from(&b"Content-Length: 2\r\n\r\n{}\r\n"[..]);
        assert_eq!(dec.decode_frame(&mut buf).unwrap(), Some(Frame::Body(Bytes::from_static(b"{}"))));
        assert!(dec.decode_frame_eof(&mut buf).unwrap().is_none());

        for partial in [&b"Content-Len"[..], b"Content-Length: 5\r\n\r\n{\"a"] {
            let mut dec = FrameDecoder::new(Framing::Header, LIMIT);
            let mut buf = BytesMut::from(partial);
            assert!(dec.decode_frame(&mut buf).unwrap().is_none());
            let err = dec.decode_frame_eof(&mut buf).unwrap_err();
            assert!(matches!(err, FrameError::UnexpectedEof { .. }) && err.is_peer_gone(), "{err}");
        }
        let mut dec = FrameDecoder::new(Framing::Newline, LIMIT);
        let mut buf = BytesMut::from(&b"{\"a\":"[..]);
        assert!(dec.decode_frame(&mut buf).unwrap().is_none());
        assert!(matches!(dec.decode_frame_eof(&mut buf), Err(FrameError::UnexpectedEof { buffered: 5 })));
    }

    #[test]
    fn split_at_every_position_decodes_the_same() {
        let text = r#"{"jsonrpc":"2.0","id":"é-1","method":"ping","params":{"Message":"日本語 ☃"}}"#;
        for framing in [Framing::Header, Framing::Newline] {
            let mut input = BytesMut::new();
            encode_frame(framing, text.as_bytes(), &mut input).unwrap();
            encode_frame(framing, b"{}", &mut input).unwrap();
            for cut in 0..=input.len() {
                let mut dec = FrameDecoder::new(framing, LIMIT);
                let mut buf = BytesMut::new();
                let mut out = Vec::new();
                for part in [&input[..cut], &input[cut..]] {
                    buf.extend_from_slice(part);
                    while let Some(frame) = dec.decode_frame(&mut buf).unwrap() {
                        out.push(frame);
                    }
                }
                assert_eq!(
                    out,
                    vec![Frame::Body(Bytes::copy_from_slice(text.as_bytes())), Frame::Body(Bytes::from_static(b"{}"))],
                    "{framing} cut at {cut}"
                );
            }
        }
    }

    #[test]
    fn newline_encoder_refuses_raw_newlines() {
        assert_eq!(frame_bytes(Framing::Newline, b"{\"a\":\n1}"), Err(EncodeError::RawNewline));
        assert_eq!(&frame_bytes(Framing::Newline, br#"{"a":"\n"}"#).unwrap()[..], b"{\"a\":\"\\n\"}\n");
    }
}
