//! Form definitions and the checks a submission goes through.

use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

/// `^\d+(?::(?:\d+|[a-f0-9-]{36}))?$`: a numeric id, optionally followed by
/// a colon and a numeric form index or a 36-character UUID.
pub fn valid_form_id(id: &str) -> bool {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(FORM_ID_PATTERN).ok())
        .as_ref()
        .is_some_and(|re| id.chars().count() <= 100 && re.is_match(id))
}

/// The pattern of [`valid_form_id`].
pub const FORM_ID_PATTERN: &str = r"^\d+(?::(?:\d+|[a-f0-9-]{36}))?$";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FieldType {
    Text,
    Textarea,
    Email,
    Number,
    Url,
    Tel,
    Date,
    Select,
    Radio,
    Checkbox,
    Hidden,
}

impl FieldType {
    fn has_choices(self) -> bool {
        matches!(self, Self::Select | Self::Radio | Self::Checkbox)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldDef {
    /// 1 to 64 of `a-z A-Z 0-9 _ - .`, unique within the form.
    #[schema(pattern = r"^[A-Za-z0-9_.-]{1,64}$")]
    pub id: String,
    pub label: String,
    #[serde(rename = "type")]
    pub kind: FieldType,
    #[serde(default)]
    pub required: bool,
    /// For select, radio and checkbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 1_000_000)]
    pub max_length: Option<u32>,
}

/// A form: id, title and fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FormDef {
    /// A numeric id, optionally `:` and a numeric index or a UUID.
    #[schema(pattern = r"^\d+(?::(?:\d+|[a-f0-9-]{36}))?$", max_length = 100)]
    pub id: String,
    /// 1 to 200 characters, not blank.
    #[schema(max_length = 200, pattern = r"\S")]
    pub title: String,
    /// At most 200, their ids unique; `choices` (at least one) exactly on
    /// select, radio and checkbox fields.
    #[schema(max_items = 200)]
    pub fields: Vec<FieldDef>,
}

/// A form definition that cannot be used, saying why.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadDefinition(pub String);

fn bad_definition(message: String) -> BadDefinition {
    BadDefinition(message)
}

/// A submission that does not fit its form.
#[derive(Debug, thiserror::Error)]
pub enum SubmissionError {
    #[error("fields must be an object mapping field ids to values (at least one)")]
    MissingFields,
    /// The ids of the fields missing, unknown or invalid.
    #[error("Some fields are missing, unknown or invalid")]
    InvalidFields(Vec<String>),
    /// The ids of the email fields without a valid address.
    #[error("An email field holds no valid address")]
    InvalidEmail(Vec<String>),
}

impl FormDef {
    /// A definition is usable: a valid id, a title, fields with unique ids,
    /// choices exactly where the type has them.
    pub fn check(&self) -> Result<(), BadDefinition> {
        if !valid_form_id(&self.id) {
            return Err(bad_definition(format!(
                "id {:?} does not match ^\\d+(?::(?:\\d+|[a-f0-9-]{{36}}))?$",
                self.id
            )));
        }
        if keel_platform::values::is_blank(&self.title) || self.title.chars().count() > 200 {
            return Err(bad_definition(
                "title must be 1 to 200 characters".to_owned(),
            ));
        }
        if self.fields.len() > 200 {
            return Err(bad_definition("a form has at most 200 fields".to_owned()));
        }
        let mut seen = std::collections::HashSet::new();
        for f in &self.fields {
            let ok_id = (1..=64).contains(&f.id.len())
                && f.id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.');
            if !ok_id {
                return Err(bad_definition(format!(
                    "field id {:?} must be 1 to 64 of a-z A-Z 0-9 _ - .",
                    f.id
                )));
            }
            if !seen.insert(f.id.as_str()) {
                return Err(bad_definition(format!("field id {:?} appears twice", f.id)));
            }
            match (&f.choices, f.kind.has_choices()) {
                (Some(c), true) if !c.is_empty() => {}
                (_, true) => return Err(bad_definition(format!("field {:?} needs choices", f.id))),
                (Some(_), false) => {
                    return Err(bad_definition(format!("field {:?} takes no choices", f.id)));
                }
                (None, false) => {}
            }
            if f.max_length.is_some_and(|m| !(1..=1_000_000).contains(&m)) {
                return Err(bad_definition(format!(
                    "field {:?}: max_length must be 1 to 1000000",
                    f.id
                )));
            }
        }
        Ok(())
    }
}

/// The values of a valid submission, as sent.
pub type Values = Map<String, Value>;

/// Checks `fields` against the form: 400 `missing_fields`, `invalid_fields`
/// (ids in `data.fields`) or `invalid_email`.
pub fn check_submission(def: &FormDef, fields: Option<&Value>) -> Result<Values, SubmissionError> {
    let Some(Value::Object(given)) =
        fields.filter(|f| f.as_object().is_some_and(|o| !o.is_empty()))
    else {
        return Err(SubmissionError::MissingFields);
    };
    let mut invalid: Vec<String> = given
        .keys()
        .filter(|k| !def.fields.iter().any(|f| &f.id == *k))
        .cloned()
        .collect();
    let mut bad_email = Vec::new();
    for f in &def.fields {
        match check_value(f, given.get(&f.id)) {
            Check::Ok => {}
            Check::Invalid => invalid.push(f.id.clone()),
            Check::BadEmail => bad_email.push(f.id.clone()),
        }
    }
    if !invalid.is_empty() {
        return Err(SubmissionError::InvalidFields(invalid));
    }
    if !bad_email.is_empty() {
        return Err(SubmissionError::InvalidEmail(bad_email));
    }
    Ok(given.clone())
}

enum Check {
    Ok,
    Invalid,
    BadEmail,
}

/// The value as text, if it is a scalar.
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn check_value(f: &FieldDef, v: Option<&Value>) -> Check {
    let text = match v {
        None | Some(Value::Null) => None,
        Some(v) => match scalar(v) {
            Some(t) => Some(t),
            None => return Check::Invalid, // arrays and objects
        },
    };
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return if f.required {
            Check::Invalid
        } else {
            Check::Ok
        };
    };
    if f.max_length
        .is_some_and(|max| text.chars().count() > max as usize)
    {
        return Check::Invalid;
    }
    let ok = match f.kind {
        FieldType::Text | FieldType::Textarea | FieldType::Hidden => true,
        FieldType::Email => {
            return if email_address::EmailAddress::is_valid(text.trim()) {
                Check::Ok
            } else {
                Check::BadEmail
            };
        }
        FieldType::Number => text.trim().parse::<f64>().is_ok_and(f64::is_finite),
        FieldType::Url => {
            url::Url::parse(text.trim()).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
        }
        FieldType::Tel => {
            let t = text.trim();
            (3..=32).contains(&t.len())
                && t.chars().any(|c| c.is_ascii_digit())
                && t.chars()
                    .all(|c| c.is_ascii_digit() || " +-().".contains(c))
        }
        FieldType::Date => chrono::NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").is_ok(),
        FieldType::Select | FieldType::Radio => {
            f.choices.as_ref().is_some_and(|c| c.contains(&text))
        }
        FieldType::Checkbox => f.choices.as_ref().is_some_and(|c| {
            text.split(',')
                .map(str::trim)
                .all(|part| c.iter().any(|choice| choice == part))
        }),
    };
    if ok { Check::Ok } else { Check::Invalid }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> FormDef {
        serde_json::from_value(json!({
            "id": "7",
            "title": "Contact",
            "fields": [
                {"id": "name", "label": "Name", "type": "text", "required": true, "max_length": 10},
                {"id": "mail", "label": "Mail", "type": "email", "required": true},
                {"id": "age", "label": "Age", "type": "number"},
                {"id": "site", "label": "Site", "type": "url"},
                {"id": "phone", "label": "Phone", "type": "tel"},
                {"id": "day", "label": "Day", "type": "date"},
                {"id": "topic", "label": "Topic", "type": "select", "choices": ["a", "b"]},
                {"id": "size", "label": "Size", "type": "radio", "choices": ["s", "m"]},
                {"id": "extras", "label": "Extras", "type": "checkbox", "choices": ["x", "y"]},
                {"id": "src", "label": "Source", "type": "hidden"}
            ]
        }))
        .unwrap()
    }

    /// The code the error is answered with, and the fields it names.
    fn ids(e: SubmissionError) -> (String, Vec<String>) {
        match e {
            SubmissionError::MissingFields => ("missing_fields".to_owned(), Vec::new()),
            SubmissionError::InvalidFields(f) => ("invalid_fields".to_owned(), f),
            SubmissionError::InvalidEmail(f) => ("invalid_email".to_owned(), f),
        }
    }

    #[test]
    fn form_ids_follow_the_documented_pattern() {
        for ok in ["1", "12:3", "12:0f8fad5b-d9cb-469f-a165-70867728950e"] {
            assert!(valid_form_id(ok), "{ok}");
        }
        for bad in [
            "",
            "a",
            "12:",
            "12:x",
            "12:0F8FAD5B-D9CB-469F-A165-70867728950E",
            "1:2:3",
        ] {
            assert!(!valid_form_id(bad), "{bad}");
        }
    }

    #[test]
    fn a_good_submission_passes() {
        let v = json!({"name": "Ada", "mail": "ada@example.com", "age": 36, "site": "https://a.example",
            "phone": "+44 (0)20 1234", "day": "2026-02-28", "topic": "a", "size": "m", "extras": "x, y", "src": "app"});
        assert!(check_submission(&form(), Some(&v)).is_ok());
    }

    #[test]
    fn fields_must_be_an_object() {
        for v in [None, Some(json!([])), Some(json!("x"))] {
            assert_eq!(
                ids(check_submission(&form(), v.as_ref()).unwrap_err()).0,
                "missing_fields"
            );
        }
    }

    #[test]
    fn every_offending_field_is_named() {
        let v = json!({"name": "far too long a name", "mail": "ada@example.com", "age": "old", "site": "ftp://x",
            "phone": "call me", "day": "2026-02-30", "topic": "c", "size": ["s"], "extras": "z", "bogus": 1});
        let (code, mut fields) = ids(check_submission(&form(), Some(&v)).unwrap_err());
        fields.sort();
        assert_eq!(code, "invalid_fields");
        assert_eq!(
            fields,
            [
                "age", "bogus", "day", "extras", "name", "phone", "site", "size", "topic"
            ]
        );
    }

    #[test]
    fn required_fields_must_be_there_and_emails_valid() {
        let (code, fields) =
            ids(check_submission(&form(), Some(&json!({"mail": "ada@example.com"}))).unwrap_err());
        assert_eq!(
            (code.as_str(), fields),
            ("invalid_fields", vec!["name".to_owned()])
        );
        let (code, fields) = ids(check_submission(
            &form(),
            Some(&json!({"name": "Ada", "mail": "nope"})),
        )
        .unwrap_err());
        assert_eq!(
            (code.as_str(), fields),
            ("invalid_email", vec!["mail".to_owned()])
        );
    }

    #[test]
    fn definitions_are_checked() {
        let mut f = form();
        assert!(f.check().is_ok());
        f.fields[6].choices = None;
        assert!(f.check().is_err());
        let mut f = form();
        f.fields[1].id = "name".into();
        assert!(f.check().is_err());
        let mut f = form();
        f.id = "abc".into();
        assert!(f.check().is_err());
    }
}
