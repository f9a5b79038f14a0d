//! keel at a glance, from keel alone (no Prometheus): readiness and each
//! dependency as `/readyz` checks them now, the version, the newest
//! migration of each part, the SQLite file's size and the replica's last
//! sync. Every operator may read it.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use keel_platform::config::DatabaseUrl;
use keel_platform::console::{Error, ErrorBody, Operator};
use keel_platform::http::NoStore;
use keel_platform::http::health::readyz;
use serde::Serialize;
use utoipa::ToSchema;

use crate::state::AppState;

#[derive(Serialize, ToSchema)]
pub struct HealthPage {
    /// What `/readyz` answers now: `status` (`ok`, `degraded`,
    /// `unavailable`, `draining`) and `checks` per dependency (`ok` or
    /// what went wrong).
    #[schema(value_type = Object)]
    pub readiness: serde_json::Value,
    pub version: String,
    /// `sqlite` or `postgres`.
    pub database: &'static str,
    /// The SQLite file's size in bytes (SQLite only).
    pub database_bytes: Option<u64>,
    pub replica: Option<Replica>,
    pub migrations: Vec<Migrated>,
    /// The services this process serves, by name.
    pub services: Vec<&'static str>,
    /// This process's requests (all its services but the console), a
    /// minute at a time over the last hour, the last to now.
    pub traffic: Vec<keel_platform::telemetry::traffic::Interval>,
    /// The last answer of each provider this process called (by host) and
    /// of the mail relay (`smtp`), since it started.
    pub providers: Vec<keel_platform::observe::answers::Answer>,
    /// quotebot's Discord gateway as its manager reports it (only with
    /// `KEEL_CONSOLE_QUOTEBOT_URL`).
    pub quotebot: Option<QuotebotGateway>,
}

#[derive(Serialize, ToSchema)]
pub struct QuotebotGateway {
    /// Whether quotebot answered (`what` says why not).
    pub answered: bool,
    /// The shards Discord asked for, and those with a ready session.
    pub shards: Option<u32>,
    pub ready: Option<u32>,
    /// Shards started again after they died.
    pub restarts: Option<u64>,
    pub changed_at: Option<DateTime<Utc>>,
    pub what: String,
}

async fn quotebot(state: &AppState) -> Option<QuotebotGateway> {
    let url = state.cfg.quotebot_url.as_deref()?;
    Some(
        match crate::domain::quotebot::gateway(&state.platform.http, url).await {
            Ok(g) => QuotebotGateway {
                answered: true,
                shards: Some(g.shards),
                ready: Some(g.ready),
                restarts: Some(g.restarts),
                changed_at: g.changed_at,
                what: format!("{} of {} shards ready", g.ready, g.shards),
            },
            Err(e) => QuotebotGateway {
                answered: false,
                shards: None,
                ready: None,
                restarts: None,
                changed_at: None,
                what: e.to_string(),
            },
        },
    )
}

#[derive(Serialize, ToSchema)]
pub struct Replica {
    /// Seconds since the last sync reached the replica.
    pub lag_seconds: f64,
    pub last_sync: Option<DateTime<Utc>>,
    pub behind: bool,
}

#[derive(Serialize, ToSchema)]
pub struct Migrated {
    pub component: String,
    pub version: i64,
    pub applied_at: DateTime<Utc>,
}

/// Readiness, dependencies, version, migrations, storage.
#[utoipa::path(get, path = "/console/v1/health", tag = "health",
    security(("console_session" = [])),
    responses(
        (status = 200, body = HealthPage),
        (status = 401, description = "not_signed_in", body = ErrorBody),
    ))]
pub async fn health(
    State(state): State<AppState>,
    _op: Operator,
) -> Result<NoStore<Json<HealthPage>>, Error> {
    let (_, keel_platform::http::Json(ready)) = readyz(State(state.readiness.clone())).await;
    let readiness = serde_json::to_value(&ready).map_err(Error::internal)?;
    let platform = &state.platform;
    let (database, database_bytes) = match &platform.config.database.url {
        DatabaseUrl::Sqlite(url) => {
            let size = keel_platform::db::sqlite_file(url)
                .and_then(|f| std::fs::metadata(f).ok())
                .map(|m| m.len());
            ("sqlite", size)
        }
        DatabaseUrl::Postgres(_) => ("postgres", None),
    };
    let replica = platform.db.replication().lag().map(|l| Replica {
        lag_seconds: l.seconds,
        last_sync: l.last_sync.map(DateTime::<Utc>::from),
        behind: l.behind,
    });
    // The database away is in `readiness`: the list is then empty.
    let migrations = keel_platform::migrate::newest(&platform.db)
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|(component, version, applied_at)| Migrated {
            component,
            version,
            applied_at,
        })
        .collect();
    Ok(NoStore(Json(HealthPage {
        readiness,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        database,
        database_bytes,
        replica,
        migrations,
        services: state.services.clone(),
        traffic: platform.traffic.last_hour(),
        providers: keel_platform::observe::answers::all(),
        quotebot: quotebot(&state).await,
    })))
}
