//! Why a line or document of a trace file is skipped: the adapters' error
//! type, said after the file and line in the warning (or the error under
//! `--strict`).

use std::borrow::Cow;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    #[error("not valid UTF-8")]
    NotUtf8,
    /// The parser's reason, without its location.
    #[error("not valid JSON: {0}")]
    Json(String),
    #[error("missing field \"{0}\"")]
    Missing(Cow<'static, str>),
    /// A member holds a value of another type than its field takes.
    #[error("{field}: expected {expected}, got {got}")]
    Mistyped {
        field: Cow<'static, str>,
        expected: &'static str,
        /// What it holds, as `lax::Scalar::describe` says it.
        got: String,
    },
    /// Input of another shape than the format's (not a span, not a session
    /// event, a request without its spans): the format's own words.
    #[error("{0}")]
    Shape(Cow<'static, str>),
    /// A reason found inside a member or element of what was read.
    #[error("{at}: {reason}")]
    Inside { at: String, reason: Box<Unreadable> },
}

impl Unreadable {
    pub fn mistyped(
        field: impl Into<Cow<'static, str>>,
        expected: &'static str,
        got: impl Into<String>,
    ) -> Self {
        Unreadable::Mistyped {
            field: field.into(),
            expected,
            got: got.into(),
        }
    }

    pub fn shape(why: impl Into<Cow<'static, str>>) -> Self {
        Unreadable::Shape(why.into())
    }

    /// The same reason, found inside member or element `at` of what was
    /// read.
    #[must_use]
    pub fn inside(self, at: impl Into<String>) -> Self {
        Unreadable::Inside {
            at: at.into(),
            reason: Box::new(self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_read_as_the_warnings_say_them() {
        assert_eq!(Unreadable::NotUtf8.to_string(), "not valid UTF-8");
        assert_eq!(
            Unreadable::Missing("run_id".into()).to_string(),
            "missing field \"run_id\""
        );
        assert_eq!(
            Unreadable::mistyped("turn", "an integer", "\"x\"").to_string(),
            "turn: expected an integer, got \"x\""
        );
        assert_eq!(
            Unreadable::mistyped("id", "a string", "null")
                .inside("spans[2]")
                .to_string(),
            "spans[2]: id: expected a string, got null"
        );
        assert_eq!(
            Unreadable::Json("EOF".into())
                .inside("spans[0]")
                .to_string(),
            "spans[0]: not valid JSON: EOF"
        );
    }
}
