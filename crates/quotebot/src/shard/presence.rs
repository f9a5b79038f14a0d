//! The bot's presence, rotating through the `PlatformActivity` rows in
//! order of creation, one per `presence_every`.

use keel_platform::db::Db;
use keel_platform::sea_orm::{ConnectionTrait, DbBackend, DbErr, Statement, Value};
use twilight_gateway::MessageSender;
use twilight_model::gateway::payload::outgoing::UpdatePresence;
use twilight_model::gateway::presence::{Activity, ActivityType, MinimalActivity, Status};

async fn nth(db: &Db, n: u64) -> Result<Option<(String, String, Option<String>)>, DbErr> {
    let row = db
        .read()
        .query_one_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            r#"SELECT "activity", "type"::text AS "kind", "url" FROM "PlatformActivity"
               ORDER BY "createdAt", "id" OFFSET ($1 % GREATEST((SELECT count(*) FROM "PlatformActivity"), 1)) LIMIT 1"#,
            [Value::from(i64::try_from(n).unwrap_or(0))],
        ))
        .await?;
    row.map(|r| {
        Ok((
            r.try_get("", "activity")?,
            r.try_get("", "kind")?,
            r.try_get("", "url")?,
        ))
    })
    .transpose()
}

fn activity(text: String, kind: &str, url: Option<String>) -> Activity {
    let kind = match kind {
        "Custom" => ActivityType::Custom,
        "Listening" => ActivityType::Listening,
        "Streaming" => ActivityType::Streaming,
        _ => ActivityType::Playing,
    };
    let mut a: Activity = MinimalActivity {
        kind,
        name: text.clone(),
        url,
    }
    .into();
    if kind == ActivityType::Custom {
        // A custom status shows its `state`.
        a.state = Some(text);
    }
    a
}

/// Shows the `n`-th activity (wrapping); nothing when there is none.
pub async fn rotate(db: &Db, sender: &MessageSender, n: u64) {
    match nth(db, n).await {
        Ok(Some((text, kind, url))) => {
            match UpdatePresence::new(
                vec![activity(text, &kind, url)],
                false,
                None,
                Status::Online,
            ) {
                Ok(p) => {
                    if let Err(e) = sender.command(&p) {
                        tracing::debug!(error = %e, "could not update the presence");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "an activity row is not a valid presence"),
            }
        }
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e, "could not read the activities"),
    }
}
