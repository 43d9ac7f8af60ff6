//! `fixtures/framing-vectors.json`: the framing vectors every decoder of the
//! project is tested with (the C# one too), each decoded whole, split in two
//! at every position, and one byte at a time.

use bytes::BytesMut;
use editor_link::framing::{Frame, FrameDecoder, FrameError, Framing, FramingError};
use serde_json::Value;

fn vectors() -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/framing-vectors.json");
    let file: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    file["vectors"].as_array().unwrap().clone()
}

fn error_kind(error: &FramingError) -> &'static str {
    match error {
        FramingError::MissingContentLength => "missingContentLength",
        FramingError::ConflictingContentLength { .. } => "conflictingContentLength",
        FramingError::InvalidContentLength(_) => "invalidContentLength",
        FramingError::MalformedHeaderLine(_) => "malformedHeaderLine",
        FramingError::BareLineFeed => "bareLineFeed",
        FramingError::HeaderTooLong => "headerTooLong",
    }
}

/// The events (and how the input ends) when `chunks` arrive one by one.
fn decode(vector: &Value, chunks: &[&[u8]]) -> (Vec<Value>, Option<&'static str>) {
    let limit = vector["limit"].as_u64().unwrap_or(64) as usize;
    let newline = vector["framing"] == "newline";
    let mut decoder = match vector["framing"].as_str().unwrap() {
        "header" => FrameDecoder::new(Framing::Header, limit),
        "newline" => FrameDecoder::new(Framing::Newline, limit),
        _ => FrameDecoder::detect(limit),
    };
    let mut buf = BytesMut::new();
    let mut events = Vec::new();
    let event = |frame: Frame| match frame {
        Frame::Body(body) => serde_json::json!({"body": String::from_utf8(body.to_vec()).unwrap()}),
        // Newline framing: only the kind (the size seen depends on the reads).
        Frame::TooLarge { .. } if newline => serde_json::json!({"tooLarge": "any"}),
        Frame::TooLarge { size, .. } => serde_json::json!({"tooLarge": size}),
    };
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        loop {
            match decoder.decode_frame(&mut buf) {
                Ok(Some(frame)) => events.push(event(frame)),
                Ok(None) => break,
                Err(FrameError::Protocol(e)) => {
                    events.push(serde_json::json!({"framingError": error_kind(&e)}));
                    return (events, None);
                }
                Err(e) => panic!("{}: {e}", vector["name"]),
            }
        }
    }
    let eof = match decoder.decode_frame_eof(&mut buf) {
        Ok(None) => "clean",
        Ok(Some(frame)) => panic!("{}: a frame at the end: {frame:?}", vector["name"]),
        Err(FrameError::UnexpectedEof { .. }) => "unexpected",
        Err(e) => panic!("{}: {e}", vector["name"]),
    };
    (events, Some(eof))
}

#[test]
fn every_vector_decodes_as_written_however_it_is_cut() {
    let vectors = vectors();
    assert!(vectors.len() >= 30);
    for vector in &vectors {
        let name = vector["name"].as_str().unwrap();
        let input = vector["input"].as_str().unwrap().as_bytes();
        let mut expected: Vec<Value> = vector["events"].as_array().unwrap().clone();
        if vector["framing"] == "newline" {
            for e in &mut expected {
                if e.get("tooLarge").is_some() {
                    e["tooLarge"] = "any".into();
                }
            }
        }
        let expected_eof = vector["eof"].as_str();
        let mut cuts: Vec<Vec<&[u8]>> = vec![vec![input], input.chunks(1).collect()];
        for at in 0..=input.len() {
            cuts.push(vec![&input[..at], &input[at..]]);
        }
        for chunks in cuts {
            let (events, eof) = decode(vector, &chunks);
            assert_eq!(events, expected, "{name}, read in {} pieces", chunks.len());
            assert_eq!(eof, expected_eof, "{name}, read in {} pieces", chunks.len());
        }
    }
}
