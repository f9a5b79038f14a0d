//! In-process events, like the host site's hooks. `svc_forms_appcheck_verified`
//! fires after an App Check token verifies, with (app id, form id, token); it
//! is recorded in the audit log (the app as the actor, the form as the
//! subject, the token's SHA-256, never the token) and delivered to whoever
//! subscribed.

use std::sync::OnceLock;

use keel_platform::audit::{self, Actor, Entry};
use keel_platform::batch::{BatchError, Batcher};
use keel_platform::crypto::sha256_hex;
use keel_platform::db::Db;
use keel_platform::sea_orm::{ConnectionTrait, DbErr};
use keel_platform::tasks::Tasks;
use serde_json::json;
use tokio::sync::broadcast;

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

/// Writes audit rows in batches (group commit): those of tokens that came
/// without a submission to store (a submission's is written with it, see
/// `site::store_submissions`).
pub type AuditWriter = Batcher<AppCheckVerified, ()>;

pub fn audit_writer(db: Db, tasks: &Tasks) -> AuditWriter {
    Batcher::start_with(tasks, "svc audit", 256, db, |db, events| async move {
        let n = events.len();
        insert_audit(db.write(), &events).await?;
        Ok::<_, DbErr>(vec![(); n])
    })
}

/// Inserts the audit entries of `events` (none: nothing).
pub async fn insert_audit(
    conn: &impl ConnectionTrait,
    events: &[AppCheckVerified],
) -> Result<(), DbErr> {
    let entries = events.iter().map(|e| {
        let app = Actor {
            name: e.app_id.clone(),
            address: None,
        };
        let entry = Entry::new(crate::NAME, APPCHECK_VERIFIED)
            .on(&e.form_id)
            .detail(json!({"token_hash": sha256_hex(e.token.as_bytes())}));
        (app, entry)
    });
    audit::record_all(conn, entries.collect()).await
}

/// Records the event (committed before this returns) and delivers it.
pub async fn appcheck_verified(
    writer: &AuditWriter,
    event: AppCheckVerified,
) -> Result<(), BatchError> {
    let delivered = subscribed().then(|| event.clone());
    writer.submit(event).await?;
    if let Some(event) = delivered {
        deliver(event);
    }
    Ok(())
}

/// Whether anyone listens (an event is then kept to be delivered).
pub fn subscribed() -> bool {
    bus().receiver_count() > 0
}

/// Delivers a recorded event to the subscribers.
pub fn deliver(event: AppCheckVerified) {
    // No subscriber is fine.
    let _ = bus().send(event);
}
