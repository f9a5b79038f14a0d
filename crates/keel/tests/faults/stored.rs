//! What the database holds afterwards, by the load's keys.

use std::collections::{HashMap, HashSet};

use keel_platform::Platform;
use keel_platform::sea_orm::{EntityTrait, QuerySelect};

use crate::load::{Answer, Kind, acknowledged};

/// The keys of `kind` whose effect is in the database.
pub async fn keys(p: &Platform, kind: Kind) -> HashSet<String> {
    counts(p, kind).await.into_keys().collect()
}

/// How many times each key of `kind` is in the database.
pub async fn counts(p: &Platform, kind: Kind) -> HashMap<String, usize> {
    let mut n = HashMap::new();
    for k in all(p, kind).await {
        *n.entry(k).or_insert(0) += 1;
    }
    n
}

async fn all(p: &Platform, kind: Kind) -> Vec<String> {
    let db = p.db.read();
    match kind {
        Kind::Event => {
            use keel_usage_alerts::entity::event;
            event::Entity::find()
                .select_only()
                .column(event::Column::SessionId)
                .into_tuple::<String>()
                .all(db)
                .await
                .unwrap()
                .into_iter()
                .collect()
        }
        Kind::Goal => {
            use keel_accounts::entity::weekly_goal;
            weekly_goal::Entity::find()
                .select_only()
                .column(weekly_goal::Column::Title)
                .into_tuple::<String>()
                .all(db)
                .await
                .unwrap()
                .into_iter()
                .collect()
        }
        Kind::Submission => {
            use keel_svc::entity::submission;
            submission::Entity::find()
                .select_only()
                .column(submission::Column::FieldValues)
                .into_tuple::<String>()
                .all(db)
                .await
                .unwrap()
                .into_iter()
                .filter_map(|v| {
                    let v: serde_json::Value = serde_json::from_str(&v).ok()?;
                    v["name"].as_str().map(str::to_owned)
                })
                .collect()
        }
        Kind::Registration => {
            use keel_svc::entity::push_device;
            push_device::Entity::find()
                .select_only()
                .column(push_device::Column::PushToken)
                .into_tuple::<String>()
                .all(db)
                .await
                .unwrap()
                .into_iter()
                .filter_map(|t| {
                    t.strip_prefix("ExponentPushToken[")?
                        .strip_suffix(']')
                        .map(str::to_owned)
                })
                .collect()
        }
        // Reads leave nothing behind.
        Kind::History | Kind::Goals => Vec::new(),
        Kind::Webhook => {
            use keel_channel::entity::webhook_seen;
            webhook_seen::Entity::find()
                .select_only()
                .column(webhook_seen::Column::WebhookId)
                .into_tuple::<String>()
                .all(db)
                .await
                .unwrap()
                .into_iter()
                .collect()
        }
    }
}

/// The acknowledged writes of `kind` missing from the database.
pub async fn lost(p: &Platform, answers: &[Answer], kind: Kind) -> Vec<String> {
    let present = keys(p, kind).await;
    acknowledged(answers, kind)
        .into_iter()
        .filter(|k| !present.contains(k))
        .collect()
}
