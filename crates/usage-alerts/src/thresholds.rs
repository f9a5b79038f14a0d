//! Thresholds: what a user configured, what applies, what was crossed.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::error::Error;
use crate::input;

/// The threshold when a user has no preferences: 5.00 USD a day.
pub const DEFAULT_DAILY_COST: f64 = 5.0;
pub const MAX_THRESHOLDS: usize = 100;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    DailyCost,
    TokenCount,
    SessionCount,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::DailyCost => "daily_cost",
            Self::TokenCount => "token_count",
            Self::SessionCount => "session_count",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "daily_cost" => Some(Self::DailyCost),
            "token_count" => Some(Self::TokenCount),
            "session_count" => Some(Self::SessionCount),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThresholdConfig {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: Kind,
    /// Kept as sent (`100000` stays `100000`, not `100000.0`).
    #[schema(value_type = f64)]
    pub value: serde_json::Number,
    pub is_enabled: bool,
}

impl ThresholdConfig {
    pub fn value(&self) -> f64 {
        self.value.as_f64().unwrap_or(f64::INFINITY)
    }
}

/// Parses `{thresholds: [...]}`, naming the offending field.
pub fn parse(body: &Map<String, Value>) -> Result<Vec<ThresholdConfig>, Error> {
    let list = match body.get("thresholds") {
        None | Some(Value::Null) => return Err(input::missing("thresholds")),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(input::invalid("thresholds", "must be an array")),
    };
    if list.len() > MAX_THRESHOLDS {
        return Err(input::invalid(
            "thresholds",
            &format!("may hold at most {MAX_THRESHOLDS} entries"),
        ));
    }
    list.iter()
        .enumerate()
        .map(|(i, item)| {
            let Value::Object(o) = item else {
                return Err(input::invalid(
                    &format!("thresholds[{i}]"),
                    "must be an object",
                ));
            };
            let f = |name: &str| format!("thresholds[{i}].{name}");
            let kind_raw = input::string(&prefixed(o, i), &f("type"), 32)?;
            let kind = Kind::parse(&kind_raw).ok_or_else(|| {
                input::invalid(
                    &f("type"),
                    "must be one of daily_cost, token_count, session_count",
                )
            })?;
            Ok(ThresholdConfig {
                id: input::string(&prefixed(o, i), &f("id"), 100)?,
                kind,
                value: {
                    input::amount(&prefixed(o, i), &f("value"))?;
                    match o.get("value") {
                        Some(Value::Number(n)) => n.clone(),
                        _ => {
                            return Err(input::invalid(
                                &f("value"),
                                "must be a non-negative number",
                            ));
                        }
                    }
                },
                is_enabled: match o.get("isEnabled") {
                    None | Some(Value::Null) => return Err(input::missing(&f("isEnabled"))),
                    Some(Value::Bool(b)) => *b,
                    Some(_) => {
                        return Err(input::invalid(&f("isEnabled"), "must be true or false"));
                    }
                },
            })
        })
        .collect()
}

/// The entry's fields under their full names (`thresholds[i].x`), so the
/// shared field checks name them fully.
fn prefixed(o: &Map<String, Value>, i: usize) -> Map<String, Value> {
    o.iter()
        .map(|(k, v)| (format!("thresholds[{i}].{k}"), v.clone()))
        .collect()
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
            id: "x".into(),
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
