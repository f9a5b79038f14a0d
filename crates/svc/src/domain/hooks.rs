//! In-process events, like the host site's hooks. `svc_forms_appcheck_verified`
//! fires after an App Check token verifies, with (app id, form id, token); it
//! is recorded in `svc_audit` (with the token's SHA-256, never the token)
//! and delivered to whoever subscribed.

use std::sync::OnceLock;

use chrono::Utc;
use keel_platform::batch::{BatchError, Batcher};
use keel_platform::crypto::sha256_hex;
use keel_platform::db::Db;
use keel_platform::sea_orm::{DbErr, EntityTrait, Set};
use keel_platform::tasks::Tasks;
use tokio::sync::broadcast;

use crate::entity::audit;

pub const APPCHECK_VERIFIED: &str = "svc_forms_appcheck_verified";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppCheckVerified {
    pub app_id: String,
    pub form_id: String,
    pub token: String,
}

fn bus() -> &'static broadcast::Sender<AppCheckVerified> {
    static BUS: OnceLock<broadcast::Sender<AppCheckVerified>> = OnceLock::new();
    BUS.get_or_init(|| broadcast::channel(1024).0)
}

/// Receives every `svc_forms_appcheck_verified` from now on.
pub fn subscribe() -> broadcast::Receiver<AppCheckVerified> {
    bus().subscribe()
}

/// Writes audit rows in batches (group commit).
pub type AuditWriter = Batcher<AppCheckVerified, ()>;

pub fn audit_writer(db: Db, tasks: &Tasks) -> AuditWriter {
    Batcher::start(
        tasks,
        "svc audit",
        256,
        move |events: Vec<AppCheckVerified>| {
            let db = db.clone();
            async move {
                let n = events.len();
                let now = Utc::now();
                let rows = events.into_iter().map(|e| audit::ActiveModel {
                    event: Set(APPCHECK_VERIFIED.to_owned()),
                    app_id: Set(e.app_id),
                    form_id: Set(Some(e.form_id)),
                    token_hash: Set(sha256_hex(e.token.as_bytes())),
                    created_at: Set(now),
                    ..Default::default()
                });
                audit::Entity::insert_many(rows)
                    .exec_without_returning(db.write())
                    .await?;
                Ok::<_, DbErr>(vec![(); n])
            }
        },
    )
}

/// Records the event (committed before this returns) and delivers it.
pub async fn appcheck_verified(
    writer: &AuditWriter,
    event: AppCheckVerified,
) -> Result<(), BatchError> {
    writer.submit(event.clone()).await?;
    // No subscriber is fine.
    let _ = bus().send(event);
    Ok(())
}
