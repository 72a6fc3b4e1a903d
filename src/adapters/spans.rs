//! What the span formats (`otel`, `otlp`) share: status codes, span kinds,
//! divergence lists and span times.

use crate::timestamp::Timestamp;

/// A span's status code, from the name or number a trace file spells it with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusCode {
    Unset,
    Ok,
    Error,
    /// Neither a known name nor a known number.
    Unknown,
}

impl StatusCode {
    /// Reads the OTLP enum names ("STATUS_CODE_OK"), their short forms
    /// ("OK") in any case, and numbers written as text.
    pub fn from_name(name: &str) -> StatusCode {
        let name = name.trim();
        let short = name
            .get(..12)
            .filter(|p| p.eq_ignore_ascii_case("STATUS_CODE_"))
            .map_or(name, |_| &name[12..]);
        match short.to_ascii_uppercase().as_str() {
            "UNSET" => StatusCode::Unset,
            "OK" => StatusCode::Ok,
            "ERROR" => StatusCode::Error,
            _ => short
                .parse::<f64>()
                .map_or(StatusCode::Unknown, StatusCode::from_number),
        }
    }

    /// The OTLP enum numbers: 0 unset, 1 ok, 2 error.
    pub fn from_number(n: f64) -> StatusCode {
        match n {
            0.0 => StatusCode::Unset,
            1.0 => StatusCode::Ok,
            2.0 => StatusCode::Error,
            _ => StatusCode::Unknown,
        }
    }
}

/// The event `span_kind` an OpenInference span kind stands for.
pub fn kind_from_openinference(kind: &str) -> Option<&'static str> {
    Some(match kind.to_ascii_uppercase().as_str() {
        "AGENT" => "agent",
        "LLM" => "llm",
        "TOOL" => "tool",
        "RETRIEVER" | "RERANKER" | "EMBEDDING" => "retrieval",
        "CHAIN" | "GUARDRAIL" | "EVALUATOR" | "UNKNOWN" => "other",
        _ => return None,
    })
}

/// The event `span_kind` a GenAI `gen_ai.operation.name` stands for.
pub fn kind_from_operation(op: &str) -> Option<&'static str> {
    Some(match op {
        "invoke_agent" | "create_agent" => "agent",
        "chat" | "text_completion" | "generate_content" | "embeddings" | "call_llm" => "llm",
        "execute_tool" => "tool",
        _ => return None,
    })
}

/// Divergence fields written as one comma-separated text.
pub fn split_divergence(text: &str) -> impl Iterator<Item = &str> {
    text.split(',').map(str::trim).filter(|f| !f.is_empty())
}

/// A span time in Unix nanoseconds as an RFC 3339 timestamp; zero (unset in
/// OTLP) is no time.
pub fn timestamp_from_nanos(nanos: i128) -> Option<String> {
    (nanos > 0).then(|| Timestamp::from_unix_nanos(nanos).to_string())
}

/// Unix nanoseconds written as digits (OTLP/JSON writes int64 as text).
pub fn nanos_from_text(text: &str) -> Option<i128> {
    let t = text.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names_and_numbers() {
        for ok in ["STATUS_CODE_OK", "OK", "ok", "1"] {
            assert_eq!(StatusCode::from_name(ok), StatusCode::Ok, "{ok}");
        }
        for unset in ["STATUS_CODE_UNSET", "UNSET", "0"] {
            assert_eq!(StatusCode::from_name(unset), StatusCode::Unset, "{unset}");
        }
        for err in ["STATUS_CODE_ERROR", "ERROR", "Error", "2"] {
            assert_eq!(StatusCode::from_name(err), StatusCode::Error, "{err}");
        }
        assert_eq!(StatusCode::from_name("STATUS_CODE_"), StatusCode::Unknown);
        assert_eq!(StatusCode::from_name("fine"), StatusCode::Unknown);
        assert_eq!(StatusCode::from_number(3.0), StatusCode::Unknown);
    }

    #[test]
    fn divergence_text_is_split_and_trimmed() {
        let got: Vec<_> = split_divergence(" a, b,,c ").collect();
        assert_eq!(got, ["a", "b", "c"]);
    }

    #[test]
    fn nanos() {
        assert_eq!(
            nanos_from_text("1544712660000000000"),
            Some(1_544_712_660_000_000_000)
        );
        assert_eq!(nanos_from_text("-1"), None);
        assert_eq!(timestamp_from_nanos(0), None);
        assert_eq!(
            timestamp_from_nanos(1_544_712_660_000_000_000).unwrap(),
            "2018-12-13T14:51:00Z"
        );
    }
}
