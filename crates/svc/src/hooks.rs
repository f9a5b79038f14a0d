//! In-process events, like the host site's hooks. `svc_forms_appcheck_verified`
//! fires after an App Check token verifies, with (app id, form id, token); it
//! is recorded in `svc_audit` (with the token's SHA-256, never the token)
//! and delivered to whoever subscribed.

use std::sync::OnceLock;

use chrono::Utc;
use keel_platform::crypto::sha256_hex;
use keel_platform::db::Db;
use keel_platform::sea_orm::{EntityTrait, Set};
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

/// Records and delivers the event.
pub async fn appcheck_verified(
    db: &Db,
    event: AppCheckVerified,
) -> Result<(), keel_platform::sea_orm::DbErr> {
    audit::Entity::insert(audit::ActiveModel {
        event: Set(APPCHECK_VERIFIED.to_owned()),
        app_id: Set(event.app_id.clone()),
        form_id: Set(Some(event.form_id.clone())),
        token_hash: Set(sha256_hex(event.token.as_bytes())),
        created_at: Set(Utc::now()),
        ..Default::default()
    })
    .exec_without_returning(db.write())
    .await?;
    // No subscriber is fine.
    let _ = bus().send(event);
    Ok(())
}
