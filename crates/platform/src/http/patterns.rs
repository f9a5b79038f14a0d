//! Patterns a value's shape is checked with, written once so that what an
//! OpenAPI document says (`pattern`) and what the server enforces are the
//! same regular expression.

use std::sync::OnceLock;

use regex::Regex;

/// Unicode's white space (`char::is_whitespace`), spelled out as a class's
/// contents: `\s` and `\S` mean different sets to different regular
/// expression engines (Python's counts U+001C to U+001F, JavaScript's
/// U+FEFF), and a document is read by all of them.
macro_rules! white_space {
    () => {
        r"\t\n\x0B\x0C\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000"
    };
}

/// A string that is not blank: it holds a character that is not white
/// space ([`crate::http::input::is_blank`] is its negation). Route
/// attributes write it `\S` (they take only literals); the document's
/// finishing step ([`crate::http::openapi::finish`]) spells it out as this.
pub const NOT_BLANK: &str = concat!("[^", white_space!(), "]");

/// A host name (labels of letters, digits and hyphens; the last one starts
/// with a letter, since a numeric one would be read as an IPv4 address)
/// and an optional port from 1 to 65535.
macro_rules! host_and_port {
    () => {
        concat!(
            r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*",
            r"[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?",
            r"(?::(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?"
        )
    };
}

/// An http(s) origin: scheme, host, optional port; no path.
pub const HTTP_ORIGIN: &str = concat!("^https?://", host_and_port!(), "$");

/// An http(s) URL: an origin, then optionally a path, query or fragment
/// without spaces.
pub const HTTP_URL: &str = concat!(
    "^https?://",
    host_and_port!(),
    "(?:[/?#][^",
    white_space!(),
    "]*)?$"
);

fn matches(cell: &'static OnceLock<Option<Regex>>, pattern: &str, s: &str) -> bool {
    cell.get_or_init(|| Regex::new(pattern).ok())
        .as_ref()
        .is_some_and(|re| re.is_match(s))
}

/// Whether `s` matches [`HTTP_ORIGIN`].
pub fn is_http_origin(s: &str) -> bool {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    matches(&RE, HTTP_ORIGIN, s)
}

/// Whether `s` matches [`HTTP_URL`].
pub fn is_http_url(s: &str) -> bool {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    matches(&RE, HTTP_URL, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_and_urls_have_the_shapes_their_patterns_say() {
        for ok in [
            "https://example.com",
            "http://localhost:19006",
            "https://a-b.c.io:65535",
        ] {
            assert!(is_http_origin(ok), "{ok}");
            assert!(is_http_url(ok), "{ok}");
        }
        for bad in [
            "https://example.com/",
            "ftp://example.com",
            "https://1.2.3.4",
            "https://x:65536",
            "https://-a.com",
        ] {
            assert!(!is_http_origin(bad), "{bad}");
        }
        assert!(is_http_url("https://example.com/a?b=c#d"));
        assert!(!is_http_url("https://example.com/a b"));
        assert!(!is_http_url("https://example.com/a\u{85}b"));
        assert!(is_http_url("https://example.com/a\u{1c}b"));
        assert!(!is_http_url("javascript:alert(1)"));
    }

    #[test]
    fn not_blank_is_what_is_blank_is_not() {
        let re = Regex::new(NOT_BLANK).unwrap_or_else(|e| panic!("{e}"));
        for s in ["", " ", "\t\u{85}\u{3000}", "\u{2028}"] {
            assert!(crate::http::input::is_blank(s) && !re.is_match(s), "{s:?}");
        }
        for s in ["a", " a ", "\u{1c}", "\u{feff}", "\u{0}"] {
            assert!(!crate::http::input::is_blank(s) && re.is_match(s), "{s:?}");
        }
    }
}
