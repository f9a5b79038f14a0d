//! The enumerations the usage-alert tables store, each as its contract
//! name; a request's value parses into them (naming the rule when it does
//! not).

use keel_platform::sea_orm;
use keel_platform::sea_orm::entity::prelude::*;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// A threshold's type, stored as its contract name.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    ToSchema,
    EnumIter,
    DeriveActiveEnum,
)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(32))")]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    #[sea_orm(string_value = "daily_cost")]
    DailyCost,
    #[sea_orm(string_value = "token_count")]
    TokenCount,
    #[sea_orm(string_value = "session_count")]
    SessionCount,
}

impl Kind {
    /// Its contract name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::DailyCost => "daily_cost",
            Self::TokenCount => "token_count",
            Self::SessionCount => "session_count",
        }
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)?.as_str() {
            Some("daily_cost") => Ok(Self::DailyCost),
            Some("token_count") => Ok(Self::TokenCount),
            Some("session_count") => Ok(Self::SessionCount),
            _ => Err(D::Error::custom(
                "must be one of daily_cost, token_count, session_count",
            )),
        }
    }
}

/// The device's platform (`ios` or `watchos`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, EnumIter, DeriveActiveEnum, Serialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(16))")]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    #[sea_orm(string_value = "ios")]
    Ios,
    #[sea_orm(string_value = "watchos")]
    Watchos,
}

impl<'de> Deserialize<'de> for Platform {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)?.as_str() {
            Some("ios") => Ok(Self::Ios),
            Some("watchos") => Ok(Self::Watchos),
            _ => Err(D::Error::custom("must be ios or watchos")),
        }
    }
}
