//! Timestamps: reading the spellings trace files use (RFC 3339, ISO dates,
//! epoch seconds, milliseconds or nanoseconds) and writing RFC 3339 in UTC.

use std::fmt;

/// An instant as nanoseconds since the Unix epoch, UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i128);

const NANOS_PER_SEC: i128 = 1_000_000_000;

impl Timestamp {
    pub fn from_unix_nanos(n: i128) -> Self {
        Timestamp(n)
    }

    /// The instants RFC 3339 can write (years 0000 to 9999): a record's
    /// time is its text, so an instant past them would be read back as
    /// none, and a stage in process would see a time the pipeline does not.
    pub(crate) const WRITABLE: std::ops::Range<i128> =
        -62_167_219_200 * NANOS_PER_SEC..253_402_300_800 * NANOS_PER_SEC;

    /// The instant, if RFC 3339 can write it.
    pub(crate) fn writable(n: i128) -> Option<Self> {
        Timestamp::WRITABLE.contains(&n).then_some(Timestamp(n))
    }

    /// Epoch seconds, or milliseconds when the value is too large to be
    /// seconds (the rule pydantic applies, so lax inputs agree).
    pub(crate) fn from_epoch_number(x: f64) -> Option<Self> {
        if !x.is_finite() {
            return None;
        }
        let secs = if x.abs() > 2e10 { x / 1000.0 } else { x };
        if secs.abs() > 1e13 {
            return None;
        }
        Timestamp::writable((secs * 1e9).round() as i128)
    }

    /// Parses an ISO 8601 / RFC 3339 date or date-time; a date-time without
    /// an offset is taken as UTC. Digits-only text is read as an epoch number.
    pub(crate) fn parse(s: &str) -> Option<Self> {
        parse_common(s.as_bytes()).or_else(|| parse_any(s))
    }

    /// A date-time spelled `YYYY-MM-DDTHH:MM:SS` then `Z`, `+00:00` or
    /// nothing, as most traces spell it: its instant, and its first 19
    /// bytes, which are what [`Timestamp::write_rfc3339`] writes for it
    /// before the `Z`, so that a writer may copy them instead.
    pub(crate) fn parse_utc(s: &str) -> Option<(Self, &str)> {
        let (text, zone) = s.split_at_checked(19)?;
        // A leap second (:60) is read as the next minute's first, so its
        // text is not written back.
        if !matches!(zone, "" | "Z" | "+00:00") || text.as_bytes()[17] > b'5' {
            return None;
        }
        Some((parse_common(s.as_bytes())?, text))
    }

    /// Days since 1970-01-01, UTC.
    pub(crate) fn day_number(&self) -> i64 {
        self.units_of(NANOS_PER_SEC * 86_400)
    }

    /// Midnight, UTC, of a day number.
    pub(crate) fn from_day_number(day: i64) -> Self {
        Timestamp(day as i128 * NANOS_PER_SEC * 86_400)
    }

    /// Hours since the epoch, UTC.
    pub(crate) fn hour_number(&self) -> i64 {
        self.units_of(NANOS_PER_SEC * 3600)
    }

    /// Whole `unit`s (of nanoseconds) since the epoch, rounded down.
    fn units_of(&self, unit: i128) -> i64 {
        // Instants within 292 years of 1970 fit an i64, whose division
        // compiles inline; an i128's is a library call, made for every
        // failure the grouper counts.
        match (i64::try_from(self.0), i64::try_from(unit)) {
            (Ok(n), Ok(unit)) => n.div_euclid(unit),
            _ => self.0.div_euclid(unit) as i64,
        }
    }

    /// The start of an hour number.
    pub(crate) fn from_hour_number(hour: i64) -> Self {
        Timestamp(hour as i128 * NANOS_PER_SEC * 3600)
    }

    /// The calendar day, `YYYY-MM-DD`, in UTC.
    pub(crate) fn day(&self) -> String {
        let (y, m, d) = civil_from_days(self.0.div_euclid(NANOS_PER_SEC * 86_400) as i64);
        format!("{y:04}-{m:02}-{d:02}")
    }
}

impl Timestamp {
    /// Appends the RFC 3339 text (as Display gives it) without formatting
    /// machinery: this runs once per event on the parse hot path.
    pub(crate) fn write_rfc3339(&self, out: &mut Vec<u8>) {
        match self.ascii() {
            Some((text, len)) => out.extend_from_slice(&text[..len]),
            None => out.extend_from_slice(self.to_string().as_bytes()),
        }
    }

    /// The RFC 3339 text of an instant from 1970 to 2554 (a buffer and how
    /// much of it is the text); None for others, which go the slow way.
    fn ascii(&self) -> Option<([u8; 30], usize)> {
        // Such instants fit a u64 of nanoseconds, whose divisions by
        // constants compile to multiplications; an i128's are library
        // calls (about 300 instructions an event).
        let n = u64::try_from(self.0).ok()?;
        let secs = n / NANOS_PER_SEC as u64;
        let nanos = (n % NANOS_PER_SEC as u64) as u32;
        let (y, m, d) = civil_from_days((secs / 86_400) as i64);
        let sod = (secs % 86_400) as u32;
        // Years to 2554 here: within what `text_of` writes.
        Some(text_of(y as u32, m, d, sod, nanos))
    }
}

/// The RFC 3339 text of a UTC date (year 0 to 9999), second of the day and
/// nanoseconds, without formatting machinery: every event's time is
/// written, and `write!` cost more than the rest of the work. The buffer
/// and how much of it is the text.
fn text_of(year: u32, month: u32, day: u32, sod: u32, nanos: u32) -> ([u8; 30], usize) {
    let mut text = *b"0000-00-00T00:00:00.000000000Z";
    for (at, n) in [
        (0, year / 100),
        (2, year % 100),
        (5, month),
        (8, day),
        (11, sod / 3600),
        (14, sod / 60 % 60),
        (17, sod % 60),
    ] {
        text[at..at + 2].copy_from_slice(digit_pair(n));
    }
    if nanos == 0 {
        text[19] = b'Z';
        return (text, 20);
    }
    let mut n = nanos;
    for i in (20..29).rev() {
        text[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    let digits = 9 - decimal_zeros(nanos);
    text[20 + digits] = b'Z';
    (text, 21 + digits)
}

/// The two ASCII digits of `n`, which is below 100.
fn digit_pair(n: u32) -> &'static [u8] {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let at = 2 * n as usize;
    &PAIRS[at..at + 2]
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some((text, len)) = self.ascii() else {
            return write_slowly(self, f);
        };
        // Only ASCII digits and separators were written.
        f.write_str(std::str::from_utf8(&text[..len]).map_err(|_| fmt::Error)?)
    }
}

impl serde::Serialize for Timestamp {
    /// As RFC 3339 text, as records spell times.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The general form, for years outside 0..=9999.
fn write_slowly(t: &Timestamp, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let secs = t.0.div_euclid(NANOS_PER_SEC);
    let nanos = t.0.rem_euclid(NANOS_PER_SEC) as u32;
    let sod = secs.rem_euclid(86_400) as u32;
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400) as i64);
    write!(
        f,
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    )?;
    if nanos != 0 {
        let frac = format!("{nanos:09}");
        write!(f, ".{}", frac.trim_end_matches('0'))?;
    }
    f.write_str("Z")
}

/// Trailing decimal zeros of a fraction's nine digits.
fn decimal_zeros(mut n: u32) -> usize {
    let mut zeros = 0;
    while zeros < 9 && n.is_multiple_of(10) {
        n /= 10;
        zeros += 1;
    }
    zeros
}

/// [`Timestamp::parse`] for every spelling it reads.
fn parse_any(s: &str) -> Option<Timestamp> {
    let s = s.trim();
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-')
    {
        if let Some(ts) = parse_iso(s) {
            return Some(ts);
        }
        return s.parse::<f64>().ok().and_then(Timestamp::from_epoch_number);
    }
    parse_iso(s)
}

/// The spelling nearly every trace and every triage record uses,
/// `YYYY-MM-DDTHH:MM:SS` then `Z`, `+HH:MM`, `-HH:MM` or nothing, read in
/// one pass (the general reader cost about 600 instructions an event, on
/// triage-group's hot path). Anything else, or a field out of range, is
/// left to [`parse_any`], which gives the same instant for what this reads.
fn parse_common(b: &[u8]) -> Option<Timestamp> {
    let (t, zone) = b.split_at_checked(19)?;
    let offset_secs = match zone {
        [] | [b'Z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let o = i64::from(two_digits(*h1, *h2)? * 3600 + two_digits(*m1, *m2)? * 60);
            if *sign == b'-' { -o } else { o }
        }
        _ => return None,
    };
    // Every digit checked in one branch-free pass, then read unchecked: a
    // check and a branch per pair cost about 100 instructions a timestamp.
    let mut d = [0u8; 19];
    for (d, c) in d.iter_mut().zip(t) {
        *d = c.wrapping_sub(b'0');
    }
    let not_digits = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
        .iter()
        .fold(false, |bad, &i| bad | (d[i] > 9));
    if not_digits || (t[4], t[7], t[10], t[13], t[16]) != (b'-', b'-', b'T', b':', b':') {
        return None;
    }
    let pair = |i: usize| u32::from(d[i]) * 10 + u32::from(d[i + 1]);
    let year = i64::from(pair(0) * 100 + pair(2));
    let (month, day) = (pair(5), pair(8));
    let (hour, minute, second) = (pair(11), pair(14), pair(17));
    if !(1..=12).contains(&month)
        || day == 0
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let secs = days_from_civil(year, month, day) * 86_400
        + i64::from(hour * 3600 + minute * 60 + second)
        - offset_secs;
    Some(Timestamp(secs as i128 * NANOS_PER_SEC))
}

fn two_digits(tens: u8, ones: u8) -> Option<u32> {
    (tens.is_ascii_digit() && ones.is_ascii_digit())
        .then(|| u32::from(tens - b'0') * 10 + u32::from(ones - b'0'))
}

fn parse_iso(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let year = num(&b[0..4])? as i64;
    let month = num(&b[5..7])?;
    let day = num(&b[8..10])?;
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    // Seconds fit an i64 for any four-digit year: one wide multiply at the end.
    let mut secs = days_from_civil(year, month, day) * 86_400;
    let rest = &b[10..];
    if rest.is_empty() {
        return Some(Timestamp(secs as i128 * NANOS_PER_SEC));
    }
    if !(rest[0] == b'T' || rest[0] == b't' || rest[0] == b' ') || rest.len() < 6 {
        return None;
    }
    let t = &rest[1..];
    let hour = num(&t[0..2])?;
    if t[2] != b':' {
        return None;
    }
    let minute = num(&t[3..5])?;
    let mut i = 5;
    let mut second = 0;
    if t.len() >= 8 && t[5] == b':' {
        second = num(&t[6..8])?;
        i = 8;
    }
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut frac: i128 = 0;
    if i < t.len() && (t[i] == b'.' || t[i] == b',') {
        i += 1;
        let start = i;
        while i < t.len() && t[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
        let digits = &t[start..i.min(start + 9)];
        frac = num(digits)? as i128 * 10i128.pow(9 - digits.len() as u32);
    }
    let offset_secs: i64 = match &t[i..] {
        [] | [b'Z'] | [b'z'] => 0,
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let (h, m) = match rest {
                [h1, h2, b':', m1, m2] | [h1, h2, m1, m2] => (num(&[*h1, *h2])?, num(&[*m1, *m2])?),
                [h1, h2] => (num(&[*h1, *h2])?, 0),
                _ => return None,
            };
            let o = (h * 3600 + m * 60) as i64;
            if *sign == b'-' { -o } else { o }
        }
        _ => return None,
    };
    secs += (hour * 3600 + minute * 60 + second) as i64 - offset_secs;
    Some(Timestamp(secs as i128 * NANOS_PER_SEC + frac))
}

/// The value of one to nine ASCII digits (no more are ever read).
#[inline]
fn num(b: &[u8]) -> Option<u32> {
    if b.is_empty() || b.len() > 9 {
        return None;
    }
    b.iter().try_fold(0u32, |acc, &d| {
        let digit = d.wrapping_sub(b'0');
        (digit < 10).then_some(acc * 10 + digit as u32)
    })
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's days-from-civil algorithm.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Days and hours since the epoch round down, before 1970 too, and
    /// past what an i64 of nanoseconds holds.
    #[test]
    fn days_and_hours_round_down_at_any_instant() {
        let day = NANOS_PER_SEC * 86_400;
        for n in [
            0,
            1,
            -1,
            day,
            day - 1,
            -day,
            -day - 1,
            i128::from(i64::MAX),
            i128::from(i64::MIN),
            1i128 << 70,
            -(1i128 << 70),
        ] {
            let t = Timestamp(n);
            assert_eq!(t.day_number(), n.div_euclid(day) as i64, "{n}");
            assert_eq!(
                t.hour_number(),
                n.div_euclid(NANOS_PER_SEC * 3600) as i64,
                "{n}"
            );
        }
    }

    fn norm(s: &str) -> Option<String> {
        Timestamp::parse(s).map(|t| t.to_string())
    }

    #[test]
    fn reads_the_common_spellings() {
        assert_eq!(
            norm("2026-04-25T12:00:00+00:00").unwrap(),
            "2026-04-25T12:00:00Z"
        );
        assert_eq!(
            norm("2026-04-25T14:30:00+02:30").unwrap(),
            "2026-04-25T12:00:00Z"
        );
        assert_eq!(norm("2026-04-25 12:00:00").unwrap(), "2026-04-25T12:00:00Z");
        assert_eq!(
            norm("2026-04-25T12:00:00.250Z").unwrap(),
            "2026-04-25T12:00:00.25Z"
        );
        assert_eq!(norm("2026-04-25").unwrap(), "2026-04-25T00:00:00Z");
        assert_eq!(norm("1700000000").unwrap(), "2023-11-14T22:13:20Z");
        assert_eq!(norm("1700000000000").unwrap(), "2023-11-14T22:13:20Z");
        assert_eq!(
            norm("1969-12-31T23:59:59Z").unwrap(),
            "1969-12-31T23:59:59Z"
        );
    }

    #[test]
    fn refuses_what_is_not_a_time() {
        for bad in [
            "",
            "garbage",
            "2026-13-01",
            "2026-02-30",
            "2026-04-25T25:00:00Z",
            "2026-04-25Tx",
        ] {
            assert_eq!(norm(bad), None, "{bad}");
        }
    }

    #[test]
    fn fast_writer_matches_display() {
        for s in [
            "2026-04-25T12:00:00Z",
            "1969-12-31T23:59:59Z",
            "2026-04-25T12:00:00.25Z",
            "0001-01-01T00:00:00Z",
        ] {
            let t = Timestamp::parse(s).unwrap();
            let mut out = Vec::new();
            t.write_rfc3339(&mut out);
            assert_eq!(String::from_utf8(out).unwrap(), t.to_string());
        }
    }

    #[test]
    fn utc_spelling_is_what_the_writer_writes() {
        for s in [
            "2026-04-25T12:00:00Z",
            "2026-04-25T12:00:59+00:00",
            "0001-01-01T00:00:00",
            "1969-12-31T23:59:59Z",
        ] {
            let (t, text) = Timestamp::parse_utc(s).unwrap();
            assert_eq!(Some(t), Timestamp::parse(s), "{s}");
            assert_eq!(format!("{text}Z"), t.to_string(), "{s}");
        }
        for s in [
            "2026-04-25T12:00:60Z",
            "2026-04-25T12:00:00+01:00",
            "2026-04-25 12:00:00Z",
            "2026-04-25T12:00:00.5Z",
            "2026-02-30T12:00:00Z",
            "2026-04-25",
        ] {
            assert_eq!(Timestamp::parse_utc(s), None, "{s}");
        }
    }

    /// Display's general form, for any instant.
    struct Slowly(Timestamp);

    impl fmt::Display for Slowly {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write_slowly(&self.0, f)
        }
    }

    proptest::proptest! {
        /// Display's digit-by-digit form writes what the general form
        /// writes, fractions and years before the epoch included.
        #[test]
        fn display_writes_the_general_form(
            nanos in -62_135_596_800i128 * NANOS_PER_SEC..253_402_300_800i128 * NANOS_PER_SEC,
            trim in 0u32..10,
        ) {
            let t = Timestamp(nanos - nanos.rem_euclid(10i128.pow(trim)));
            proptest::prop_assert_eq!(t.to_string(), Slowly(t).to_string());
        }

        /// The fast writer writes what Display writes, for any instant
        /// within ten thousand years of the epoch.
        #[test]
        fn fast_writer_writes_what_display_writes(
            nanos in -315_569_520_000i128 * NANOS_PER_SEC..315_569_520_000i128 * NANOS_PER_SEC,
            whole in proptest::bool::ANY,
        ) {
            let t = Timestamp(if whole { nanos - nanos.rem_euclid(NANOS_PER_SEC) } else { nanos });
            let mut out = Vec::new();
            t.write_rfc3339(&mut out);
            proptest::prop_assert_eq!(String::from_utf8(out).unwrap(), t.to_string());
        }

        /// Text read by `parse_utc` is the instant's own spelling.
        #[test]
        fn utc_text_round_trips(
            year in 0u32..10_000,
            (month, day) in (0u32..14, 0u32..33),
            (hour, minute, second) in (0u32..26, 0u32..62, 0u32..62),
            zone in proptest::sample::select(vec!["", "Z", "+00:00", "-00:00", "+05:30"]),
        ) {
            let s = format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}{zone}");
            if let Some((t, text)) = Timestamp::parse_utc(&s) {
                proptest::prop_assert_eq!(Some(t), Timestamp::parse(&s));
                proptest::prop_assert_eq!(format!("{text}Z"), t.to_string());
            }
        }

        /// The one-pass reader of the common spelling agrees with the
        /// general one wherever it answers, and answers for the spelling
        /// triage-parse writes.
        #[test]
        fn common_spelling_reads_as_the_general_reader_does(
            year in 0u32..10_000,
            (month, day) in (0u32..14, 0u32..33),
            (hour, minute, second) in (0u32..26, 0u32..62, 0u32..62),
            zone in proptest::sample::select(vec!["", "Z", "z", "+05:30", "-11:45", "+0530", " "]),
            date_time in proptest::sample::select(vec!['T', ' ', 't']),
        ) {
            let s = format!(
                "{year:04}-{month:02}-{day:02}{date_time}{hour:02}:{minute:02}:{second:02}{zone}"
            );
            let common = parse_common(s.as_bytes());
            if let Some(t) = common {
                proptest::prop_assert_eq!(Some(t), parse_any(&s), "{}", s);
            }
            if date_time == 'T' && matches!(zone, "" | "Z" | "+05:30" | "-11:45") {
                proptest::prop_assert_eq!(common.is_some(), parse_any(&s).is_some(), "{}", s);
            }
            proptest::prop_assert_eq!(Timestamp::parse(&s), parse_any(&s), "{}", s);
        }
    }

    /// Every byte at every position of the common spelling: the one-pass
    /// reader refuses it or agrees with the general reader.
    #[test]
    fn common_reader_refuses_a_stray_byte() {
        for at in 0..25 {
            for byte in 0..=255u8 {
                let mut s = b"2024-02-29T23:59:60+05:30".to_vec();
                s[at] = byte;
                let common = parse_common(&s);
                match std::str::from_utf8(&s) {
                    Ok(text) if common.is_some() => {
                        assert_eq!(common, parse_any(text), "{text}")
                    }
                    Ok(_) => {}
                    Err(_) => assert_eq!(common, None, "{s:?}"),
                }
            }
        }
    }

    #[test]
    fn day_is_utc() {
        assert_eq!(
            Timestamp::parse("2026-04-25T23:30:00-02:00").unwrap().day(),
            "2026-04-26"
        );
    }
}
