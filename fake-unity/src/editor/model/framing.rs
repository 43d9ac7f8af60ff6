//! What an Editor's connection accepts, and how it answers what it cannot
//! read (protocol §2).

/// Frames in newline framing (a client whose first byte is `{`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewlineFrames {
    /// Read and answered in newline framing (protocol §2, extension).
    Served,
    /// A framing error is answered and the connection closed (the
    /// `no-newline-framing` defect).
    Refused,
    /// Never answered: a header reader waits for a `\r\n\r\n` that never
    /// comes (uLoopMCP 2.1.1).
    Unanswered,
}

/// A header block that does not parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderError {
    /// A framing error is answered, then the connection closes (protocol §2).
    AnswerAndClose,
    /// Answered, and the connection left open (the `framing-error-keeps-open` defect).
    AnswerAndKeepOpen,
    /// Nothing is answered: the reader waits for more bytes, and the
    /// connection is stuck until the client closes it (uLoopMCP 2.1.1).
    Unanswered,
}

/// A frame over the size limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Oversize {
    /// Answered `frame_too_large`; the connection stays open (protocol §2).
    Answer,
    /// Answered, then closed (the `oversize-closes` defect).
    AnswerAndClose,
    /// Closed without a reply (uLoopMCP 2.1.1).
    Close,
}

/// How a frame's JSON is read as a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// Protocol §3: ids are strings or numbers, `jsonrpc` is "2.0", a
    /// method is a string; anything else is an invalid request.
    Strict,
    /// uLoopMCP 2.1.1: any id is echoed, `jsonrpc` is not checked.
    Lenient,
}

impl Reading {
    pub fn read(self, body: &[u8]) -> Result<editor_link::jsonrpc::Message, editor_link::jsonrpc::ParseFailure> {
        match self {
            Reading::Strict => editor_link::jsonrpc::Message::parse(body),
            Reading::Lenient => editor_link::jsonrpc::Message::parse_lenient(body).map(as_json_net_reads_it),
        }
    }
}

/// uLoopMCP 2.1.1 reads a request with Json.NET, which reads the integer
/// `-0` as 0 (an integer has no negative zero) and echoes `0`: the real
/// Editor answered the id `-0` as `0` (unlike `-0.0`, a float, kept).
fn as_json_net_reads_it(message: editor_link::jsonrpc::Message) -> editor_link::jsonrpc::Message {
    use editor_link::jsonrpc::{Id, IdNumber, Message};
    match message {
        Message::Request(mut request) if matches!(&request.id, Id::Number(n) if n.as_str() == "-0") => {
            if let Some(zero) = IdNumber::parse("0") {
                request.id = Id::Number(zero);
            }
            Message::Request(request)
        }
        other => other,
    }
}

/// How the requests of one connection run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pipelining {
    /// Concurrently, each answered when done (protocol §3).
    Concurrent,
    /// One after the other, answered in order (uLoopMCP 2.1.1 handles one
    /// frame at a time per connection).
    InOrder,
}

/// How header-framed bytes are cut into frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoding {
    /// As protocol §2 says (the editor-link decoder): both Editors.
    Protocol,
    /// Whatever does not make a whole frame in one read is dropped (the
    /// `no-partial-frames` defect).
    DropsPartialFrames,
    /// The header block must be exactly `Content-Length: N` (the
    /// `strict-headers` defect).
    ExactHeader,
    /// Content-Length counts characters, not bytes (the
    /// `length-in-characters` defect).
    LengthInCharacters,
    /// Only the first frame of each read is decoded; the rest is lost (the
    /// `one-frame-per-read` defect).
    FirstFramePerRead,
}

/// The framing of the Editor's replies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyFraming {
    /// The framing the client speaks (protocol §2).
    AsClient,
    /// Newline framing whatever the client speaks (the `wrong-reply-framing` defect).
    AlwaysNewline,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FramingPolicy {
    pub decoding: Decoding,
    pub replies: ReplyFraming,
    pub reading: Reading,
    pub pipelining: Pipelining,
    pub newline: NewlineFrames,
    pub header_error: HeaderError,
    pub oversize: Oversize,
    /// The largest request frame, when the Editor fixes it (uLoopMCP's
    /// 1 MiB); `None`: the configured limit.
    pub limit: Option<usize>,
}

impl FramingPolicy {
    pub const PACKAGE: FramingPolicy = FramingPolicy {
        decoding: Decoding::Protocol,
        replies: ReplyFraming::AsClient,
        reading: Reading::Strict,
        pipelining: Pipelining::Concurrent,
        newline: NewlineFrames::Served,
        header_error: HeaderError::AnswerAndClose,
        oversize: Oversize::Answer,
        limit: None,
    };

    /// `MAX_MESSAGE_SIZE` of uLoopMCP's `FrameParser.cs`.
    pub const ULOOP_LIMIT: usize = 1024 * 1024;

    pub const ULOOP_2_1_1: FramingPolicy = FramingPolicy {
        decoding: Decoding::Protocol,
        replies: ReplyFraming::AsClient,
        reading: Reading::Lenient,
        pipelining: Pipelining::InOrder,
        newline: NewlineFrames::Unanswered,
        header_error: HeaderError::Unanswered,
        oversize: Oversize::Close,
        limit: Some(Self::ULOOP_LIMIT),
    };
}
