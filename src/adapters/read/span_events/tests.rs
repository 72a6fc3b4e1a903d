//! Tests of `span_events`.

use super::attrs::unwrap_json_string;
use super::*;

#[test]
fn json_encoded_twice_is_read_through() {
    let twice = serde_json::to_string(&r#"{"city":"Paris"}"#).unwrap();
    assert_eq!(
        json_in_text(&twice),
        Some(serde_json::json!({"city": "Paris"}))
    );
    assert_eq!(
        json_in_text(r#"{"a":1}"#),
        Some(serde_json::json!({"a": 1}))
    );
    assert_eq!(json_in_text("plain"), None);
    assert_eq!(json_in_text("3"), None);
    let error = serde_json::to_string("Error: no such file").unwrap();
    assert_eq!(unwrap_json_string(&error), "Error: no such file");
    assert_eq!(unwrap_json_string("as is"), "as is");
}
