//! Input values parsed at the edge: a value of these types is valid.

use chrono::{DateTime, NaiveDate, Utc};
use keel_platform::values::{Refusal, Rule, Text, text_schema};
use utoipa::openapi::KnownFormat;
use utoipa::openapi::schema::{ObjectBuilder, SchemaFormat, Type};

pub use super::invalid::Invalid;
use super::sent::{Field, documented_fields};

/// 3–30 characters of `a-z A-Z 0-9 _ . -`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Username(String);

impl Username {
    /// What a username is made of, for the document.
    pub const PATTERN: &str = r"^[A-Za-z0-9_.-]{3,30}$";

    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let ok_len = (3..=30).contains(&raw.chars().count());
        let ok_chars = raw
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if ok_len && ok_chars {
            Ok(Self(raw.to_owned()))
        } else {
            Err(Invalid::new(
                "username",
                "must be 3 to 30 characters of a-z, A-Z, 0-9, _ . -",
            ))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Case-insensitive identity (and the slug).
    pub fn key(&self) -> String {
        self.0.to_ascii_lowercase()
    }
}

impl Field for Username {
    fn parse(_: &str, raw: String) -> Result<Self, Invalid> {
        Self::parse(&raw)
    }

    fn schema() -> ObjectBuilder {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(Self::PATTERN))
    }
}

/// A syntactically valid address of at most 254 characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email(String);

impl Email {
    pub fn parse(field: &str, raw: &str) -> Result<Self, Invalid> {
        let trimmed = raw.trim();
        if trimmed.len() <= 254
            && email_address::EmailAddress::is_valid(trimmed)
            && trimmed.contains('.')
        {
            Ok(Self(trimmed.to_owned()))
        } else {
            Err(Invalid::new(field, "must be a valid email address"))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The part before `@`.
    pub fn local_part(&self) -> &str {
        self.0.split('@').next().unwrap_or_default()
    }

    pub fn key(&self) -> String {
        self.0.to_lowercase()
    }
}

impl Field for Email {
    fn parse(field: &str, raw: String) -> Result<Self, Invalid> {
        Self::parse(field, &raw)
    }

    fn schema() -> ObjectBuilder {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Email)))
            .max_length(Some(254))
    }
}

/// A new password as sent: 8 to 128 characters, not yet checked against
/// the person it is for (see [`Password`]).
pub struct NewPassword(String);

impl Field for NewPassword {
    fn parse(field: &str, raw: String) -> Result<Self, Invalid> {
        if (8..=128).contains(&raw.chars().count()) {
            Ok(Self(raw))
        } else {
            Err(Invalid::new(field, "must be 8 to 128 characters"))
        }
    }

    fn schema() -> ObjectBuilder {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(8))
            .max_length(Some(128))
    }
}

/// A new password: 8–128 characters, not too easy to guess (not one of
/// the commonly used passwords, nor a simple pattern, nor made of the
/// user's `context`: their username and address).
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    pub fn parse(field: &str, new: NewPassword, context: &[&str]) -> Result<Self, Invalid> {
        let raw = new.0;
        if let Some(why) = keel_platform::password::too_guessable(&raw, context) {
            return Err(Invalid::new(field, format!("is too easy to guess: {why}")));
        }
        Ok(Self(raw))
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

/// The rule of accounts' short texts: not blank, kept trimmed, a refusal
/// worded `must be 1 to {MAX} characters`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, utoipa::ToSchema)]
pub struct OneTo;

impl Rule for OneTo {
    const NOT_BLANK: bool = true;
    const TRIM: bool = true;

    fn words(refusal: Refusal, max: usize) -> String {
        match refusal {
            Refusal::NotString => refusal.words(max),
            Refusal::Blank | Refusal::TooLong => format!("must be 1 to {max} characters"),
        }
    }
}

/// A goal title: at most 200 characters as sent, not blank, kept trimmed.
pub type Title = Text<200, OneTo>;

/// A passkey's name: at most 64 characters as sent, not blank, kept trimmed.
pub type PasskeyName = Text<64, OneTo>;

/// `raw` as `field`: a [`Title`], a [`PasskeyName`].
pub fn text<const MAX: usize>(field: &str, raw: &str) -> Result<Text<MAX, OneTo>, Invalid> {
    Text::parse(raw).map_err(|r| Invalid::new(field, Text::<MAX, OneTo>::words(r)))
}

impl<const MAX: usize> Field for Text<MAX, OneTo> {
    fn parse(field: &str, raw: String) -> Result<Self, Invalid> {
        text(field, &raw)
    }

    fn schema() -> ObjectBuilder {
        text_schema(MAX, true, false)
    }
}

/// A completion date: midnight UTC of a real calendar day written
/// `MM/DD/YYYY` (one-digit month and day allowed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompleteBy(pub DateTime<Utc>);

impl Field for CompleteBy {
    fn parse(_: &str, raw: String) -> Result<Self, Invalid> {
        parse_complete_by(&raw).map(Self)
    }

    fn schema() -> ObjectBuilder {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(COMPLETE_BY))
    }
}

documented_fields!(Username, Email, NewPassword, CompleteBy);

/// The dates [`parse_complete_by`] accepts: months of 31 and 30 days,
/// February to the 28th, and the 29th in leap years (every fourth year,
/// centuries only when divisible by 400).
const COMPLETE_BY: &str = concat!(
    r"^(?:(?:0?[13578]|1[02])/(?:0?[1-9]|[12][0-9]|3[01])/[0-9]{4}",
    r"|(?:0?[469]|11)/(?:0?[1-9]|[12][0-9]|30)/[0-9]{4}",
    r"|0?2/(?:0?[1-9]|1[0-9]|2[0-8])/[0-9]{4}",
    r"|0?2/29/(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00))$"
);

/// `MM/DD/YYYY` (one-digit month and day allowed), a real calendar date;
/// midnight UTC of that day.
pub fn parse_complete_by(raw: &str) -> Result<DateTime<Utc>, Invalid> {
    let invalid = || Invalid::new("completeBy", "must be a real date written MM/DD/YYYY");
    let parts: Vec<&str> = raw.split('/').collect();
    let [m, d, y] = parts.as_slice() else {
        return Err(invalid());
    };
    let num = |s: &str, len: std::ops::RangeInclusive<usize>| {
        (len.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    let (Some(m), Some(d), Some(y)) = (num(m, 1..=2), num(d, 1..=2), num(y, 4..=4)) else {
        return Err(invalid());
    };
    let year = i32::try_from(y).map_err(|_| invalid())?;
    NaiveDate::from_ymd_opt(year, m, d)
        .and_then(|date| date.and_hms_opt(0, 0, 0))
        .map(|dt| dt.and_utc())
        .ok_or_else(invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_follow_the_rules() {
        assert!(Username::parse("ada.l_b-1").is_ok());
        assert!(Username::parse("ab").is_err());
        assert!(Username::parse(&"a".repeat(31)).is_err());
        assert!(Username::parse("ada lovelace").is_err());
        assert!(Username::parse("adä").is_err());
    }

    #[test]
    fn emails_are_checked() {
        assert!(Email::parse("email", " ada@example.com ").is_ok());
        assert!(Email::parse("email", "ada@").is_err());
        assert!(Email::parse("email", "ada").is_err());
        assert!(Email::parse("email", "ada@localhost").is_err());
    }

    #[test]
    fn complete_by_must_be_a_real_date() {
        assert_eq!(
            parse_complete_by("12/31/2026").map(|d| d.to_rfc3339()).ok(),
            Some("2026-12-31T00:00:00+00:00".to_owned())
        );
        assert!(parse_complete_by("1/5/2027").is_ok());
        assert!(parse_complete_by("02/30/2026").is_err());
        assert!(parse_complete_by("2026-12-31").is_err());
        assert!(parse_complete_by("13/01/2026").is_err());
        assert!(parse_complete_by("12/31/26").is_err());
    }

    #[test]
    fn titles_are_trimmed_and_bounded() {
        assert_eq!(
            text::<200>("title", "  run  ").map(Title::into_string).ok(),
            Some("run".to_owned())
        );
        assert!(text::<200>("title", "   ").is_err());
        assert!(text::<200>("title", &"x".repeat(201)).is_err());
    }
}
