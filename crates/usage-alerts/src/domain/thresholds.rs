//! Thresholds: what a user configured, what applies, what was crossed.

use keel_platform::values::{RequiredFields, read};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::values::{self, FieldError, Text};

/// The threshold when a user has no preferences: 5.00 USD a day.
pub const DEFAULT_DAILY_COST: f64 = 5.0;
pub const MAX_THRESHOLDS: usize = 100;

pub use crate::entity::kinds::Kind;

/// ThresholdConfig: one threshold of the preferences.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThresholdConfig {
    /// Unique threshold identifier.
    #[schema(inline)]
    pub id: Text<100>,
    #[serde(rename = "type")]
    pub kind: Kind,
    /// Kept as sent (`100000` stays `100000`, not `100000.0`).
    #[serde(deserialize_with = "non_negative")]
    #[schema(value_type = f64, minimum = 0)]
    pub value: serde_json::Number,
    #[serde(deserialize_with = "flag")]
    pub is_enabled: bool,
}

fn non_negative<'de, D: Deserializer<'de>>(d: D) -> Result<serde_json::Number, D::Error> {
    match Value::deserialize(d)? {
        Value::Number(n) if n.as_f64().is_some_and(|f| f.is_finite() && f >= 0.0) => Ok(n),
        _ => Err(D::Error::custom("must be a non-negative number")),
    }
}

fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    super::values::flag(d)?.ok_or_else(|| D::Error::custom("must be true or false"))
}

impl ThresholdConfig {
    pub fn value(&self) -> f64 {
        self.value.as_f64().unwrap_or(f64::INFINITY)
    }
}

/// The body of POST /preferences.
#[derive(Debug, Clone, PartialEq, ToSchema)]
pub struct Preferences {
    #[schema(max_items = 100)]
    pub thresholds: Vec<ThresholdConfig>,
}

keel_platform::required_fields!(Preferences, ThresholdConfig);

/// Parses `{thresholds: [...]}`: presence of the list and of every entry's
/// fields first, then each entry's values, naming the field at fault
/// (`thresholds[1].value`).
pub fn parse(body: &Map<String, Value>) -> Result<Preferences, FieldError> {
    values::require(body, Preferences::required_fields())?;
    let entry_fields = ThresholdConfig::required_fields();
    let Some(Value::Array(list)) = body.get("thresholds") else {
        return Err(FieldError::invalid("thresholds", "must be an array"));
    };
    if list.len() > MAX_THRESHOLDS {
        return Err(FieldError::invalid(
            "thresholds",
            &format!("may hold at most {MAX_THRESHOLDS} entries"),
        ));
    }
    for (i, item) in list.iter().enumerate() {
        let Value::Object(o) = item else {
            return Err(FieldError::invalid(
                &format!("thresholds[{i}]"),
                "must be an object",
            ));
        };
        if let Some(f) = entry_fields.iter().find(|f| values::is_missing(o.get(*f))) {
            return Err(FieldError::Missing(format!("thresholds[{i}].{f}")));
        }
    }
    let thresholds = list
        .iter()
        .enumerate()
        .map(|(i, item)| {
            read::<ThresholdConfig>(item.clone()).map_err(|f| {
                FieldError::invalid(&format!("thresholds[{i}].{}", f.path), &f.problem)
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Preferences { thresholds })
}

/// What applies: the lowest enabled value of each type, or the default
/// daily-cost threshold when the user has no preferences at all.
pub fn effective(prefs: Option<&[ThresholdConfig]>) -> Vec<(Kind, f64)> {
    let Some(list) = prefs else {
        return vec![(Kind::DailyCost, DEFAULT_DAILY_COST)];
    };
    let mut out: Vec<(Kind, f64)> = Vec::new();
    for t in list.iter().filter(|t| t.is_enabled) {
        match out.iter_mut().find(|(k, _)| *k == t.kind) {
            Some((_, v)) => *v = v.min(t.value()),
            None => out.push((t.kind, t.value())),
        }
    }
    out.sort_by_key(|(k, _)| *k);
    out
}

/// A day's figures so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Figures {
    pub cost: f64,
    pub tokens: i64,
    pub sessions: i64,
}

impl Figures {
    pub fn of(&self, kind: Kind) -> f64 {
        match kind {
            Kind::DailyCost => self.cost,
            #[allow(clippy::cast_precision_loss)]
            Kind::TokenCount => self.tokens as f64,
            #[allow(clippy::cast_precision_loss)]
            Kind::SessionCount => self.sessions as f64,
        }
    }
}

/// The thresholds the figures exceed (strictly), with the figure.
pub fn crossed(effective: &[(Kind, f64)], figures: &Figures) -> Vec<(Kind, f64, f64)> {
    effective
        .iter()
        .filter_map(|&(kind, value)| {
            let observed = figures.of(kind);
            (observed > value).then_some((kind, value, observed))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn t(kind: Kind, value: f64, on: bool) -> ThresholdConfig {
        ThresholdConfig {
            id: Text::stored("x".into()),
            kind,
            value: serde_json::Number::from_f64(value).unwrap_or_else(|| 0.into()),
            is_enabled: on,
        }
    }

    #[test]
    fn no_preferences_means_five_dollars_a_day() {
        assert_eq!(effective(None), vec![(Kind::DailyCost, 5.0)]);
    }

    #[test]
    fn the_lowest_enabled_value_of_each_type_counts() {
        let prefs = [
            t(Kind::DailyCost, 10.0, true),
            t(Kind::DailyCost, 3.0, true),
            t(Kind::DailyCost, 1.0, false),
            t(Kind::SessionCount, 4.0, true),
        ];
        assert_eq!(
            effective(Some(&prefs)),
            vec![(Kind::DailyCost, 3.0), (Kind::SessionCount, 4.0)]
        );
        assert!(
            effective(Some(&[])).is_empty(),
            "preferences without thresholds alert on nothing"
        );
    }

    #[test]
    fn crossing_means_strictly_above() {
        let eff = [(Kind::DailyCost, 5.0), (Kind::TokenCount, 100.0)];
        let at = Figures {
            cost: 5.0,
            tokens: 100,
            sessions: 1,
        };
        assert!(crossed(&eff, &at).is_empty());
        let over = Figures {
            cost: 5.01,
            tokens: 101,
            sessions: 1,
        };
        assert_eq!(crossed(&eff, &over).len(), 2);
    }

    #[test]
    fn bad_thresholds_are_named() {
        let body = |v: Value| v.as_object().cloned().unwrap_or_default();
        let msg = |v: Value| parse(&body(v)).unwrap_err().to_string();
        assert_eq!(msg(json!({})), "Missing required field: thresholds");
        assert!(msg(json!({"thresholds": 3})).contains("thresholds must be an array"));
        assert!(msg(json!({"thresholds": [{"id": "a", "type": "weekly", "value": 1, "isEnabled": true}]}))
            .contains("thresholds[0].type must be one of"));
        assert!(msg(json!({"thresholds": [{"id": "a", "type": "daily_cost", "value": -1, "isEnabled": true}]}))
            .contains("thresholds[0].value"));
        assert_eq!(
            msg(json!({"thresholds": [{"type": "daily_cost", "value": 1, "isEnabled": true}]})),
            "Missing required field: thresholds[0].id"
        );
        assert!(parse(&body(json!({"thresholds": [{"id": "a", "type": "daily_cost", "value": 1, "isEnabled": true}]}))).is_ok());
    }
}
