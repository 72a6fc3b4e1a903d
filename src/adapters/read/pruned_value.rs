//! A JSON value read with only the members a format looks at: the rest of
//! each object is skipped as it is parsed, never built, so an export's
//! scores, costs and settings cost a scan rather than a map each.

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// The members of a format's objects that its reader looks at.
pub(crate) struct Members {
    /// Members read whole.
    pub kept: &'static [&'static str],
    /// Members whose objects (or lists of objects) are pruned to the
    /// members given with them: these same ones for objects of the format
    /// nested in each other, others for an object read for a few names.
    pub within: &'static [(&'static str, &'static Members)],
}

/// The names of `parts` in one list of `N`, at compile time: a format's
/// member list made of the name lists its lookups use.
pub(crate) const fn names<const N: usize>(parts: &[&[&'static str]]) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut k, mut i) = (0, 0);
    while i < parts.len() {
        let mut j = 0;
        while j < parts[i].len() {
            out[k] = parts[i][j];
            k += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(k == N, "the names do not fill the list");
    out
}

/// Every JSON value of every file under `tests/data/export-samples/{dir}`
/// (a document, or each line), with its file: real exports to check a
/// member list against.
#[cfg(test)]
pub(crate) fn export_values(dir: &str) -> Vec<(std::path::PathBuf, Value)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/export-samples")
        .join(dir);
    let mut found = Vec::new();
    for sub in std::fs::read_dir(root).unwrap() {
        for file in std::fs::read_dir(sub.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            for value in serde_json::Deserializer::from_str(&text).into_iter() {
                found.push((path.clone(), value.unwrap()));
            }
        }
    }
    found
}

/// What a member's key says to do with its value.
enum Member {
    Within(String, &'static Members),
    Kept(String),
    Skipped,
}

impl Members {
    /// `text` parsed with only these members kept; `None` when simd-json
    /// cannot read it (the caller then parses it in full, for serde_json's
    /// words on what is wrong). `text` is overwritten (simd-json parses in
    /// place).
    pub(crate) fn parse(&'static self, text: &mut [u8]) -> Option<Value> {
        let mut de = simd_json::Deserializer::from_slice(text).ok()?;
        Pruned(Some(self)).deserialize(&mut de).ok()
    }

    fn member(&self, key: &str) -> Member {
        if let Some((_, members)) = self.within.iter().find(|(name, _)| *name == key) {
            Member::Within(key.to_string(), members)
        } else if self.kept.contains(&key) {
            Member::Kept(key.to_string())
        } else {
            Member::Skipped
        }
    }
}

/// A value at a place the format's objects stand (the top, a member
/// pruned within, an item of a list there), pruned to its members; or,
/// with none, a kept member's value read whole.
#[derive(Clone, Copy)]
struct Pruned(Option<&'static Members>);

impl<'de> DeserializeSeed<'de> for Pruned {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Pruned {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let Some(members) = self.0 else {
            // Read whole, as serde_json's `Value` reads it, but with room
            // for every member made at once: growing the map member by
            // member was a tenth of the time of a Langfuse export.
            let mut out = Map::with_capacity(map.size_hint().unwrap_or(0));
            while let Some(key) = map.next_key::<String>()? {
                out.insert(key, map.next_value_seed(self)?);
            }
            return Ok(Value::Object(out));
        };
        let mut out = Map::new();
        while let Some(member) = map.next_key_seed(KeyOf(members))? {
            // Of duplicate keys the last wins, as in a parsed map.
            match member {
                Member::Within(key, members) => {
                    out.insert(key, map.next_value_seed(Pruned(Some(members)))?);
                }
                Member::Kept(key) => {
                    out.insert(key, map.next_value_seed(Pruned(None))?);
                }
                Member::Skipped => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(self)? {
            out.push(item);
        }
        Ok(Value::Array(out))
    }

    // Scalars as serde_json's own `Value` reads them.
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

/// Reads a key and says what to do with its value, allocating only for
/// the members kept.
struct KeyOf(&'static Members);

impl<'de> DeserializeSeed<'de> for KeyOf {
    type Value = Member;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Member, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyOf {
    type Value = Member;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a member's name")
    }

    fn visit_str<E>(self, key: &str) -> Result<Member, E> {
        Ok(self.0.member(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    static MEMBERS: Members = Members {
        kept: &["id", "input"],
        within: &[
            ("trace", &MEMBERS),
            ("observations", &MEMBERS),
            ("meta", &META),
        ],
    };

    static META: Members = Members {
        kept: &["name"],
        within: &[("attributes", &META)],
    };

    fn pruned(text: &str) -> Option<Value> {
        MEMBERS.parse(&mut text.as_bytes().to_vec())
    }

    #[test]
    fn only_named_members_are_kept_and_nested_ones_are_pruned_too() {
        let text = r#"{"trace": {"id": "t", "scores": [{"id": 1}], "input": {"deep": {"scores": 2}}},
            "observations": [{"id": "o", "cost": 3}, 7, "x", null, [{"id": 2, "y": 1}]],
            "scores": {"id": 1}, "id": 1.5, "input": [1, {"y": true}]}"#;
        assert_eq!(
            pruned(text).unwrap(),
            json!({"trace": {"id": "t", "input": {"deep": {"scores": 2}}},
                "observations": [{"id": "o"}, 7, "x", null, [{"id": 2}]],
                "id": 1.5, "input": [1, {"y": true}]})
        );
    }

    #[test]
    fn members_within_are_pruned_to_their_own() {
        let text = r#"{"observations": [{"id": "o", "meta": {"name": "a", "id": "x",
            "attributes": {"name": "b", "input": "y", "attributes": {"name": "c", "k": 1}}}}],
            "meta": "text"}"#;
        assert_eq!(
            pruned(text).unwrap(),
            json!({"observations": [{"id": "o", "meta": {"name": "a",
                "attributes": {"name": "b", "attributes": {"name": "c"}}}}], "meta": "text"})
        );
    }

    #[test]
    fn the_last_of_duplicate_keys_wins_and_scalars_stand_alone() {
        assert_eq!(
            pruned(r#"{"id": 1, "id": "two"}"#).unwrap(),
            json!({"id": "two"})
        );
        assert_eq!(pruned("-3").unwrap(), json!(-3));
        assert_eq!(pruned(r#""text""#).unwrap(), json!("text"));
        assert_eq!(
            pruned("18446744073709551615").unwrap(),
            json!(18446744073709551615u64)
        );
    }

    /// A kept member's value is read whole as serde_json reads it, the
    /// order of its members and the last of duplicates included.
    #[test]
    fn a_kept_value_is_read_as_serde_json_reads_it() {
        let input = r#"{"z": 1, "a": {"k": [1.5, -2, 1e3, "s\u00e9", null, true]},
            "z": {"dup": 1, "dup": [{}]}, "e": {}, "big": 18446744073709551615}"#;
        let text = format!(r#"{{"input": {input}}}"#);
        let read = pruned(&text).unwrap();
        let expected: Value = serde_json::from_str(input).unwrap();
        assert_eq!(read["input"], expected);
        assert_eq!(read["input"].to_string(), expected.to_string());
    }

    #[test]
    fn name_lists_are_joined_in_order() {
        const JOINED: [&str; 3] = names(&[&["a", "b"], &[], &["c"]]);
        assert_eq!(JOINED, ["a", "b", "c"]);
    }

    #[test]
    fn what_is_not_json_is_not_read() {
        assert!(pruned(r#"{"id": 1"#).is_none());
        assert!(pruned(r#"{"id": 1} x"#).is_none());
        assert!(pruned("").is_none());
    }
}
