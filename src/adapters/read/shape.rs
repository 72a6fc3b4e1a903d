//! The shape of an input's first JSON value, read from its first bytes
//! without parsing the whole input: what a format's claim looks at.

/// The top-level shape of a JSON input and the keys of its first object:
/// the top object's own keys, or those of a top list's first element.
#[derive(Debug)]
pub(crate) struct Shape<'h> {
    /// The bytes looked at (at most the first 64 KiB), byte order mark dropped.
    pub head: &'h [u8],
    pub top_is_list: bool,
    pub keys: Vec<String>,
    /// The first object did not end inside the bytes looked at.
    pub cut: bool,
    /// The first byte of each value of the first object, by key.
    pub value_starts: Vec<u8>,
}

impl<'h> Shape<'h> {
    pub(crate) fn has(&self, key: &str) -> bool {
        self.keys.iter().any(|k| k == key)
    }

    /// Whether the input is one object whose every value (every one seen)
    /// is an object: named documents, whatever their names look like.
    pub(crate) fn holds_objects(&self) -> bool {
        !self.top_is_list
            && !self.value_starts.is_empty()
            && self.value_starts.iter().all(|b| *b == b'{')
    }

    /// Whether the input is an MLflow trace (`Trace.to_json()`), or a list
    /// of them: its `info` and its `data`, one document rather than two
    /// named ones.
    pub(crate) fn is_mlflow_trace(&self) -> bool {
        self.keys.len() == 2 && self.has("info") && self.has("data")
    }

    /// Whether `needle` appears anywhere in the bytes looked at.
    pub(crate) fn mentions(&self, needle: &str) -> bool {
        memchr::memmem::find(self.head, needle.as_bytes()).is_some()
    }

    /// Reads the keys of the first object: depth 1 of a top object, depth 2
    /// of a top list whose first element is an object.
    pub(crate) fn of(head: &'h [u8]) -> Shape<'h> {
        let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
        let start = head.iter().position(|b| !b.is_ascii_whitespace());
        let mut shape = Shape {
            head,
            top_is_list: false,
            keys: Vec::new(),
            cut: false,
            value_starts: Vec::new(),
        };
        let Some(start) = start else {
            return shape;
        };
        shape.top_is_list = head[start] == b'[';
        let key_depth = if shape.top_is_list { 2 } else { 1 };
        let mut depth = 0usize;
        let mut i = start;
        // Whether the next string at key depth is a key (after `{` or `,`).
        let mut expect_key = false;
        while i < head.len() {
            match head[i] {
                b'{' | b'[' => {
                    depth += 1;
                    expect_key = head[i] == b'{' && depth == key_depth;
                    if depth == key_depth && head[i] == b'[' {
                        return shape; // a list of lists: no object to read
                    }
                }
                b'}' | b']' => {
                    if depth == key_depth {
                        return shape; // the first object ended
                    }
                    depth = depth.saturating_sub(1);
                }
                b',' if depth == key_depth => expect_key = true,
                b'"' => {
                    let end = string_end(head, i + 1);
                    if expect_key && depth == key_depth {
                        let Some(end) = end else { break };
                        shape
                            .keys
                            .push(String::from_utf8_lossy(&head[i + 1..end]).into_owned());
                        let value = head[end + 1..]
                            .iter()
                            .find(|b| !(b.is_ascii_whitespace() || **b == b':'));
                        shape.value_starts.push(value.copied().unwrap_or(0));
                    }
                    expect_key = false;
                    match end {
                        Some(end) => i = end,
                        None => break,
                    }
                }
                _ => {}
            }
            i += 1;
        }
        shape.cut = true;
        shape
    }
}

/// The index of the quote closing the string that starts at `from`.
fn string_end(bytes: &[u8], mut from: usize) -> Option<usize> {
    while from < bytes.len() {
        match bytes[from] {
            b'\\' => from += 2,
            b'"' => return Some(from),
            _ => from += 1,
        }
    }
    None
}
