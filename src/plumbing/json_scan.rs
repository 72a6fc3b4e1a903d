//! A validating JSON scanner that allocates nothing per line: splits one
//! NDJSON line into its top-level members, each a raw slice plus what a
//! reader needs to decode it. The hot path of reading TraceEvent lines.

// The one module allowed `unsafe`: unchecked indexing past bounds the
// scanner has proven, and the key cache's interior mutability.
#![allow(unsafe_code)]

use std::borrow::Cow;
use std::cell::{Cell, RefCell, UnsafeCell};

/// Containers nested deeper than this are refused.
pub(crate) const MAX_DEPTH: usize = 512;

/// One JSON value as it stands in the line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value<'a> {
    Null,
    Bool(bool),
    /// The number's text, valid by JSON's grammar.
    Number(&'a str),
    /// The string's text with its quotes; `escaped` when it holds a backslash.
    String {
        raw: &'a str,
        escaped: bool,
    },
    /// The whole array's text.
    Array(&'a str),
    /// The whole object's text.
    Object(&'a str),
}

impl<'a> Value<'a> {
    /// The value's JSON text.
    pub(crate) fn raw(&self) -> &'a str {
        match self {
            Value::Null => "null",
            Value::Bool(true) => "true",
            Value::Bool(false) => "false",
            Value::Number(r) | Value::Array(r) | Value::Object(r) => r,
            Value::String { raw, .. } => raw,
        }
    }

    /// What `lookup` answers for this string's text (a key, most often),
    /// decoded first only when it has escapes: the plain case costs no
    /// `Cow`, which on the hot path cost hundreds of instructions a line.
    #[inline(always)]
    pub(crate) fn lookup<T>(&self, lookup: impl Fn(&str) -> Option<T>) -> Option<T> {
        match *self {
            Value::String {
                raw,
                escaped: false,
            } => lookup(&raw[1..raw.len() - 1]),
            k => k.as_str().and_then(|k| lookup(&k)),
        }
    }

    /// A string's decoded text (borrowed unless it has escapes).
    // Small enough to inline where texts are read per member; the rare
    // escaped string is decoded out of line.
    #[inline]
    pub(crate) fn as_str(&self) -> Option<Cow<'a, str>> {
        match *self {
            Value::String {
                raw,
                escaped: false,
            } => Some(Cow::Borrowed(&raw[1..raw.len() - 1])),
            Value::String { raw, escaped: true } => unescaped(raw),
            _ => None,
        }
    }
}

/// The text of a string with escapes, `raw` with its quotes.
#[cold]
#[inline(never)]
fn unescaped(raw: &str) -> Option<Cow<'_, str>> {
    serde_json::from_str::<String>(raw).ok().map(Cow::Owned)
}

/// Why a line is not the JSON it should be. Eight bytes, so that the
/// scanner's `Result<usize, ScanError>` comes back in two registers rather
/// than through memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScanError {
    /// Byte offset in the line (lines are at most 1 GiB).
    at: u32,
    /// The reason's index in [`REASONS`].
    reason: u8,
}

/// Every reason the scanner gives.
const REASONS: [&str; 15] = [
    "expected a JSON object",
    "trailing characters",
    "unexpected end of line",
    "expected a value",
    "expected a key",
    "expected ':'",
    "expected ',' or '}'",
    "expected ',' or ']'",
    "nested too deeply",
    "invalid number",
    "unterminated string",
    "control character in string",
    "invalid \\u escape",
    "invalid escape",
    // A reader's own: valid JSON, but not the shape it reads.
    "not the shape read",
];

impl ScanError {
    /// `reason` (one of the scanner's) at byte `at` of the line.
    #[cold]
    pub(crate) fn new(reason: &'static str, at: usize) -> Self {
        let reason = REASONS.iter().position(|r| *r == reason);
        debug_assert!(reason.is_some(), "an unlisted reason: {reason:?}");
        ScanError {
            at: u32::try_from(at).unwrap_or(u32::MAX),
            reason: reason.unwrap_or(REASONS.len()) as u8,
        }
    }

    pub(crate) fn reason(&self) -> &'static str {
        REASONS
            .get(usize::from(self.reason))
            .copied()
            .unwrap_or("invalid JSON")
    }

    /// Byte offset in the line.
    pub(crate) fn at(&self) -> usize {
        self.at as usize
    }
}

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at column {}", self.reason(), self.at() + 1)
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// True when some byte of the word is zero.
fn zero_byte(v: u64) -> u64 {
    v.wrapping_sub(ONES) & !v & HIGHS
}

/// The first byte that ends a run of plain string text: a quote, a
/// backslash or a control character. Sixteen bytes at a time where SSE2 is
/// the baseline, then eight.
fn find_special(b: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        let mut blocks = b.chunks_exact(16);
        let mut i = 0;
        for block in blocks.by_ref() {
            let found = special_mask16(block.try_into().expect("sixteen bytes"));
            if found != 0 {
                return Some(i + found.trailing_zeros() as usize);
            }
            i += 16;
        }
        find_special_swar(blocks.remainder()).map(|p| i + p)
    }
    #[cfg(not(target_arch = "x86_64"))]
    find_special_swar(b)
}

/// One bit per special byte of `block`, lowest bit first.
#[cfg(target_arch = "x86_64")]
fn special_mask16(block: &[u8; 16]) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: `block` is sixteen readable bytes, and an unaligned load has
    // no alignment requirement; SSE2 is part of every x86_64 CPU, so its
    // intrinsics are always available.
    unsafe {
        let v = _mm_loadu_si128(block.as_ptr().cast());
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        // Unsigned max(v, 0x1f) == 0x1f exactly for the bytes below 0x20.
        let low = _mm_set1_epi8(0x1f);
        let control = _mm_cmpeq_epi8(_mm_max_epu8(v, low), low);
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) as u32
    }
}

/// [`find_special`] eight bytes at a time, in plain integer arithmetic.
fn find_special_swar(b: &[u8]) -> Option<usize> {
    let mut words = b.chunks_exact(8);
    let mut i = 0;
    for word in words.by_ref() {
        let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let quote = zero_byte(w ^ (ONES * b'"' as u64));
        let backslash = zero_byte(w ^ (ONES * b'\\' as u64));
        // Bytes below 0x20; bytes of 0x80 and above are masked out by !w.
        let control = w.wrapping_sub(ONES * 0x20) & !w & HIGHS;
        let found = quote | backslash | control;
        if found != 0 {
            // Borrows only run upwards, so the lowest flagged byte is exact.
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .map(|p| i + p)
}

/// One line being scanned. Positions travel as arguments and results, not
/// as a field, so that they stay in registers through the inlined hot
/// path.
///
/// The scanner reads a copy of the line followed by [`PAD`] zero bytes, so
/// that it needs no test for the end of the line: 0 is valid nowhere outside
/// a string, so the end falls into each check's error branch. No position
/// ever passes the end, as each step forward steps over a byte found to be
/// something other than 0. Only the first of those bytes need be 0 (see
/// [`scan_line`]): a read of several bytes either stops at the first special
/// byte, the 0 at the latest, or compares them all with a word that holds
/// no 0.
struct Scanner<'a, 'p> {
    s: &'a str,
    /// The line's bytes, then `PAD` bytes, the first of them 0.
    b: &'p [u8],
    /// The line's length.
    len: usize,
    /// The keys of the last line visited, where this line is visited.
    keys: Option<&'p KeyMemory>,
}

/// What the scanner keeps from one line to the next, for one thread: the
/// buffer of its padded copy of a line it cannot read in place, and the
/// keys of the last line visited.
#[derive(Default)]
pub(crate) struct LineScratch {
    padded: Vec<u8>,
    keys: KeyMemory,
}

/// The keys met in the lines visited with a scratch, each with the key
/// that followed it last time. Most lines of a trace, and record lines of
/// one kind, have the same members in the same order, so the key that
/// followed the last one is compared with the bytes where the next key
/// starts, 32 at once, rather than the key scanned for its end and checked
/// byte by byte: 17% of triage-parse's scan of a TraceEvent line. Lines
/// that differ (a failure's extra members) cost a search where they part
/// and meet again.
struct KeyMemory {
    /// The key met last in this line: its index in `keys`, or
    /// [`LINE_START`] or [`FORGOTTEN`].
    last: Cell<usize>,
    /// The first key of the last line, or [`NONE`].
    first: Cell<usize>,
    /// Not a `RefCell`: its borrow count was 2% of a scan. Only `recall`,
    /// `learn` and `slot` touch it, none calls another or keeps a reference
    /// past its return, and the cell makes the memory `!Sync`.
    keys: UnsafeCell<Vec<KnownKey>>,
}

/// `KeyMemory::last` before a line's first key.
const LINE_START: usize = usize::MAX;
/// `KeyMemory::last` after a key too long to remember, or with the memory
/// full: what follows is not guessed.
const FORGOTTEN: usize = usize::MAX - 1;
/// No key known to follow.
const NONE: usize = usize::MAX - 2;

/// A key as it was scanned: its text with its quotes, in the first `len`
/// bytes of `bytes`; and the key that followed it last time.
#[derive(Clone, Copy)]
struct KnownKey {
    bytes: [u8; KEY_WINDOW],
    /// Which bytes of a window count, made once here rather than at each
    /// recall: building it there was 8% of triage-group's instructions.
    mask: WindowMask,
    len: usize,
    escaped: bool,
    next: usize,
    /// What a visitor's lookup of this key answered last, and which lookup
    /// (its address): see [`Field::slot_of`].
    slot: Option<usize>,
    slot_by: usize,
}

/// The longest key remembered, quotes included; also how many bytes are
/// compared at once, which [`PAD`] allows at any position in the line.
const KEY_WINDOW: usize = 32;
const _: () = assert!(KEY_WINDOW <= PAD, "a key's window is read past the line");

/// Keys remembered: enough for any trace format's, and a bound on the
/// memory and the search of lines of ever new keys.
const KEYS_REMEMBERED: usize = 64;

impl Default for KeyMemory {
    fn default() -> Self {
        KeyMemory {
            last: Cell::new(LINE_START),
            first: Cell::new(NONE),
            keys: UnsafeCell::default(),
        }
    }
}

impl KeyMemory {
    /// Starts a line.
    fn start_line(&self) {
        self.last.set(LINE_START);
    }

    /// The escape flag and length of the key that followed the last one,
    /// when `here`, the bytes where the next key starts, begin with its
    /// text. A string ends where its bytes say, so bytes the same as a key
    /// scanned before are that key (and the 0 after a line, which no string
    /// holds, never matches one).
    #[inline(always)]
    fn recall(&self, here: &[u8; KEY_WINDOW]) -> Option<(bool, usize)> {
        // SAFETY: see `keys`: no other reference to it exists now.
        let keys = unsafe { &*self.keys.get() };
        let guess = match self.last.get() {
            LINE_START => self.first.get(),
            FORGOTTEN => return None,
            last => keys[last].next,
        };
        let k = keys.get(guess)?;
        if !k.mask.same(here, &k.bytes) {
            return None;
        }
        self.last.set(guess);
        Some((k.escaped, k.len))
    }

    /// Notes the key scanned at `here` as the one that follows the last.
    fn learn(&self, here: &[u8; KEY_WINDOW], escaped: bool, len: usize) {
        // SAFETY: see `keys`: no other reference to it exists now.
        let keys = unsafe { &mut *self.keys.get() };
        let known = keys
            .iter()
            .position(|k| k.len == len && k.mask.same(here, &k.bytes));
        let key = match known {
            Some(key) => key,
            None if len <= KEY_WINDOW && keys.len() < KEYS_REMEMBERED => {
                keys.push(KnownKey {
                    bytes: *here,
                    mask: WindowMask::first(len),
                    len,
                    escaped,
                    next: NONE,
                    slot: None,
                    slot_by: 0,
                });
                keys.len() - 1
            }
            None => FORGOTTEN,
        };
        if key != FORGOTTEN {
            match self.last.get() {
                LINE_START => self.first.set(key),
                FORGOTTEN => {}
                last => keys[last].next = key,
            }
        }
        self.last.set(key);
    }

    /// `find()`, the answer of the lookup at address `by` for the key met
    /// last, as remembered with that key when the same lookup asked before.
    #[inline(always)]
    fn slot(&self, by: usize, find: impl FnOnce() -> Option<usize>) -> Option<usize> {
        let last = self.last.get();
        // SAFETY: see `keys`: no other reference to it exists now, and none
        // is held while `find` runs.
        if let Some(k) = unsafe { &*self.keys.get() }.get(last)
            && k.slot_by == by
        {
            return k.slot;
        }
        let found = find();
        // SAFETY: as above.
        if let Some(k) = unsafe { &mut *self.keys.get() }.get_mut(last) {
            (k.slot, k.slot_by) = (found, by);
        }
        found
    }
}

/// The bytes of a key window that count, as a bit mask over each sixteen.
#[derive(Clone, Copy)]
struct WindowMask([u128; 2]);

impl WindowMask {
    /// The first `len` bytes (at most `KEY_WINDOW`).
    fn first(len: usize) -> Self {
        // The bytes of each half that count: all, some (the low ones), or none.
        let half = |i: usize| match len.saturating_sub(i * 16) {
            0 => 0,
            n if n >= 16 => u128::MAX,
            n => (1u128 << (n * 8)) - 1,
        };
        WindowMask([half(0), half(1)])
    }

    /// True when `a` and `b` agree on the bytes that count, compared
    /// sixteen at a time without a loop.
    #[inline(always)]
    fn same(&self, a: &[u8; KEY_WINDOW], b: &[u8; KEY_WINDOW]) -> bool {
        let half = |x: &[u8; KEY_WINDOW], i: usize| {
            u128::from_le_bytes(x[i * 16..i * 16 + 16].try_into().expect("sixteen bytes"))
        };
        ((half(a, 0) ^ half(b, 0)) & self.0[0]) | ((half(a, 1) ^ half(b, 1)) & self.0[1]) == 0
    }
}

/// How many zero bytes follow the line in the scanner's copy: enough for
/// a sixteen-byte load at any position up to the end.
pub(crate) const PAD: usize = 32;

thread_local! {
    /// The copy of the line for the entry points that are not handed a
    /// buffer to keep one in, reused from call to call.
    static PADDED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A copy bigger than this is freed after use, so that one huge line does
/// not hold its size in every thread for the rest of the run.
const KEEP_PADDED: usize = 1 << 20;

/// Runs `scan` over a padded copy of `line` in the thread's buffer.
#[inline(always)]
fn with_scanner<'a, R>(line: &'a str, scan: impl FnOnce(&Scanner<'a, '_>) -> R) -> R {
    PADDED.with_borrow_mut(|b| scan_copy(b, line, None, scan))
}

/// Runs `scan` over a padded copy of `line` made in `b`.
#[inline(always)]
fn scan_copy<'a, 'p, R>(
    b: &'p mut Vec<u8>,
    line: &'a str,
    keys: Option<&'p KeyMemory>,
    scan: impl FnOnce(&Scanner<'a, '_>) -> R,
) -> R {
    b.clear();
    b.extend_from_slice(line.as_bytes());
    b.extend_from_slice(&[0; PAD]);
    let scanned = scan(&Scanner {
        s: line,
        b,
        len: line.len(),
        keys,
    });
    if b.capacity() > KEEP_PADDED {
        *b = Vec::new();
    }
    scanned
}

/// Runs `scan` over `line` where it stands in `tail` (its buffer from the
/// line's start) when a 0 byte follows it there and `tail` runs at least
/// [`PAD`] bytes past it; otherwise over a padded copy made in `padded`.
/// Whatever follows that 0 is never read as part of the line: every step
/// of the scanner stops at it (see [`Scanner`]).
#[inline(always)]
fn scan_line<'a, 'p, R>(
    line: &'a str,
    tail: &'a [u8],
    padded: &'p mut Vec<u8>,
    keys: &'p KeyMemory,
    scan: impl FnOnce(&Scanner<'a, '_>) -> R,
) -> R {
    let len = line.len();
    let in_place = tail.as_ptr() == line.as_ptr() && tail.len() >= len + PAD && tail[len] == 0;
    if !in_place {
        return scan_copy(padded, line, Some(keys), scan);
    }
    scan(&Scanner {
        s: line,
        b: &tail[..len + PAD],
        len,
        keys: Some(keys),
    })
}

/// A scanned value and the position just past it.
type Scanned<'a> = Result<(Value<'a>, usize), ScanError>;

/// Splits a line holding one JSON value into the members of that value, an
/// object; `members` is cleared and filled. Duplicate keys are all kept, in
/// order (readers take the last, as Python does). Errors: not an object, or
/// not valid JSON.
pub(crate) fn object_members<'a>(
    line: &'a str,
    members: &mut Vec<(Value<'a>, Value<'a>)>,
) -> Result<(), ScanError> {
    members.clear();
    top_object(line, |sc, key, at| {
        sc.value_to(at, 1, |v| members.push((key, v)))
    })
}

/// A member's value, not yet scanned: the visitor scans it the way it needs
/// (decoded, split into its own members, or only validated), so that a
/// reader after a few fields stores nothing for the rest.
pub(crate) struct Field<'s, 'a, 'p> {
    sc: &'s Scanner<'a, 'p>,
    at: usize,
    depth: usize,
}

/// Proof that a [`Field`] was scanned, holding the position past it: only
/// a `Field` makes one, so a visitor cannot leave a value unread.
pub(crate) struct Stepped(usize);

/// What a visitor does with each member: the key, and its value to scan.
pub(crate) trait Visit<'a>:
    FnMut(Value<'a>, Field<'_, 'a, '_>) -> Result<Stepped, ScanError>
{
}

impl<'a, F: FnMut(Value<'a>, Field<'_, 'a, '_>) -> Result<Stepped, ScanError>> Visit<'a> for F {}

impl<'a> Field<'_, 'a, '_> {
    /// `lookup` of this member's key, `key` (as [`Value::lookup`] answers
    /// it), remembered with the line's keys: in lines like the last one a
    /// member costs no name comparison, which was 6% of triage-group's
    /// instructions. Only a `Field` not yet scanned can ask, so the key met
    /// last is its own.
    #[inline(always)]
    pub(crate) fn slot_of(
        &self,
        key: Value<'a>,
        lookup: fn(&str) -> Option<usize>,
    ) -> Option<usize> {
        match self.sc.keys {
            Some(keys) => keys.slot(lookup as usize, || key.lookup(lookup)),
            None => key.lookup(lookup),
        }
    }

    /// The value, scanned whole.
    #[inline(always)]
    pub(crate) fn value(self) -> Result<(Value<'a>, Stepped), ScanError> {
        let (v, end) = self.sc.value(self.at, self.depth)?;
        Ok((v, Stepped(end)))
    }

    /// Scans the value only to validate it and step over it. An object's
    /// members are stepped over inline: most are scalars, for which the
    /// general container loop costs more.
    #[inline(always)]
    pub(crate) fn skip(self) -> Result<Stepped, ScanError> {
        if self.sc.byte(self.at) != b'{' {
            return self.sc.value_to(self.at, self.depth, drop).map(Stepped);
        }
        let depth = self.depth + 1;
        self.sc
            .object(self.at, self.depth, |sc, _, at| {
                sc.value_to(at, depth, drop)
            })
            .map(Stepped)
    }

    /// The value; when it is an object, each of its members goes to
    /// `member` on the way.
    #[inline(always)]
    pub(crate) fn members(
        self,
        mut member: impl Visit<'a>,
    ) -> Result<(Value<'a>, Stepped), ScanError> {
        if self.sc.byte(self.at) != b'{' {
            return self.value();
        }
        let depth = self.depth + 1;
        let end = self.sc.object(self.at, self.depth, |sc, key, at| {
            member(key, Field { sc, at, depth }).map(|s| s.0)
        })?;
        Ok((Value::Object(self.sc.text(self.at, end)), Stepped(end)))
    }

    /// The value; when it is an array, each of its elements goes to `item`
    /// on the way, to be scanned as the visitor needs.
    #[inline(always)]
    pub(crate) fn items(
        self,
        mut item: impl FnMut(Field<'_, 'a, '_>) -> Result<Stepped, ScanError>,
    ) -> Result<(Value<'a>, Stepped), ScanError> {
        if self.sc.byte(self.at) != b'[' {
            return self.value();
        }
        let depth = self.depth + 1;
        let end = self.sc.array(self.at, self.depth, |sc, at| {
            item(Field { sc, at, depth }).map(|s| s.0)
        })?;
        Ok((Value::Array(self.sc.text(self.at, end)), Stepped(end)))
    }

    /// The first byte of the value: what kind of value it is.
    #[inline(always)]
    pub(crate) fn starts_with(&self) -> u8 {
        self.sc.byte(self.at)
    }
}

/// A reading of a value in one exact spelling, byte by byte: see
/// [`Field::exact`].
pub(crate) struct Exact<'s, 'a, 'p> {
    sc: &'s Scanner<'a, 'p>,
    at: usize,
}

impl<'a> Field<'_, 'a, '_> {
    /// The value read by `read` when it is spelled the way `read` expects
    /// (compact, names in one order, no escapes), with the position past
    /// it; None when it is spelled any other way, and then nothing is
    /// read. A reader of one writer's output reads it so, far faster than
    /// member by member, and leaves every other spelling to the general
    /// scan. Objects `read` opens count to the nesting limit as the
    /// general scan counts them: `levels` of them at most.
    #[inline(always)]
    pub(crate) fn exact<T>(
        &self,
        levels: usize,
        read: impl FnOnce(&mut Exact<'_, 'a, '_>) -> Option<T>,
    ) -> Option<(T, Stepped)> {
        if self.depth + levels > MAX_DEPTH {
            return None;
        }
        let mut exact = Exact {
            sc: self.sc,
            at: self.at,
        };
        let value = read(&mut exact)?;
        Some((value, Stepped(exact.at)))
    }
}

impl<'a> Exact<'_, 'a, '_> {
    /// Steps over `bytes`, which must come next.
    #[inline(always)]
    pub(crate) fn expect(&mut self, bytes: &[u8]) -> Option<()> {
        // The PAD zero bytes past the line, none of them in `bytes`, stop
        // a comparison that reaches the end.
        debug_assert!(bytes.len() <= PAD && !bytes.contains(&0));
        (self.sc.b.get(self.at..self.at + bytes.len())? == bytes).then(|| self.at += bytes.len())
    }

    /// The next byte (0 at the end).
    #[inline(always)]
    pub(crate) fn peek(&self) -> u8 {
        self.sc.byte(self.at)
    }

    /// A string without escapes: its text between the quotes.
    #[inline(always)]
    pub(crate) fn plain_string(&mut self) -> Option<&'a str> {
        if self.peek() != b'"' {
            return None;
        }
        let (escaped, end) = self.sc.string(self.at).ok()?;
        if escaped {
            return None;
        }
        let text = self.sc.text(self.at + 1, end - 1);
        self.at = end;
        Some(text)
    }

    /// A number: its text.
    #[inline(always)]
    pub(crate) fn number(&mut self) -> Option<&'a str> {
        let end = self.sc.number(self.at).ok()?;
        let text = self.sc.text(self.at, end);
        self.at = end;
        Some(text)
    }
}

/// Scans a line that must hold one object, handing each member to
/// `member`. The line is read where it stands when `tail` (its buffer from
/// the line's start) holds a 0 byte right after it and runs at least
/// [`PAD`] bytes past it; otherwise on a copy made in `scratch`, kept from
/// call to call with the keys of the last line. Errors are those of
/// [`object_members`], whatever lines came before.
pub(crate) fn visit_object_in<'a>(
    line: &'a str,
    tail: &'a [u8],
    scratch: &mut LineScratch,
    member: impl Visit<'a>,
) -> Result<(), ScanError> {
    scratch.keys.start_line();
    scan_line(line, tail, &mut scratch.padded, &scratch.keys, |sc| {
        visit_top(sc, member)
    })
}

#[inline(always)]
fn visit_top<'a>(sc: &Scanner<'a, '_>, mut member: impl Visit<'a>) -> Result<(), ScanError> {
    top_object_on(sc, |sc, key, at| {
        member(key, Field { sc, at, depth: 1 }).map(|s| s.0)
    })
}

/// Scans a line that must hold one object, handing each member's key and
/// the position of its value to `member`, which scans the value.
#[inline(always)]
fn top_object<'a>(
    line: &'a str,
    member: impl FnMut(&Scanner<'a, '_>, Value<'a>, usize) -> Result<usize, ScanError>,
) -> Result<(), ScanError> {
    with_scanner(line, |sc| top_object_on(sc, member))
}

/// [`top_object`] on a line ready to scan.
#[inline(always)]
fn top_object_on<'a>(
    sc: &Scanner<'a, '_>,
    member: impl FnMut(&Scanner<'a, '_>, Value<'a>, usize) -> Result<usize, ScanError>,
) -> Result<(), ScanError> {
    let at = sc.ws(0);
    if sc.byte(at) != b'{' {
        return Err(sc.not_an_object(at));
    }
    let at = sc.object(at, 0, member)?;
    sc.end(at)
}

/// The values of the members named in `names`, in that order, found in
/// one pass over an object's members; the last of duplicate keys wins, as in
/// Python's json module.
pub(crate) fn pick<'c, const N: usize>(
    members: &[(Value<'c>, Value<'c>)],
    names: &[&str; N],
) -> [Option<Value<'c>>; N] {
    let mut slots = [None; N];
    for (k, v) in members {
        let i = match k {
            Value::String {
                raw,
                escaped: false,
            } => names.iter().position(|n| *n == &raw[1..raw.len() - 1]),
            k => k
                .as_str()
                .and_then(|key| names.iter().position(|n| *n == key)),
        };
        if let Some(i) = i {
            slots[i] = Some(*v);
        }
    }
    slots
}

/// The elements of an array's raw text (as returned by the scanner).
pub(crate) fn array_items<'a>(raw: &'a str, items: &mut Vec<Value<'a>>) -> Result<(), ScanError> {
    items.clear();
    // Most arrays in traces are `[]`, which needs no copy to be read.
    if raw.as_bytes().get(1) == Some(&b']') {
        return Ok(());
    }
    let mut scan = |sc: &Scanner<'a, '_>| {
        sc.array(0, 0, |sc, at| sc.value_to(at, 1, |v| items.push(v)))
            .map(drop)
    };
    // Short arrays are copied to the stack, which costs less than reaching
    // the thread's copy.
    const SHORT: usize = 64;
    let len = raw.len();
    if len > SHORT {
        return with_scanner(raw, scan);
    }
    let mut b = [0; SHORT + PAD];
    b[..len].copy_from_slice(raw.as_bytes());
    scan(&Scanner {
        s: raw,
        b: &b[..len + PAD],
        len,
        keys: None,
    })
}

impl<'a> Scanner<'a, '_> {
    /// The byte at `at`, or 0 at the end.
    #[inline(always)]
    fn byte(&self, at: usize) -> u8 {
        debug_assert!(at <= self.len && self.len + PAD == self.b.len());
        // SAFETY: positions never pass the end (see `Scanner`), and the
        // copy is longer than the line.
        unsafe { *self.b.get_unchecked(at) }
    }

    /// The sixteen bytes at `at`, which is inside a string.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn block(&self, at: usize) -> &[u8; 16] {
        debug_assert!(at <= self.len && at + 16 <= self.b.len());
        // SAFETY: positions never pass the end (see `Scanner`), and `PAD`
        // bytes, at least sixteen, follow it.
        unsafe { &*self.b.as_ptr().add(at).cast::<[u8; 16]>() }
    }

    /// The line's text from `start` to `end`, both positions of ASCII
    /// bytes or the end of the line, so character boundaries.
    #[inline(always)]
    fn text(&self, start: usize, end: usize) -> &'a str {
        debug_assert!(start <= end && end <= self.len);
        debug_assert!(self.s.is_char_boundary(start) && self.s.is_char_boundary(end));
        // SAFETY: the scanner never moves backwards or past the end, so
        // `start <= end <= len`, and both are character boundaries as said
        // above: the range is in bounds and the slice is valid UTF-8.
        unsafe { self.s.get_unchecked(start..end) }
    }

    #[cold]
    #[inline(never)]
    fn fail(&self, at: usize, reason: &'static str) -> ScanError {
        ScanError::new(reason, at)
    }

    /// After the top-level value at `at`: only whitespace may follow.
    #[inline(always)]
    fn end(&self, at: usize) -> Result<(), ScanError> {
        let at = self.ws(at);
        if at != self.len {
            return Err(self.fail(at, "trailing characters"));
        }
        Ok(())
    }

    /// Why a line whose value at `at` is not an object is refused:
    /// validate it first, so a broken line reads as broken, not as "not an
    /// object".
    #[cold]
    #[inline(never)]
    fn not_an_object(&self, at: usize) -> ScanError {
        match self.value(at, 0).and_then(|(_, at)| self.end(at)) {
            Err(e) => e,
            Ok(()) => ScanError::new("expected a JSON object", 0),
        }
    }

    /// The position of the value after the key that ends just before `at`:
    /// past whitespace, a ':', and whitespace.
    #[inline(never)]
    fn colon(&self, at: usize) -> Result<usize, ScanError> {
        let at = self.ws(at);
        if self.byte(at) != b':' {
            return Err(self.fail(at, "expected ':'"));
        }
        Ok(self.ws(at + 1))
    }

    /// The position past the whitespace at `at`: none, most often, or one
    /// space.
    #[inline(always)]
    fn ws(&self, mut at: usize) -> usize {
        if self.byte(at) > b' ' {
            return at;
        }
        at += usize::from(self.byte(at) == b' ');
        if self.byte(at) > b' ' {
            return at;
        }
        while let b' ' | b'\t' | b'\n' | b'\r' = self.byte(at) {
            at += 1;
        }
        at
    }

    /// The value at `at`.
    #[inline(always)]
    fn value(&self, at: usize, depth: usize) -> Scanned<'a> {
        let mut value = Value::Null;
        let end = self.value_to(at, depth, |v| value = v)?;
        Ok((value, end))
    }

    /// Scans the value at `at`, hands it to `take` and answers the position
    /// past it: scalars here, containers out of line. Each kind of value
    /// reaches `take` on a path of its own, so that the value is built where
    /// it is stored instead of passing through a merged copy.
    #[inline(always)]
    fn value_to(
        &self,
        at: usize,
        depth: usize,
        take: impl FnOnce(Value<'a>),
    ) -> Result<usize, ScanError> {
        let end = match self.byte(at) {
            b'"' => {
                let (escaped, end) = self.string(at)?;
                take(Value::String {
                    raw: self.text(at, end),
                    escaped,
                });
                end
            }
            b'1'..=b'9' => {
                let end = self.number_tail(self.digits_after(at))?;
                take(Value::Number(self.text(at, end)));
                end
            }
            b'-' | b'0' => {
                let end = self.number(at)?;
                take(Value::Number(self.text(at, end)));
                end
            }
            b't' => {
                let end = self.literal(at, b"true")?;
                take(Value::Bool(true));
                end
            }
            b'f' => {
                let end = self.literal(at, b"false")?;
                take(Value::Bool(false));
                end
            }
            b'n' => {
                let end = self.literal(at, b"null")?;
                take(Value::Null);
                end
            }
            // `{}` and `[]`: the closing bracket is the opening one plus 2.
            open @ (b'{' | b'[') if self.byte(at + 1) == open + 2 && depth < MAX_DEPTH => {
                let raw = self.text(at, at + 2);
                take(if open == b'{' {
                    Value::Object(raw)
                } else {
                    Value::Array(raw)
                });
                at + 2
            }
            b'{' | b'[' => {
                let (v, end) = self.container(at, depth)?;
                take(v);
                end
            }
            _ if at >= self.len => return Err(self.fail(at, "unexpected end of line")),
            _ => return Err(self.fail(at, "expected a value")),
        };
        Ok(end)
    }

    /// The container at `start`, at nesting `depth`, with everything in it.
    /// A loop with a stack of one bit per open container, not recursion:
    /// a line nested to the limit needs no more thread stack than a flat one.
    #[inline(never)]
    fn container(&self, start: usize, depth: usize) -> Scanned<'a> {
        /// Where the loop goes next.
        enum Step {
            /// `at` is the bracket of a container to open.
            Open,
            /// `at` is where the innermost container's next member goes.
            Member,
            /// A value in the innermost container ends before `at`.
            After,
        }
        let mut objects = [0u64; MAX_DEPTH / 64];
        // Open containers, less one: the innermost is at depth `depth + level`.
        let mut level = 0;
        let mut at = start;
        let mut step = Step::Open;
        loop {
            step = match step {
                Step::Open => {
                    if depth + level >= MAX_DEPTH {
                        return Err(self.fail(at, "nested too deeply"));
                    }
                    let open = self.byte(at);
                    let bit = 1 << (level % 64);
                    if open == b'{' {
                        objects[level / 64] |= bit;
                    } else {
                        objects[level / 64] &= !bit;
                    }
                    at = self.ws(at + 1);
                    if self.byte(at) == open + 2 {
                        at += 1;
                        match level.checked_sub(1) {
                            None => break,
                            Some(outer) => level = outer,
                        }
                        Step::After
                    } else {
                        Step::Member
                    }
                }
                Step::Member => {
                    if objects[level / 64] & (1 << (level % 64)) != 0 {
                        if self.byte(at) != b'"' {
                            return Err(self.fail(at, "expected a key"));
                        }
                        at = self.colon(self.string(at)?.1)?;
                    }
                    if let b'{' | b'[' = self.byte(at) {
                        level += 1;
                        Step::Open
                    } else {
                        at = self.value_to(at, depth + level + 1, drop)?;
                        Step::After
                    }
                }
                Step::After => {
                    at = self.ws(at);
                    let object = objects[level / 64] & (1 << (level % 64)) != 0;
                    match (self.byte(at), object) {
                        (b',', _) => {
                            at = self.ws(at + 1);
                            Step::Member
                        }
                        (b'}', true) | (b']', false) => {
                            at += 1;
                            match level.checked_sub(1) {
                                None => break,
                                Some(outer) => level = outer,
                            }
                            Step::After
                        }
                        (_, true) => return Err(self.fail(at, "expected ',' or '}'")),
                        (_, false) => return Err(self.fail(at, "expected ',' or ']'")),
                    }
                }
            };
        }
        let raw = self.text(start, at);
        Ok((
            if self.byte(start) == b'{' {
                Value::Object(raw)
            } else {
                Value::Array(raw)
            },
            at,
        ))
    }

    /// The position past `word` at `at`.
    #[inline(always)]
    fn literal(&self, at: usize, word: &'static [u8]) -> Result<usize, ScanError> {
        if self.b.get(at..at + word.len()) == Some(word) {
            Ok(at + word.len())
        } else {
            Err(self.fail(at, "expected a value"))
        }
    }

    /// The position past the digits at `at`, if there is at least one.
    #[inline(always)]
    fn digits(&self, start: usize) -> Option<usize> {
        let mut at = start;
        while self.byte(at).is_ascii_digit() {
            at += 1;
        }
        (at > start).then_some(at)
    }

    /// The position past the number at `start`.
    #[inline(always)]
    fn number(&self, start: usize) -> Result<usize, ScanError> {
        let at = start + usize::from(self.byte(start) == b'-');
        match self.byte(at) {
            b'0' => self.number_tail(at + 1),
            b'1'..=b'9' => self.number_tail(self.digits_after(at)),
            _ => Err(self.fail(at, "invalid number")),
        }
    }

    /// The position past the digits after the one at `at`.
    #[inline(always)]
    fn digits_after(&self, mut at: usize) -> usize {
        at += 1;
        while self.byte(at).is_ascii_digit() {
            at += 1;
        }
        at
    }

    /// The position past a number whose integer part ends at `at`.
    #[inline(always)]
    fn number_tail(&self, at: usize) -> Result<usize, ScanError> {
        match self.byte(at) {
            b'.' | b'e' | b'E' => self.fraction_exponent(at),
            _ => Ok(at),
        }
    }

    /// The rarer tail of a number at `at`: a fraction, an exponent or both.
    #[inline(never)]
    fn fraction_exponent(&self, mut at: usize) -> Result<usize, ScanError> {
        if self.byte(at) == b'.' {
            at = self
                .digits(at + 1)
                .ok_or_else(|| self.fail(at + 1, "invalid number"))?;
        }
        if let b'e' | b'E' = self.byte(at) {
            at += 1;
            if let b'+' | b'-' = self.byte(at) {
                at += 1;
            }
            at = self
                .digits(at)
                .ok_or_else(|| self.fail(at, "invalid number"))?;
        }
        Ok(at)
    }

    /// The escape flag of the string at `start`, and the position past it.
    /// Plain strings, most of them, are found sixteen bytes at a time
    /// without leaving this function; at a backslash or a control byte
    /// [`Self::string_rest`] takes over.
    #[inline(always)]
    fn string(&self, start: usize) -> Result<(bool, usize), ScanError> {
        let mut at = start + 1;
        #[cfg(target_arch = "x86_64")]
        loop {
            let found = special_mask16(self.block(at));
            if found == 0 {
                at += 16;
                continue;
            }
            at += found.trailing_zeros() as usize;
            if self.byte(at) == b'"' {
                return Ok((false, at + 1));
            }
            break;
        }
        self.string_rest(at)
    }

    /// The escape flag of the key at `start` and the position past it:
    /// the key that followed the last one when the line is visited and the
    /// bytes match, else the string scanned.
    #[inline(always)]
    fn key(&self, start: usize) -> Result<(bool, usize), ScanError> {
        let Some(keys) = self.keys else {
            return self.string(start);
        };
        match keys.recall(self.window(start)) {
            Some((escaped, len)) => Ok((escaped, start + len)),
            None => self.learn_key(keys, start),
        }
    }

    /// [`Self::key`] for a key not guessed: scanned, and learnt.
    #[inline(never)]
    fn learn_key(&self, keys: &KeyMemory, start: usize) -> Result<(bool, usize), ScanError> {
        let (escaped, end) = self.string(start)?;
        keys.learn(self.window(start), escaped, end - start);
        Ok((escaped, end))
    }

    /// The `KEY_WINDOW` bytes at `at`.
    #[inline(always)]
    fn window(&self, at: usize) -> &[u8; KEY_WINDOW] {
        debug_assert!(at <= self.len && at + KEY_WINDOW <= self.b.len());
        // SAFETY: positions never pass the end (see `Scanner`), and `PAD`
        // bytes, as many as `KEY_WINDOW`, follow it.
        unsafe { &*self.b.as_ptr().add(at).cast::<[u8; KEY_WINDOW]>() }
    }

    /// The rest of a string from `at`, which is inside it and past plain
    /// text only.
    #[inline(never)]
    fn string_rest(&self, mut at: usize) -> Result<(bool, usize), ScanError> {
        let mut escaped = false;
        loop {
            let Some(i) = find_special(self.b.get(at..self.len).unwrap_or_default()) else {
                return Err(self.fail(self.len, "unterminated string"));
            };
            at += i;
            match self.byte(at) {
                b'"' => return Ok((escaped, at + 1)),
                b'\\' => {
                    escaped = true;
                    at = self.escape(at + 1)?;
                }
                _ => return Err(self.fail(at, "control character in string")),
            }
        }
    }

    /// The position past the escape whose backslash is just before `at`.
    fn escape(&self, at: usize) -> Result<usize, ScanError> {
        match self.byte(at) {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Ok(at + 1),
            b'u' => {
                let hex = self.b.get(at + 1..at + 5);
                if hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                    Ok(at + 5)
                } else {
                    Err(self.fail(at, "invalid \\u escape"))
                }
            }
            _ => Err(self.fail(at, "invalid escape")),
        }
    }

    /// Scans the object at `start`, handing each member's key and the
    /// position of its value to `member`, which scans the value and answers
    /// the position past it. Answers the position past the object.
    #[inline(always)]
    fn object(
        &self,
        start: usize,
        depth: usize,
        mut member: impl FnMut(&Self, Value<'a>, usize) -> Result<usize, ScanError>,
    ) -> Result<usize, ScanError> {
        if depth >= MAX_DEPTH {
            return Err(self.fail(start, "nested too deeply"));
        }
        let mut at = self.ws(start + 1);
        if self.byte(at) == b'}' {
            return Ok(at + 1);
        }
        loop {
            if self.byte(at) != b'"' {
                return Err(self.fail(at, "expected a key"));
            }
            let (escaped, after) = self.key(at)?;
            let key = Value::String {
                raw: self.text(at, after),
                escaped,
            };
            at = if self.byte(after) == b':' {
                self.ws(after + 1)
            } else {
                self.colon(after)?
            };
            at = member(self, key, at)?;
            if self.byte(at) != b',' {
                at = self.ws(at);
            }
            match self.byte(at) {
                b',' => at = self.ws(at + 1),
                b'}' => return Ok(at + 1),
                _ => return Err(self.fail(at, "expected ',' or '}'")),
            }
        }
    }

    /// Scans the array at `start`, calling `item` with the position of each
    /// element to scan it. Answers the position past the array.
    #[inline(always)]
    fn array(
        &self,
        start: usize,
        depth: usize,
        mut item: impl FnMut(&Self, usize) -> Result<usize, ScanError>,
    ) -> Result<usize, ScanError> {
        if depth >= MAX_DEPTH {
            return Err(self.fail(start, "nested too deeply"));
        }
        let mut at = self.ws(start + 1);
        if self.byte(at) == b']' {
            return Ok(at + 1);
        }
        loop {
            at = self.ws(item(self, at)?);
            match self.byte(at) {
                b',' => at = self.ws(at + 1),
                b']' => return Ok(at + 1),
                _ => return Err(self.fail(at, "expected ',' or ']'")),
            }
        }
    }
}

#[cfg(test)]
mod reference;

#[cfg(test)]
mod tests;
