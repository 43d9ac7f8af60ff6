//! Properties of the editor-link framing (protocol §2): any valid message
//! sequence, in either framing, cut anywhere, decodes to the same messages;
//! arbitrary bytes never panic the decoder; an over-limit frame is rejected
//! without being buffered and the decoder recovers for the next frame.

use bytes::BytesMut;
use editor_link::{
    framing::{Frame, FrameDecoder, FrameError, Framing, HEAD_BYTES, MAX_HEADER_BYTES, encode_frame},
    jsonrpc::{ErrorObject, Id, Message, Notification, Request, Response},
};
use proptest::prelude::*;
use serde_json::{Map, Value};

/// Chunk-size bounds of the field notes: 1, 10, 64, 512 and 1024 bytes.
fn chunking() -> impl Strategy<Value = Vec<usize>> {
    prop::sample::select(vec![1usize, 10, 64, 512, 1024]).prop_flat_map(|bound| prop::collection::vec(1..=bound, 1..40))
}

fn text() -> impl Strategy<Value = String> {
    // Any printable characters, multi-byte ones included, and escapes.
    prop_oneof!["\\PC{0,24}", "[a-z\\\\\"\n\t\u{e9}\u{65e5}\u{1F600}]{0,12}"]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            object(inner).prop_map(Value::Object),
        ]
    })
}

fn object(values: impl Strategy<Value = Value>) -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((text(), values), 0..5).prop_map(|pairs| pairs.into_iter().collect())
}

fn id() -> impl Strategy<Value = Id> {
    prop_oneof![any::<i64>().prop_map(Id::from), any::<u64>().prop_map(Id::from), text().prop_map(Id::String)]
}

fn params() -> impl Strategy<Value = Option<Value>> {
    prop::option::of(object(json_value()).prop_map(Value::Object))
}

fn message() -> impl Strategy<Value = Message> {
    let method = "[a-z][a-z/_-]{0,24}";
    prop_oneof![
        (id(), method, params(), any::<Option<bool>>()).prop_map(|(id, method, params, resume)| {
            let mut extra = Map::new();
            if let Some(resume) = resume {
                extra.insert("x-resume".into(), resume.into());
            }
            Message::Request(Request { id, method, params, extra })
        }),
        (method, params()).prop_map(|(method, params)| Message::Notification(Notification { method, params })),
        (prop::option::of(id()), json_value())
            .prop_map(|(id, result)| Message::Response(Response { id, outcome: Ok(result) })),
        (prop::option::of(id()), any::<i32>(), text(), prop::option::of(json_value())).prop_map(
            |(id, code, message, data)| {
                Message::Response(Response { id, outcome: Err(ErrorObject { code: code.into(), message, data }) })
            }
        ),
    ]
}

fn framing() -> impl Strategy<Value = Framing> {
    prop_oneof![Just(Framing::Header), Just(Framing::Newline)]
}

/// Feeds `input` to `decoder` in chunks of the given sizes (cycled), checking
/// after every call that the buffer stays bounded; returns what it decoded.
fn feed(decoder: &mut FrameDecoder, input: &[u8], chunks: &[usize]) -> Result<Vec<Frame>, FrameError> {
    let bound = decoder.limit() + MAX_HEADER_BYTES + chunks.iter().max().copied().unwrap_or(1);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut at = 0;
    for &size in chunks.iter().cycle() {
        if at >= input.len() {
            break;
        }
        let end = (at + size).min(input.len());
        buf.extend_from_slice(&input[at..end]);
        at = end;
        while let Some(frame) = decoder.decode_frame(&mut buf)? {
            out.push(frame);
        }
        assert!(buf.len() <= bound, "decoder buffered {} bytes (bound {bound})", buf.len());
    }
    if let Some(frame) = decoder.decode_frame_eof(&mut buf)? {
        out.push(frame);
    }
    Ok(out)
}

fn encode_all(framing: Framing, messages: &[Message]) -> Vec<u8> {
    let mut out = BytesMut::new();
    for message in messages {
        encode_frame(framing, &message.to_bytes(), &mut out).unwrap();
    }
    out.to_vec()
}

fn bodies_to_messages(frames: Vec<Frame>) -> Vec<Message> {
    frames
        .into_iter()
        .map(|frame| match frame {
            Frame::Body(body) => Message::parse(&body).unwrap(),
            other => panic!("unexpected {other:?}"),
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_chunking_decodes_the_same_messages(
        framing in framing(),
        detect in any::<bool>(),
        messages in prop::collection::vec(message(), 1..8),
        chunks in chunking(),
    ) {
        let input = encode_all(framing, &messages);
        let mut decoder = if detect {
            FrameDecoder::detect(1 << 20)
        } else {
            FrameDecoder::new(framing, 1 << 20)
        };
        let frames = feed(&mut decoder, &input, &chunks).unwrap();
        prop_assert_eq!(decoder.framing(), Some(framing));
        prop_assert_eq!(bodies_to_messages(frames), messages);
    }

    #[test]
    fn cut_at_arbitrary_positions(
        framing in framing(),
        messages in prop::collection::vec(message(), 1..4),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let input = encode_all(framing, &messages);
        let mut positions: Vec<usize> = cuts.iter().map(|c| c.index(input.len() + 1)).collect();
        positions.sort_unstable();
        positions.push(input.len());
        let mut chunks = Vec::new();
        let mut last = 0;
        for p in positions {
            chunks.push(p - last);
            last = p;
        }
        // Zero-length chunks are legal reads too; `feed` wants sizes ≥ 1, so
        // feed by hand here.
        let mut decoder = FrameDecoder::new(framing, 1 << 20);
        let mut buf = BytesMut::new();
        let mut frames = Vec::new();
        let mut at = 0;
        for size in chunks {
            buf.extend_from_slice(&input[at..at + size]);
            at += size;
            while let Some(frame) = decoder.decode_frame(&mut buf).unwrap() {
                frames.push(frame);
            }
        }
        prop_assert!(decoder.decode_frame_eof(&mut buf).unwrap().is_none());
        prop_assert_eq!(bodies_to_messages(frames), messages);
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        mode in prop_oneof![Just(None), framing().prop_map(Some)],
        bytes in prop::collection::vec(any::<u8>(), 0..2048),
        chunks in chunking(),
        limit in 0usize..256,
    ) {
        let mut decoder = match mode {
            Some(framing) => FrameDecoder::new(framing, limit),
            None => FrameDecoder::detect(limit),
        };
        // Errors are fine; panics and unbounded buffering are not.
        let _ = feed(&mut decoder, &bytes, &chunks);
    }

    #[test]
    fn header_like_garbage_never_panics(
        lines in prop::collection::vec(
            prop_oneof![
                "Content-Length: [0-9]{0,25}",
                "[cC][oO][nN][tT][eE][nN][tT]-[lL][eE][nN][gG][tT][hH] *: *[-+0-9a-z ]{0,6}",
                "[A-Za-z-]{0,10}: ?\\PC{0,10}",
                "\\PC{0,12}",
            ],
            0..5,
        ),
        separator in prop_oneof![Just("\r\n"), Just("\n"), Just("\r")],
        body in "\\PC{0,40}",
        chunks in chunking(),
    ) {
        let mut input = lines.join(separator);
        input.push_str("\r\n\r\n");
        input.push_str(&body);
        let mut decoder = FrameDecoder::new(Framing::Header, 64);
        let _ = feed(&mut decoder, input.as_bytes(), &chunks);
    }

    #[test]
    fn over_limit_frame_is_rejected_and_the_decoder_recovers(
        framing in framing(),
        before in prop::collection::vec(message(), 0..3),
        after in prop::collection::vec(message(), 1..3),
        excess in 1usize..5000,
        chunks in chunking(),
    ) {
        let limit = 1 << 14;
        let big = Message::Notification(Notification::new("big", Value::String("x".repeat(limit + excess))));
        let big_len = big.to_bytes().len();
        let mut input = encode_all(framing, &before);
        input.extend(encode_all(framing, std::slice::from_ref(&big)));
        input.extend(encode_all(framing, &after));

        let mut decoder = FrameDecoder::new(framing, limit).keep_head(HEAD_BYTES);
        let frames = feed(&mut decoder, &input, &chunks).unwrap();
        prop_assert_eq!(frames.len(), before.len() + 1 + after.len());
        match &frames[before.len()] {
            Frame::TooLarge { size, limit: reported, head } => {
                prop_assert_eq!(*reported, limit);
                // The head is the start of the discarded body, and no more.
                let big_bytes = big.to_bytes();
                prop_assert_eq!(&head[..], &big_bytes[..HEAD_BYTES.min(big_bytes.len())]);
                match framing {
                    Framing::Header => prop_assert_eq!(*size, big_len as u64),
                    Framing::Newline => prop_assert!(*size > limit as u64 && *size <= big_len as u64),
                }
            }
            other => prop_assert!(false, "expected TooLarge, got {:?}", other),
        }
        let mut rest = frames;
        let after_frames = rest.split_off(before.len() + 1);
        rest.truncate(before.len());
        prop_assert_eq!(bodies_to_messages(rest), before);
        prop_assert_eq!(bodies_to_messages(after_frames), after);
    }
}
