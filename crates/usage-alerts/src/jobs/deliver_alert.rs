//! The push of an alert to one device, as a durable job: delivered, not
//! delivered (with the reason), or retried with backoff. Devices APNs
//! disowns (410, BadDeviceToken, Unregistered) are removed.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use keel_platform::db::Db;
use keel_platform::jobs::{Job, JobContext, JobError, JobRegistry};
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::apns::{ApnsClient, Outcome, Target};
use crate::domain::thresholds::Kind;
use crate::entity::delivery::DeliveryStatus;
use crate::entity::{alert, delivery, device};

#[derive(Debug, Serialize, Deserialize)]
pub struct DeliverAlert {
    pub alert_id: String,
    pub device_token: String,
}

impl Job for DeliverAlert {
    const KIND: &'static str = "usage_alerts.deliver";
    const MAX_ATTEMPTS: u32 = 8;
}

/// Enqueues the push of alert `alert_id` to one device, in the caller's
/// transaction (the alert's own); once per alert and device.
pub async fn enqueue<C: ConnectionTrait>(
    conn: &C,
    alert_id: &str,
    device_token: &str,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let job = DeliverAlert {
        alert_id: alert_id.to_owned(),
        device_token: device_token.to_owned(),
    };
    let key = format!("ua:{alert_id}:{device_token}");
    keel_platform::jobs::enqueue_unique(conn, &job, &key, now).await
}

/// Runs this job in this process.
pub fn register(registry: &mut JobRegistry, db: Db, apns: Option<Arc<ApnsClient>>) {
    registry.register(move |job: DeliverAlert, ctx: JobContext| {
        let (db, apns) = (db.clone(), apns.clone());
        async move { deliver(&db, apns.as_deref(), &job, ctx).await }
    });
}

async fn deliver(
    db: &Db,
    apns: Option<&ApnsClient>,
    job: &DeliverAlert,
    ctx: JobContext,
) -> Result<(), JobError> {
    let Some(d) = delivery::Entity::find_by_id((job.alert_id.clone(), job.device_token.clone()))
        .one(db.read())
        .await?
        .filter(|d| d.status == DeliveryStatus::Pending)
    else {
        return Ok(()); // done already, or the account is gone
    };
    let Some(a) = alert::Entity::find_by_id(job.alert_id.as_str())
        .one(db.read())
        .await?
    else {
        return Ok(());
    };
    let Some(apns) = apns else {
        tracing::warn!(alert = %a.id, device = %short(&d.device_token), "alert not delivered: APNs is not configured");
        return record(
            db,
            &d,
            DeliveryStatus::NotDelivered,
            Some("APNs is not configured"),
            None,
        )
        .await;
    };
    let target = Target {
        device_token: &d.device_token,
        platform: d.platform,
        sandbox: d.sandbox,
    };
    let collapse_id = format!("{}-{}", a.day, a.threshold_type.as_str());
    let outcome = apns.send(&target, &payload(&a), &collapse_id).await;
    crate::apns::count(&outcome);
    match outcome {
        Outcome::Delivered { apns_id } => {
            tracing::info!(alert = %a.id, device = %short(&d.device_token), "alert delivered");
            record(db, &d, DeliveryStatus::Delivered, None, apns_id.as_deref()).await
        }
        Outcome::Rejected {
            reason,
            remove_device,
        } => {
            tracing::warn!(alert = %a.id, device = %short(&d.device_token), %reason, remove_device, "APNs refused the alert");
            if remove_device {
                device::Entity::delete_by_id(d.device_token.as_str())
                    .exec(db.write())
                    .await?;
            }
            record(db, &d, DeliveryStatus::NotDelivered, Some(&reason), None).await
        }
        Outcome::Retry { reason, after } if ctx.is_last_attempt() => {
            tracing::warn!(alert = %a.id, %reason, ?after, "alert not delivered after every attempt");
            record(db, &d, DeliveryStatus::NotDelivered, Some(&reason), None).await
        }
        Outcome::Retry { reason, after } => Err(match after {
            Some(after) => JobError::retry_after(reason, after),
            None => JobError::retry(reason),
        }),
    }
}

async fn record(
    db: &Db,
    d: &delivery::Model,
    status: DeliveryStatus,
    reason: Option<&str>,
    apns_id: Option<&str>,
) -> Result<(), JobError> {
    delivery::Entity::update_many()
        .col_expr(delivery::Column::Status, Expr::value(status))
        .col_expr(
            delivery::Column::Reason,
            Expr::value(reason.map(str::to_owned)),
        )
        .col_expr(
            delivery::Column::ApnsId,
            Expr::value(apns_id.map(str::to_owned)),
        )
        .col_expr(delivery::Column::UpdatedAt, Expr::value(Utc::now()))
        .filter(delivery::Column::AlertId.eq(d.alert_id.as_str()))
        .filter(delivery::Column::DeviceToken.eq(d.device_token.as_str()))
        .exec(db.write())
        .await?;
    Ok(())
}

fn short(token: &str) -> &str {
    token.get(..8).unwrap_or(token)
}

/// What the notification says: which threshold, and the day's figure.
pub fn payload(a: &alert::Model) -> serde_json::Value {
    let (title, body) = match a.threshold_type {
        Kind::DailyCost => (
            "Daily cost threshold crossed",
            format!(
                "Today's cost is ${:.2}, over your ${:.2} threshold.",
                a.observed, a.threshold_value
            ),
        ),
        Kind::TokenCount => (
            "Daily token threshold crossed",
            format!(
                "Today you used {} tokens, over your {} threshold.",
                a.observed, a.threshold_value
            ),
        ),
        Kind::SessionCount => (
            "Daily session threshold crossed",
            format!(
                "Today you ran {} sessions, over your {} threshold.",
                a.observed, a.threshold_value
            ),
        ),
    };
    json!({
        "aps": {"alert": {"title": title, "body": body}, "sound": "default"},
        "alert": {
            "id": a.id,
            "type": a.threshold_type.as_str(),
            "value": a.threshold_value,
            "observed": a.observed,
            "day": a.day,
        }
    })
}
