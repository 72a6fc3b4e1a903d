//! Tests of `html`.

use super::*;

#[test]
fn escape_covers_text_and_attributes() {
    assert_eq!(escape("plain"), "plain");
    assert_eq!(
        escape(r#""><img src=x onerror='a()'>&"#),
        "&quot;&gt;&lt;img src=x onerror=&#39;a()&#39;&gt;&amp;"
    );
}
