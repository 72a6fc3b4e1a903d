//! How the dashboard and its charts are written: a [`Page`] that escapes
//! every text unless the code says it is markup, the [`Markup`] fragments
//! built with it, and the [`html!`] macro that escapes its arguments.

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use crate::render::escape::escape;
use crate::render::words;

/// HTML (or inline SVG) being written. Nothing takes a text unescaped: a
/// literal of the code goes in with [`Page::lit`], a fragment built
/// elsewhere with [`Page::markup`], anything else is escaped.
#[derive(Default)]
pub(crate) struct Page(String);

impl Page {
    pub(crate) fn with_capacity(n: usize) -> Page {
        Page(String::with_capacity(n))
    }

    /// Markup the code wrote: a `'static` literal cannot come from a trace.
    pub(crate) fn lit(&mut self, s: &'static str) {
        self.0.push_str(s);
    }

    /// Text, escaped.
    pub(crate) fn text(&mut self, s: &str) {
        self.0.push_str(&escape(s));
    }

    /// A fragment built elsewhere, as it is.
    pub(crate) fn markup(&mut self, m: &Markup) {
        self.0.push_str(&m.0);
    }

    /// Only for [`html!`], whose arguments went through [`Interpolate`];
    /// anything else written here would not be escaped.
    #[doc(hidden)]
    pub(crate) fn write_interpolated(&mut self, args: fmt::Arguments<'_>) {
        // Writing into a String cannot fail.
        let _ = self.0.write_fmt(args);
    }

    pub(crate) fn into_markup(self) -> Markup {
        Markup(self.0)
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

/// A finished fragment of HTML or SVG: written through a [`Page`], or
/// vouched for with [`Markup::from_escaped`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Markup(String);

impl Markup {
    /// The trust boundary: `s` is already safe HTML, every text in it
    /// escaped. For the shared texts of [`words`] written with [`Html`],
    /// which escapes what it is given; not for anything else.
    pub(crate) fn from_escaped(s: String) -> Markup {
        Markup(s)
    }

    #[cfg(test)]
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

/// How a value of [`html!`] is written: text escaped, numbers and
/// [`Markup`] as they are.
pub(crate) trait Interpolate {
    type Shown<'a>: fmt::Display
    where
        Self: 'a;
    fn shown(&self) -> Self::Shown<'_>;
}

impl Interpolate for str {
    type Shown<'a> = Cow<'a, str>;
    fn shown(&self) -> Cow<'_, str> {
        escape(self)
    }
}

impl Interpolate for String {
    type Shown<'a> = Cow<'a, str>;
    fn shown(&self) -> Cow<'_, str> {
        escape(self)
    }
}

impl Interpolate for Cow<'_, str> {
    type Shown<'a>
        = Cow<'a, str>
    where
        Self: 'a;
    fn shown(&self) -> Cow<'_, str> {
        escape(self)
    }
}

impl Interpolate for Markup {
    type Shown<'a> = &'a str;
    fn shown(&self) -> &str {
        &self.0
    }
}

impl<T: Interpolate + ?Sized> Interpolate for &T {
    type Shown<'a>
        = T::Shown<'a>
    where
        Self: 'a;
    fn shown(&self) -> T::Shown<'_> {
        (**self).shown()
    }
}

// A number is itself, so `{:.2}` and the like format it as before.
macro_rules! numbers_as_they_are {
    ($($t:ty),*) => {$(
        impl Interpolate for $t {
            type Shown<'a> = $t;
            fn shown(&self) -> $t {
                *self
            }
        }
    )*};
}

numbers_as_they_are!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64
);

/// Whether every `{…}` of a format string takes its argument by position or
/// by one of `names`. `format_args!` would write a variable it captures
/// from the caller unescaped; [`html!`] refuses to compile such a string.
#[doc(hidden)]
pub(crate) const fn takes_only_arguments(fmt: &str, names: &[&str]) -> bool {
    let b = fmt.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'{' {
            i += 1;
            continue;
        }
        if i + 1 < b.len() && b[i + 1] == b'{' {
            i += 2;
            continue;
        }
        let start = i + 1;
        let mut end = start;
        while end < b.len() && b[end] != b'}' && b[end] != b':' {
            end += 1;
        }
        if !is_position(b, start, end) && !is_one_of(b, start, end, names) {
            return false;
        }
        i = end;
    }
    true
}

/// `b[start..end]` is empty or a number.
const fn is_position(b: &[u8], start: usize, end: usize) -> bool {
    let mut k = start;
    while k < end {
        if !b[k].is_ascii_digit() {
            return false;
        }
        k += 1;
    }
    true
}

/// `b[start..end]` is one of `names`.
const fn is_one_of(b: &[u8], start: usize, end: usize, names: &[&str]) -> bool {
    let mut n = 0;
    while n < names.len() {
        let name = names[n].as_bytes();
        if name.len() == end - start {
            let mut k = 0;
            while k < name.len() && name[k] == b[start + k] {
                k += 1;
            }
            if k == name.len() {
                return true;
            }
        }
        n += 1;
    }
    false
}

/// Writes a format string literal onto a [`Page`], every argument through
/// [`Interpolate`]: `html!(page, "<td>{}</td>", name)` escapes `name`.
/// Arguments are all positional or all named (`rank = s.rank`), a mix does
/// not compile; nor does a string that names a variable of its own
/// (`"{name}"`), which `format_args!` would capture unescaped.
macro_rules! html {
    ($page:expr, $fmt:literal, $($name:ident = $value:expr),+ $(,)?) => {{
        const {
            assert!(
                $crate::render::markup::takes_only_arguments(
                    $fmt,
                    &[$(stringify!($name)),+],
                ),
                "html!: pass every value as an argument, so it is escaped",
            )
        };
        $page.write_interpolated(format_args!(
            $fmt,
            $($name = $crate::render::markup::Interpolate::shown(&$value)),+
        ))
    }};
    ($page:expr, $fmt:literal $(, $arg:expr)* $(,)?) => {{
        const {
            assert!(
                $crate::render::markup::takes_only_arguments($fmt, &[]),
                "html!: pass every value as an argument, so it is escaped",
            )
        };
        $page.write_interpolated(format_args!(
            $fmt,
            $($crate::render::markup::Interpolate::shown(&$arg)),*
        ))
    }};
}

pub(crate) use html;

/// HTML markup for the shared texts of [`words`]: it escapes every text it
/// is given, so what they return may become [`Markup::from_escaped`].
pub(crate) struct Html;

impl words::Markup for Html {
    fn text<'a>(&self, s: &'a str) -> Cow<'a, str> {
        escape(s)
    }
    fn strong(&self, s: &str) -> String {
        let mut page = Page::default();
        html!(page, "<strong>{}</strong>", s);
        page.0
    }
    fn code(&self, s: &str) -> String {
        let mut page = Page::default();
        html!(page, "<code>{}</code>", s);
        page.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_text_and_attributes() {
        assert_eq!(escape("plain"), "plain");
        assert_eq!(
            escape(r#""><img src=x onerror='a()'>&"#),
            "&quot;&gt;&lt;img src=x onerror=&#39;a()&#39;&gt;&amp;"
        );
    }

    #[test]
    fn text_arguments_are_escaped() {
        let mut page = Page::default();
        let owned = String::from("<script>alert(1)</script>");
        let cow: Cow<'_, str> = Cow::Borrowed("a&b");
        html!(page, "<td>{}</td><td>{}</td>", owned, cow);
        html!(page, "<b title=\"{t}\">", t = "\"x'");
        page.text("<i>");
        assert_eq!(
            page.as_str(),
            "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td><td>a&amp;b</td>\
             <b title=\"&quot;x&#39;\">&lt;i&gt;"
        );
    }

    #[test]
    fn markup_is_written_as_it_is() {
        let mut inner = Page::default();
        html!(inner, "<em>{}</em>", "<");
        let inner = inner.into_markup();
        let mut page = Page::default();
        html!(page, "<p>{}</p>", inner);
        page.markup(&inner);
        page.lit("<br>");
        assert_eq!(page.as_str(), "<p><em>&lt;</em></p><em>&lt;</em><br>");
        assert_eq!(Markup::from_escaped("<b>x</b>".into()).as_str(), "<b>x</b>");
    }

    #[test]
    fn numbers_keep_their_format() {
        let mut page = Page::default();
        let w = 12.345_f64;
        html!(page, "{:.2} {} ", 1.0_f64 / 3.0, 7u64);
        html!(page, "{w:.1} {n:>3}", w = w, n = 5usize);
        assert_eq!(page.as_str(), "0.33 7 12.3   5");
    }

    #[test]
    fn only_arguments_are_taken() {
        assert!(takes_only_arguments("{} {0} {:.2} {{x}}", &[]));
        assert!(takes_only_arguments("{a} {b:.1}", &["a", "b"]));
        assert!(!takes_only_arguments("{a}", &[]));
        assert!(!takes_only_arguments("{ab}", &["a", "b"]));
        assert!(!takes_only_arguments("{} {x:.2}", &["a"]));
    }
}
