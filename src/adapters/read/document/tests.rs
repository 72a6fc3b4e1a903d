//! Tests of `document`: cut lists, wide integers, parse errors.

use super::{complete_items, parse_document, quote_wide_integers};
use crate::adapters::settings::DecodeSettings;
use crate::record::is_cut;

#[test]
fn a_list_cut_short_keeps_its_complete_items() {
    let cut = br#" [{"a": [1, 2]}, {"b": "x,]"} ,{"c": "#;
    let end = cut.iter().rposition(|&b| b == b'}').unwrap() + 1;
    assert_eq!(complete_items(cut), Some((end, 2)));
    assert_eq!(complete_items(b"[ "), Some((1, 0)));
    assert_eq!(complete_items(br#"{"a": 1"#), None);

    let mut data = cut.to_vec();
    let (doc, loss) = parse_document(&mut data).unwrap();
    assert_eq!(
        serde_json::to_string(&doc).unwrap(),
        r#"[{"a":[1,2]},{"b":"x,]"}]"#
    );
    let (line, reason) = loss.unwrap();
    assert_eq!(line, Some(1));
    assert!(
        reason.contains("the 2 complete items before the cut are read"),
        "{reason}"
    );
}

#[test]
fn a_document_broken_elsewhere_is_refused_whole() {
    // A syntax error inside the list, and an object cut short.
    for broken in [&br#"[{"a": 1}, {"b": }]"#[..], br#"{"a": [1, 2"#] {
        let mut data = broken.to_vec();
        let (_, reason) = parse_document(&mut data).unwrap_err();
        assert!(reason.starts_with("not valid JSON"), "{reason}");
    }
    let mut latin1 = b"[{\"a\": 1},\n {\"b\": \"caf\xe9\"}]".to_vec();
    let (line, reason) = parse_document(&mut latin1).unwrap_err();
    assert_eq!(line, Some(2));
    assert!(reason.contains("the whole file is skipped"), "{reason}");
    let mut data = br#"[{"a": 1}"#.to_vec();
    let (_, loss) = parse_document(&mut data).unwrap();
    assert!(loss.unwrap().1.contains("the 1 complete item before"));
}

#[test]
fn a_cut_text_is_told_from_one_that_ends_in_an_ellipsis() {
    let settings = DecodeSettings {
        text_limit: 5,
        ..DecodeSettings::default()
    };
    let (kept, digest) = settings.text("0123456789");
    assert_eq!(kept, "01234…");
    assert!(is_cut(&kept, Some(&digest)));
    let (kept, digest) = settings.text("wait…");
    assert!(!is_cut(&kept, Some(&digest)));
    assert!(!is_cut("01234…", None));
    let nothing = DecodeSettings {
        text_limit: 0,
        ..DecodeSettings::default()
    };
    let (kept, digest) = nothing.text("0123");
    assert_eq!(kept, "…", "--max-text 0 keeps only the mark of the cut");
    assert!(is_cut(&kept, Some(&digest)));
    assert_eq!(nothing.text("").0, "");
}

#[test]
fn integers_past_64_bits_are_quoted_and_nothing_else_is() {
    let quoted = |s: &str| String::from_utf8(quote_wide_integers(s.as_bytes().to_vec())).unwrap();
    assert_eq!(
        quoted(r#"{"t": 39712373237291850001929057769826244787, "s": 18446744073709551615}"#),
        r#"{"t": "39712373237291850001929057769826244787", "s": 18446744073709551615}"#
    );
    assert_eq!(
        quoted("[18446744073709551616]"),
        r#"["18446744073709551616"]"#
    );
    let untouched = r#"{"a": "123456789012345678901234", "b": 1.5e300, "c": -12345678901234567890123, "d": "\"99999999999999999999999\""}"#;
    assert_eq!(quoted(untouched), untouched);
    // Strings are crossed whole, escaped quotes and backslashes included.
    assert_eq!(
        quoted(r#"["a\\", 99999999999999999999999, "b\"c", 99999999999999999999999]"#),
        r#"["a\\", "99999999999999999999999", "b\"c", "99999999999999999999999"]"#
    );
    let unclosed = r#"["x\"#;
    assert_eq!(quoted(unclosed), unclosed);
}

proptest::proptest! {
    /// The probe that skips most of a line agrees with counting every run.
    #[test]
    fn digit_runs_are_found_as_by_counting(text in "[0-9a\"]{0,80}", n in 1usize..24) {
        let counted = text
            .as_bytes()
            .split(|b| !b.is_ascii_digit())
            .any(|run| run.len() >= n);
        proptest::prop_assert_eq!(super::has_digit_run(text.as_bytes(), n), counted);
    }
}
