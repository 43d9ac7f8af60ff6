//! How the simulated Editor cuts a connection's bytes into frames: the
//! editor link's decoder, or one of the broken readers of the framing
//! defects ([`Decoding`]). (`Decoding::FirstFramePerRead` is carried out
//! by the connection, which drops what a read left over.)

use bytes::BytesMut;
use editor_link::{
    connection::DecodeFrames,
    framing::{Frame, FrameDecoder, FrameError, Framing, FramingError},
};

use crate::editor::model::Decoding;

/// The editor link's frame decoder, cutting frames as the Editor's
/// [`Decoding`] says.
pub(super) struct PolicyDecoder {
    inner: FrameDecoder,
    decoding: Decoding,
}

impl PolicyDecoder {
    pub(super) fn new(decoding: Decoding, limit: usize) -> PolicyDecoder {
        PolicyDecoder { inner: FrameDecoder::detect(limit), decoding }
    }

    /// The naive header reader of the two header defects (the real one is
    /// the bridge library's decoder).
    fn decode_naive(&self, src: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        let Some(end) = src.windows(4).position(|w| w == b"\r\n\r\n") else { return Ok(None) };
        let head = String::from_utf8_lossy(&src[..end]).into_owned();
        let value = if self.decoding == Decoding::ExactHeader {
            head.strip_prefix("Content-Length: ").filter(|v| !v.contains(['\r', '\n', ' ']))
        } else {
            head.split("\r\n").find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.trim().eq_ignore_ascii_case("content-length").then_some(value.trim())
            })
        };
        let declared: usize = value
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| FrameError::Protocol(FramingError::MalformedHeaderLine(head.clone())))?;
        let start = end + 4;
        let length = if self.decoding == Decoding::LengthInCharacters {
            // Walk `declared` characters; wait while they have not all come.
            let text = String::from_utf8_lossy(&src[start..]);
            match text.char_indices().nth(declared) {
                Some((at, _)) => at,
                None if text.chars().count() == declared => src.len() - start,
                None => return Ok(None),
            }
        } else {
            declared
        };
        if src.len() < start + length {
            return Ok(None);
        }
        let mut frame = src.split_to(start + length);
        Ok(Some(Frame::Body(frame.split_off(start).freeze())))
    }
}

impl DecodeFrames for PolicyDecoder {
    fn framing(&self) -> Option<Framing> {
        self.inner.framing()
    }
}

impl tokio_util::codec::Decoder for PolicyDecoder {
    type Item = Frame;
    type Error = FrameError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        let header_framing = src.iter().find(|b| !b.is_ascii_whitespace()).is_some_and(|b| *b != b'{');
        let naive = matches!(self.decoding, Decoding::ExactHeader | Decoding::LengthInCharacters);
        if naive && header_framing {
            return self.decode_naive(src);
        }
        let frame = self.inner.decode_frame(src)?;
        if frame.is_none() && self.decoding == Decoding::DropsPartialFrames && !src.is_empty() {
            src.clear();
            self.inner = match self.inner.framing() {
                Some(framing) => FrameDecoder::new(framing, self.inner.limit()),
                None => FrameDecoder::detect(self.inner.limit()),
            };
        }
        Ok(frame)
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        self.inner.decode_frame_eof(src)
    }
}
