//! Byte edits of valid documents for property tests: whatever the edit,
//! a reader must not panic.

use proptest::prelude::*;

/// One edit of a valid document: cut it short, drop a range, insert bytes or
/// overwrite one.
#[derive(Debug, Clone)]
pub enum Mutation {
    Truncate(usize),
    Delete(usize, usize),
    Insert(usize, Vec<u8>),
    Overwrite(usize, u8),
}

pub fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), 1usize..64).prop_map(|(at, n)| Mutation::Delete(at, n)),
        (
            any::<usize>(),
            proptest::collection::vec(any::<u8>(), 1..16)
        )
            .prop_map(|(at, b)| Mutation::Insert(at, b)),
        (
            any::<usize>(),
            prop::sample::select(b"{}[]\",:0\\\n\xff\xc3 ".to_vec())
        )
            .prop_map(|(at, b)| Mutation::Overwrite(at, b)),
    ]
}

pub fn apply(doc: &[u8], edits: &[Mutation]) -> Vec<u8> {
    let mut out = doc.to_vec();
    for edit in edits {
        let len = out.len().max(1);
        match edit {
            Mutation::Truncate(at) => out.truncate(at % len),
            Mutation::Delete(at, n) => {
                let start = at % len;
                let end = (start + n).min(out.len());
                if start < end {
                    out.drain(start..end);
                }
            }
            Mutation::Insert(at, bytes) => {
                let at = at % (out.len() + 1);
                out.splice(at..at, bytes.iter().copied());
            }
            Mutation::Overwrite(at, b) => {
                if !out.is_empty() {
                    let i = at % out.len();
                    out[i] = *b;
                }
            }
        }
    }
    out
}
