//! Tests of `stream`.

use super::*;
use crate::record::Kind;

fn decode_line(bytes: &[u8]) -> Result<Record<'_>, RecordError> {
    let line = Line {
        bytes,
        text: std::str::from_utf8(bytes).ok(),
        tail: bytes,
    };
    decode(line, Kindless::TRACE_FILE, &mut Scratch::default())
}

#[test]
fn every_event_field_has_its_own_slot() {
    for (i, name) in EVENT_FIELDS.iter().enumerate() {
        assert_eq!(event_field(name), Some(i), "{name}");
    }
    assert_eq!(event_field("kind"), None);
}

#[test]
fn routes_by_kind() {
    assert!(matches!(
        decode_line(br#"{"kind":"header","schema":1,"producer":"x"}"#),
        Ok(Record::Header(_))
    ));
    assert!(matches!(
        decode_line(br#"{"kind":"run","run_id":"r"}"#),
        Ok(Record::Other {
            kind: Some(Kind::Run),
            ..
        })
    ));
    let ev = br#"{"kind":"event","event_id":"e","run_id":"r","turn":1,"agent_id":"a","action_taken":{"tool_name":"t"},"action_succeeded":true,"step":0}"#;
    assert!(matches!(decode_line(ev), Ok(Record::Event { .. })));
}

#[test]
fn a_line_that_is_not_utf8_is_the_only_one_skipped() {
    let ev = |id: &str| {
        format!(
            r#"{{"kind":"event","event_id":"{id}","run_id":"r","turn":1,"agent_id":"a","action_taken":{{"tool_name":"t"}},"action_succeeded":true}}"#
        )
    };
    let mut data = format!("{}\n\n", ev("é1")).into_bytes();
    data.extend_from_slice(b"{\"kind\":\"event\",\"event_id\":\"\xff\"}\r\n");
    data.extend_from_slice(format!("{}\n", ev("e3")).as_bytes());
    let chunk = ChunkReader::new(data.as_slice())
        .next_to_scan()
        .unwrap()
        .unwrap();
    let decoder = RecordLines {
        kindless: Kindless::TRACE_FILE,
        spare: Mutex::new(Vec::new()),
    };
    let decoded = decoder.decode(&mut Scratch::default(), &chunk.chunk.data, &chunk.lines);
    let ids: Vec<(u64, Option<String>)> = decoded
        .iter()
        .map(|(n, r)| match r {
            Ok(Record::Event { event, .. }) => (*n, Some(event.event_id.to_string())),
            Err(RecordError::Unreadable(m)) => (*n, Some(m.clone())),
            _ => (*n, None),
        })
        .collect();
    assert_eq!(
        ids,
        vec![
            (1, Some("é1".to_string())),
            (3, Some("bad event record: not valid UTF-8".to_string())),
            (4, Some("e3".to_string())),
        ]
    );
}

#[test]
fn an_emptied_vector_of_records_keeps_its_memory() {
    let line = br#"{"kind":"run","run_id":"r"}"#.to_vec();
    let mut records: Decoded<'_> = (0..100).map(|n| (n, decode_line(&line))).collect();
    records.clear();
    let (at, room) = (records.as_ptr() as usize, records.capacity());
    let kept = emptied(records);
    assert_eq!((kept.as_ptr() as usize, kept.capacity()), (at, room));
}

#[test]
fn newer_schema_is_fatal_and_bad_lines_skip() {
    assert!(matches!(
        decode_line(br#"{"kind":"header","schema":2}"#),
        Err(RecordError::NewerSchema(_))
    ));
    assert!(matches!(
        decode_line(b"nope"),
        Err(RecordError::Unreadable(_))
    ));
    match decode_line(br#"{"kind":"event","turn":1}"#) {
        Err(RecordError::Unreadable(m)) => assert!(m.contains("missing field \"event_id\""), "{m}"),
        _ => panic!("expected a skip"),
    }
    match decode_line(br#"{"event_id":"e"}"#) {
        Err(RecordError::Unreadable(m)) => assert!(m.contains("triage-parse"), "{m}"),
        _ => panic!("expected a skip"),
    }
}

#[test]
fn a_line_without_a_kind_is_refused_or_passed_as_the_stage_asks() {
    let raw = br#"{"event_id":"e","run_id":"r","turn":1}"#;
    let line = Line {
        bytes: raw,
        text: std::str::from_utf8(raw).ok(),
        tail: raw,
    };
    let refused = decode(
        line,
        Kindless::Refused("give records"),
        &mut Scratch::default(),
    );
    assert!(matches!(refused, Err(RecordError::Unreadable(why)) if why == "give records"));
    let passed = decode(line, Kindless::Passed, &mut Scratch::default());
    assert!(matches!(passed, Ok(Record::Untyped(l)) if l == raw));
}
