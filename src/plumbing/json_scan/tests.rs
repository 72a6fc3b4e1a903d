use super::reference::{self, Split};
use super::*;

/// The line split two levels deep by the visitor (each member's object
/// value split into its members), in the reference's shape. `tail` as for
/// [`visit_object_in`]; empty to scan a copy.
fn visit_split<'a>(line: &'a str, tail: &'a [u8]) -> Result<Split<'a>, ScanError> {
    visit_split_after(line, tail, &mut LineScratch::default())
}

/// [`visit_split`] with a scratch that lines were visited with before.
fn visit_split_after<'a>(
    line: &'a str,
    tail: &'a [u8],
    scratch: &mut LineScratch,
) -> Result<Split<'a>, ScanError> {
    let mut split = Split::default();
    visit_object_in(line, tail, scratch, |key, field| {
        let from = split.children.len() as u32;
        let (value, stepped) = field.members(|k, f| {
            let (v, stepped) = f.value()?;
            split.children.push((k, v));
            Ok(stepped)
        })?;
        split.members.push((key, value));
        split.spans.push((from, split.children.len() as u32));
        Ok(stepped)
    })?;
    Ok(split)
}

fn members(line: &str) -> Result<Vec<(String, String)>, ScanError> {
    let mut m = Vec::new();
    object_members(line, &mut m)?;
    Ok(m.iter()
        .map(|(k, v)| (k.as_str().unwrap().into_owned(), v.raw().to_string()))
        .collect())
}

#[test]
fn splits_members_with_raw_values() {
    let got =
        members(r#" {"a": 1.5e3, "b\u0041": "x\"y", "c": [1, {"d": null}], "e": {}, "f": true } "#)
            .unwrap();
    assert_eq!(
        got,
        vec![
            ("a".into(), "1.5e3".into()),
            ("bA".into(), r#""x\"y""#.into()),
            ("c".into(), r#"[1, {"d": null}]"#.into()),
            ("e".into(), "{}".into()),
            ("f".into(), "true".into()),
        ]
    );
    assert_eq!(members("{}").unwrap(), vec![]);
}

#[test]
fn agrees_with_serde_json_on_validity() {
    let cases = [
        r#"{"a":1}"#,
        r#"{"a":01}"#,
        r#"{"a":1.}"#,
        r#"{"a":-}"#,
        r#"{"a":"\x"}"#,
        r#"{"a":"\u12G4"}"#,
        r#"{"a":[1,]}"#,
        r#"{"a":1,}"#,
        r#"{"a" 1}"#,
        r#"{"a":tru}"#,
        r#"{"a":1} x"#,
        "{\"a\":\"\t\"}",
        r#"{"a":[1,[2,[3]]],"b":{"c":{"d":"e"}}}"#,
        r#"{"a":1e+5,"b":-0.5E-2}"#,
        r#"{"a":"é✓"}"#,
        r#"{1:2}"#,
        r#"{"a":nul}"#,
        r#"{"a":"unterminated}"#,
        "{",
        "",
    ];
    for c in cases {
        let ours = object_members(c, &mut Vec::new()).is_ok();
        let theirs = serde_json::from_str::<serde_json::Value>(c).is_ok_and(|v| v.is_object());
        assert_eq!(ours, theirs, "{c}");
        assert_eq!(visit_split(c, &[]).is_ok(), theirs, "{c}");
    }
}

#[test]
fn refuses_deep_nesting_and_non_objects() {
    let deep = format!("{{\"a\":{}{}}}", "[".repeat(1000), "]".repeat(1000));
    assert_eq!(
        object_members(&deep, &mut Vec::new()).unwrap_err().reason(),
        "nested too deeply"
    );
    assert_eq!(
        object_members("[1]", &mut Vec::new()).unwrap_err().reason(),
        "expected a JSON object"
    );
}

#[test]
fn special_bytes_are_found_at_any_offset() {
    for len in 0..40 {
        for special in [b'"', b'\\', 0x01, 0x1f] {
            let mut b = vec![b'a'; len];
            b.extend_from_slice("é✓".as_bytes());
            let at = b.len();
            b.push(special);
            b.extend_from_slice(b"zz\"");
            assert_eq!(find_special(&b), Some(at), "{len} {special}");
            assert_eq!(find_special_swar(&b), Some(at), "{len} {special}");
        }
        assert_eq!(find_special(&vec![b'x'; len]), None);
        assert_eq!(find_special_swar(&vec![b'x'; len]), None);
    }
}

#[test]
fn split_keeps_the_members_of_nested_objects() {
    let line = r#"{"a": {"b": 1, "c": {"d": [2]}}, "e": [{"x": 1}], "f": {}, "a": 3}"#;
    let split = visit_split(line, &[]).unwrap();
    let children_of = |i: usize| {
        let (from, to) = split.spans[i];
        &split.children[from as usize..to as usize]
    };
    let raw = |m: &[(Value<'_>, Value<'_>)]| {
        m.iter()
            .map(|(k, v)| format!("{}={}", k.raw(), v.raw()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        raw(&split.members),
        [
            r#""a"={"b": 1, "c": {"d": [2]}}"#,
            r#""e"=[{"x": 1}]"#,
            r#""f"={}"#,
            r#""a"=3"#
        ]
    );
    assert_eq!(raw(children_of(0)), [r#""b"=1"#, r#""c"={"d": [2]}"#]);
    assert!(children_of(1).is_empty());
    assert!(children_of(2).is_empty());
    assert!(children_of(3).is_empty());
}

/// Asserts that `lines`, visited one after another with one scratch, are
/// each split as the reference splits it.
fn same_in_sequence_as_reference(lines: &[&str]) {
    let mut scratch = LineScratch::default();
    for line in lines {
        let ours = visit_split_after(line, &[], &mut scratch);
        let mut theirs = Split::default();
        let want = reference::split_object(line, &mut theirs);
        assert_eq!(
            ours.as_ref().err(),
            want.as_ref().err(),
            "{line:?} in {lines:?}"
        );
        if let Ok(ours) = ours {
            assert_eq!(ours.members, theirs.members, "{line:?} in {lines:?}");
            assert_eq!(ours.children, theirs.children, "{line:?} in {lines:?}");
        }
    }
}

/// A key remembered from a line before is taken only where the bytes are
/// that key: not for a longer or shorter key, one that differs in its last
/// byte, one cut by the end of the line, or one escaped differently.
#[test]
fn keys_of_the_lines_before_are_only_taken_where_they_are() {
    let long = "k".repeat(40);
    let long_line = format!(r#"{{"{long}":1,"a":2}}"#);
    let longer_line = format!(r#"{{"{long}x":1,"a":2}}"#);
    same_in_sequence_as_reference(&[
        r#"{"ab":1,"cd":{"ef":2,"gh":3},"ij":4}"#,
        r#"{"ab":1,"cd":{"ef":2,"gh":3},"ij":4}"#,
        r#"{"abc":1,"cd":{"e":2,"gh":3},"i":4}"#,
        r#"{"ab":1,"cd":{"ef":2,"gx":3},"ik":4}"#,
        r#"{"ab":1,"cd":{"ef":2,"gh"#,
        r#"{"ab":1,"cd":{"ef":2,"g"#,
        r#"{"a"b":1,"cd":{"ef\":2}}"#,
        r#"{"a"b":1,"cd":{"ef\"#,
        r#"{"a"b":1,"cd":{"ef\":2}}"#,
        r#"{"ab":1,"x":0,"cd":{"ef":2,"gh":3},"ij":4}"#,
        r#"{"ab":1,"cd":{"ef":2,"gh":3},"ij":4}"#,
        r#"{"ab" :1,"cd":{"ef":2,"gh":3},"ij":4}"#,
        r#"{"ab"}"#,
        r#"{"ab":1,"ab":2,"ab":3}"#,
        &long_line,
        &longer_line,
        &long_line,
        r#"{"ab":1,"cd":{"ef":2,"gh":3},"ij":4}"#,
    ]);
    // More keys than are remembered: the rest are scanned every time.
    let many: String = (0..100).map(|i| format!(r#""key{i}":{i},"#)).collect();
    let many = format!(r#"{{{many}"end":0}}"#);
    let cut = &many[..many.len() / 2];
    same_in_sequence_as_reference(&[&many, &many, cut, &many]);
}

#[test]
fn array_items_split() {
    let mut items = Vec::new();
    array_items(r#"[ "a", 2 , [3] ]"#, &mut items).unwrap();
    assert_eq!(
        items.iter().map(|v| v.raw()).collect::<Vec<_>>(),
        [r#""a""#, "2", "[3]"]
    );
    array_items("[]", &mut items).unwrap();
    assert!(items.is_empty());
}

// Differential tests: the scanner against the first one (`reference`) on
// members and error reason and column, and against serde_json on validity.

mod differential {
    use super::super::reference;
    use super::*;
    use proptest::prelude::*;

    /// Asserts that every entry point answers as the reference does.
    fn same_as_reference(line: &str) {
        let mut theirs = Split::default();
        let ours = visit_split(line, &[]);
        let want = reference::split_object(line, &mut theirs);
        assert_eq!(ours.as_ref().err(), want.as_ref().err(), "visit {line:?}");
        if let Ok(ours) = ours {
            assert_eq!(ours.members, theirs.members, "{line:?}");
            assert_eq!(ours.children, theirs.children, "{line:?}");
            assert_eq!(ours.spans, theirs.spans, "{line:?}");
        }
        same_visits_as_reference(line, &theirs);
        same_in_place_as_reference(line, &theirs);
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        let got = object_members(line, &mut ours);
        assert_eq!(
            got,
            reference::object_members(line, &mut theirs),
            "{line:?}"
        );
        if got.is_ok() {
            assert_eq!(ours, theirs, "object_members {line:?}");
        }
        // array_items is handed an array's raw text; any text that starts
        // with '[' stands in for it here.
        if let Some(at) = line.find('[') {
            let raw = &line[at..];
            let (mut ours, mut theirs) = (Vec::new(), Vec::new());
            let got = array_items(raw, &mut ours);
            assert_eq!(got, reference::array_items(raw, &mut theirs), "{raw:?}");
            if got.is_ok() {
                assert_eq!(ours, theirs, "array_items {raw:?}");
            }
        }
    }

    /// Asserts that `visit_object_in`, whichever way a visitor scans each
    /// member (whole, split, or only stepped over), fails as the
    /// reference's split does and otherwise finds its members and children.
    fn same_visits_as_reference(line: &str, theirs: &Split<'_>) {
        let want = reference::split_object(line, &mut Split::default());
        for way in 0..3 {
            let (mut members, mut children) = (Vec::new(), Vec::new());
            let got = visit_object_in(line, &[], &mut LineScratch::default(), |key, field| {
                let (value, stepped) = match way {
                    0 => field.value()?,
                    1 => field.members(|k, f| {
                        let (v, stepped) = f.value()?;
                        children.push((k, v));
                        Ok(stepped)
                    })?,
                    _ => return field.skip(),
                };
                members.push((key, value));
                Ok(stepped)
            });
            assert_eq!(got, want, "visit way {way} {line:?}");
            if got.is_ok() && way < 2 {
                assert_eq!(members, theirs.members, "visit way {way} {line:?}");
            }
            if got.is_ok() && way == 1 {
                assert_eq!(children, theirs.children, "{line:?}");
            }
        }
    }

    /// Asserts that a line read in place, with a 0 after it and then
    /// bytes that would change its meaning if they were read (a closing
    /// quote and brackets, the next line), scans as the reference does.
    fn same_in_place_as_reference(line: &str, theirs: &Split<'_>) {
        let mut buf = line.as_bytes().to_vec();
        buf.push(0);
        while buf.len() < line.len() + PAD {
            buf.extend_from_slice(b"\"}],:1 true\\u0041{\"k\":1}\n");
        }
        let text = std::str::from_utf8(&buf[..line.len()]).expect("a str's bytes");
        let want = reference::split_object(line, &mut Split::default());
        let ours = visit_split(text, &buf);
        assert_eq!(
            ours.as_ref().err(),
            want.as_ref().err(),
            "in place {line:?}"
        );
        if let Ok(ours) = ours {
            assert_eq!(ours.members, theirs.members, "in place {line:?}");
            assert_eq!(ours.children, theirs.children, "in place {line:?}");
        }
        let mut members = Vec::new();
        let got = visit_object_in(text, &buf, &mut LineScratch::default(), |key, field| {
            let (value, stepped) = field.value()?;
            members.push((key, value));
            Ok(stepped)
        });
        assert_eq!(got, want, "visit in place {line:?}");
        if got.is_ok() {
            assert_eq!(members, theirs.members, "visit in place {line:?}");
        }
    }

    fn serde_accepts(line: &str) -> bool {
        serde_json::from_str::<serde_json::Value>(line).is_ok_and(|v| v.is_object())
    }

    fn ws() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "", "", "", " ", " ", "  ", "\t", "\n", "\r\n", " \t\r ",
        ])
    }

    /// A JSON string literal: plain runs, unicode, and every kind of escape
    /// (no lone surrogates, which serde_json refuses and we pass through).
    fn string_lit() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            4 => "[a-zA-Z0-9 _./:-]{0,20}",
            1 => prop::sample::select(vec!["é", "✓", "𝄞", "日本"]).prop_map(String::from),
            1 => prop::sample::select(vec![
                "\\n", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\r", "\\t", "\\u0041", "\\u00e9",
                "\\uD834\\uDD1E", "\\u20AC",
            ])
            .prop_map(String::from),
        ];
        prop::collection::vec(piece, 0..6).prop_map(|p| format!("\"{}\"", p.concat()))
    }

    fn number() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            (-1e6f64..1e6).prop_map(|f| f.to_string()),
            "-?(0|[1-9][0-9]{0,5})(\\.[0-9]{1,4})?([eE][+-]?[0-9]{1,2})?",
        ]
    }

    fn value() -> impl Strategy<Value = String> {
        let scalar = prop_oneof![
            string_lit(),
            number(),
            prop::sample::select(vec!["true", "false", "null"]).prop_map(String::from),
        ];
        scalar.prop_recursive(6, 48, 6, |inner| {
            prop_oneof![
                (
                    prop::collection::vec((ws(), string_lit(), ws(), ws(), inner.clone()), 0..6),
                    ws()
                )
                    .prop_map(|(members, end)| {
                        let members: Vec<String> = members
                            .into_iter()
                            .map(|(a, k, b, c, v)| format!("{a}{k}{b}:{c}{v}"))
                            .collect();
                        format!("{{{}{end}}}", members.join(","))
                    }),
                (prop::collection::vec((ws(), inner, ws()), 0..6), ws()).prop_map(
                    |(items, end)| {
                        let items: Vec<String> = items
                            .into_iter()
                            .map(|(a, v, b)| format!("{a}{v}{b}"))
                            .collect();
                        format!("[{}{end}]", items.join(","))
                    }
                ),
            ]
        })
    }

    /// A line: an object of generated members, or now and then another value,
    /// with whitespace around.
    fn line() -> impl Strategy<Value = String> {
        let object = (
            prop::collection::vec((ws(), string_lit(), ws(), ws(), value(), ws()), 0..8),
            ws(),
        )
            .prop_map(|(members, end)| {
                let members: Vec<String> = members
                    .into_iter()
                    .map(|(a, k, b, c, v, d)| format!("{a}{k}{b}:{c}{v}{d}"))
                    .collect();
                format!("{{{}{end}}}", members.join(","))
            });
        (prop_oneof![9 => object, 1 => value()], ws(), ws())
            .prop_map(|(v, before, after)| format!("{before}{v}{after}"))
    }

    /// What a damaged line may gain: JSON's own punctuation, the bytes the
    /// scanner treats specially, and multi-byte characters.
    const NOISE: &[char] = &[
        '{', '}', '[', ']', ':', ',', '"', '\\', ' ', '\t', '\n', '0', '1', '-', '+', '.', 'e',
        'E', 't', 'f', 'n', 'u', 'a', '\u{0}', '\u{1}', '\u{1f}', '\u{7f}', 'é', '✓', '𝄞',
    ];

    #[derive(Debug, Clone)]
    enum Damage {
        Cut(usize),
        Insert(usize, char),
        Remove(usize),
        Replace(usize, char),
    }

    fn damage() -> impl Strategy<Value = Damage> {
        let at = 0..2000usize;
        let noise = prop::sample::select(NOISE);
        prop_oneof![
            at.clone().prop_map(Damage::Cut),
            (at.clone(), noise.clone()).prop_map(|(a, c)| Damage::Insert(a, c)),
            at.clone().prop_map(Damage::Remove),
            (at, noise).prop_map(|(a, c)| Damage::Replace(a, c)),
        ]
    }

    fn apply(line: &str, damage: &[Damage]) -> String {
        let mut chars: Vec<char> = line.chars().collect();
        for d in damage {
            let n = chars.len() + 1;
            match *d {
                Damage::Cut(at) => chars.truncate(at % n),
                Damage::Insert(at, c) => chars.insert(at % n, c),
                Damage::Remove(at) if !chars.is_empty() => {
                    chars.remove(at % chars.len());
                }
                Damage::Replace(at, c) if !chars.is_empty() => {
                    let i = at % chars.len();
                    chars[i] = c;
                }
                _ => {}
            }
        }
        chars.into_iter().collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn agrees_with_serde_json_on_whole_lines(line in line()) {
            prop_assert_eq!(visit_split(&line, &[]).is_ok(), serde_accepts(&line), "{:?}", line);
            same_as_reference(&line);
        }

        #[test]
        fn agrees_with_serde_json_on_cut_lines(line in line(), cut in 0..2000usize) {
            let cut = line.char_indices().map(|(i, _)| i).nth(cut % (line.chars().count() + 1)).unwrap_or(line.len());
            let line = &line[..cut];
            prop_assert_eq!(visit_split(line, &[]).is_ok(), serde_accepts(line), "{:?}", line);
            same_as_reference(line);
        }

        #[test]
        fn damaged_lines_fail_as_the_reference_does(
            line in line(),
            damage in prop::collection::vec(damage(), 1..4),
        ) {
            same_as_reference(&apply(&line, &damage));
        }

        /// A damaged line read with the keys of the whole line in memory.
        #[test]
        fn keys_remembered_from_a_line_change_nothing_in_the_next(
            line in line(),
            damage in prop::collection::vec(damage(), 0..3),
            cut in 0..2000usize,
        ) {
            let damaged = apply(&line, &damage);
            let cut = damaged.char_indices().map(|(i, _)| i).nth(cut % (damaged.chars().count() + 1)).unwrap_or(damaged.len());
            same_in_sequence_as_reference(&[&line, &damaged, &damaged[..cut], &line]);
        }

        /// `Field::slot_of` answers what its lookup answers, whatever
        /// lines the keys were remembered from and whichever of two
        /// lookups asked about a key before.
        #[test]
        fn remembered_slots_answer_as_their_lookup(
            lines in prop::collection::vec(line(), 1..5),
        ) {
            fn by_length(k: &str) -> Option<usize> {
                (!k.len().is_multiple_of(3)).then_some(k.len())
            }
            fn by_first_byte(k: &str) -> Option<usize> {
                k.bytes().next().map(usize::from)
            }
            let mut scratch = LineScratch::default();
            let mut asked = 0usize;
            for line in lines.iter().chain(&lines) {
                let _ = visit_object_in(line, &[], &mut scratch, |key, field| {
                    asked += 1;
                    let lookup = if asked.is_multiple_of(3) { by_first_byte } else { by_length };
                    assert_eq!(field.slot_of(key, lookup), key.lookup(lookup), "{line}");
                    let (_, stepped) = field.members(|k, f| {
                        assert_eq!(f.slot_of(k, by_first_byte), k.lookup(by_first_byte), "{line}");
                        f.skip()
                    })?;
                    Ok(stepped)
                });
            }
        }

        /// Every token at every offset from a sixteen- or sixty-four-byte
        /// boundary, and every distance from the end of the line.
        #[test]
        fn block_boundaries_change_nothing(
            line in line(),
            indent in 0..80usize,
            damage in prop::collection::vec(damage(), 0..2),
        ) {
            let line = apply(&format!("{}{line}", " ".repeat(indent)), &damage);
            same_as_reference(&line);
        }
    }

    /// A string whose text is `len` plain bytes with `special` at `at`,
    /// alone in a line, closed or cut at the end, at each distance from a
    /// sixteen-byte boundary.
    #[test]
    fn strings_of_every_length_with_a_special_byte_anywhere() {
        for len in 0..70 {
            for at in 0..=len {
                for special in [
                    "\"", "\\n", "\\u00e9", "\\x", "\\u12", "\u{1}", "\u{0}", "é",
                ] {
                    let text = format!("{}{special}{}", "a".repeat(at), "b".repeat(len - at));
                    for line in [
                        format!("{{\"k\":\"{text}\"}}"),
                        format!("{{\"k\":\"{text}"),
                        format!("{{\"{text}\":1}}"),
                        format!("{{\"k\":[\"{text}\"]}}"),
                    ] {
                        same_as_reference(&line);
                    }
                }
            }
        }
    }

    /// Nesting around the depth limit, of objects, arrays and both, whole
    /// and cut short.
    #[test]
    fn nesting_around_the_limit() {
        for depth in (0..20).chain(MAX_DEPTH - 4..MAX_DEPTH + 4) {
            for (open, close) in [("[", "]"), ("{\"a\":", "}"), ("[{\"a\":", "}]")] {
                let line = format!("{{\"a\":{}1{}}}", open.repeat(depth), close.repeat(depth));
                same_as_reference(&line);
                same_as_reference(&line[..line.len() / 2]);
                same_as_reference(&line[..line.len() - 1]);
            }
        }
    }

    /// Numbers and literals cut or damaged at each byte, where the line ends
    /// right after them or goes on.
    #[test]
    fn numbers_and_literals_cut_anywhere() {
        for token in [
            "-0", "0", "12", "-12.5e+3", "1E9", "0.0001", "1e", "1e+", "-", "01", "1.", ".5",
            "true", "false", "null", "tru", "nul", "fals", "truex",
        ] {
            for cut in 0..=token.len() {
                let t = &token[..cut];
                for line in [
                    format!("{{\"a\":{t}}}"),
                    format!("{{\"a\":{t}"),
                    format!("{{\"a\": {t} ,\"b\":2}}"),
                    format!("{{\"a\":[{t}]}}"),
                    t.to_string(),
                ] {
                    same_as_reference(&line);
                }
            }
        }
    }
}

/// Every element of every array member, as raw text, visited in place.
fn items_of(line: &str) -> Result<Vec<String>, ScanError> {
    let mut out = Vec::new();
    visit_object_in(line, &[], &mut LineScratch::default(), |_, field| {
        let (_, stepped) = field.items(|item| {
            let (v, stepped) = item.value()?;
            out.push(v.raw().to_string());
            Ok(stepped)
        })?;
        Ok(stepped)
    })?;
    Ok(out)
}

#[test]
fn items_visits_each_element_of_an_array_and_passes_other_values_whole() {
    let line = r#"{"a": [1, "two", {"x": [3]}, []], "b": {"c": 4}, "d": [ ], "e": null}"#;
    assert_eq!(
        items_of(line).unwrap(),
        ["1", r#""two""#, r#"{"x": [3]}"#, "[]"]
    );
    // The value is checked as a whole: a broken element is the line's error.
    for bad in [r#"{"a": [1, }"#, r#"{"a": [1 2]}"#, r#"{"a": [1,]}"#] {
        assert!(items_of(bad).is_err(), "{bad}");
    }
    // What the visitor reads matches what scanning the whole value says.
    let whole = members(line).unwrap();
    assert_eq!(whole[0].1, r#"[1, "two", {"x": [3]}, []]"#);
}
