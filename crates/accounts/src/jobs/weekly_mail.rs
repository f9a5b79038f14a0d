//! The weekly goals mail run (cron `KEEL_ACCOUNTS_WEEKLY_MAIL_CRON`, Monday
//! 08:00 UTC by default): one job per week, claimed once across nodes by
//! the cron tick and by its unique key; a run cut off is retried and mails
//! only the users not yet marked with the week.

use chrono::{DateTime, Utc};
use keel_platform::crypto::SecretBox;
use keel_platform::db::Db;
use keel_platform::jobs::cron::Schedule;
use keel_platform::jobs::{self, Job, JobContext, JobError, JobRegistry};
use keel_platform::sea_orm::DbErr;
use keel_platform::tasks::Tasks;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::domain::weekly_mail::{self, Sender};
use crate::domain::weekly_mail_text::App;

#[derive(Debug, Serialize, Deserialize)]
pub struct WeeklyMail {
    /// The ISO week it mails, `2026-W48`.
    pub week: String,
    /// The time the week is summed up to.
    pub at: DateTime<Utc>,
}

impl Job for WeeklyMail {
    const KIND: &'static str = "accounts.weekly_mail";
}

impl WeeklyMail {
    pub fn of(at: DateTime<Utc>) -> Self {
        Self {
            week: weekly_mail::week_of(at),
            at,
        }
    }

    /// Queues the run of `at`'s week, unless that week's run was queued
    /// already; whether it was queued now.
    pub async fn enqueue(db: &Db, at: DateTime<Utc>) -> Result<bool, DbErr> {
        let job = Self::of(at);
        let key = format!("accounts:weekly-mail:{}", job.week);
        jobs::enqueue_unique(db.write(), &job, &key, Utc::now()).await
    }
}

/// Runs the weekly mail in this process and starts this node's scheduler
/// (when `KEEL_ACCOUNTS_PUBLIC_URL` is set: the mail needs its links).
pub fn register(
    registry: &mut JobRegistry,
    tasks: &Tasks,
    db: &Db,
    secrets: &SecretBox,
    cfg: &Config,
) {
    let (db2, secrets, cfg2) = (db.clone(), secrets.clone(), cfg.clone());
    registry.register(move |job: WeeklyMail, _ctx: JobContext| {
        let (db, secrets, cfg) = (db2.clone(), secrets.clone(), cfg2.clone());
        async move { run(&db, &secrets, &cfg, &job).await }
    });
    if cfg.weekly_mail.public_url.is_none() {
        tracing::info!("weekly goals mail off: KEEL_ACCOUNTS_PUBLIC_URL is not set");
        return;
    }
    Schedule {
        name: "accounts.weekly_mail",
        cron: cfg.weekly_mail.cron.clone(),
        job: WeeklyMail::of,
    }
    .start(db.clone(), tasks);
}

async fn run(db: &Db, secrets: &SecretBox, cfg: &Config, job: &WeeklyMail) -> Result<(), JobError> {
    let Some(public_url) = cfg.weekly_mail.public_url.as_deref() else {
        return Err(JobError::fail(
            "KEEL_ACCOUNTS_PUBLIC_URL is not set: the weekly mail needs it for its unsubscribe link",
        ));
    };
    let sender = Sender {
        db,
        secrets,
        app: App {
            name: &cfg.app_name,
            url: cfg.weekly_mail.app_url.as_deref(),
        },
        public_url,
    };
    let sent = weekly_mail::send_week(&sender, &job.week, job.at)
        .await
        .map_err(JobError::retry)?;
    tracing::info!(week = %job.week, sent, "weekly goals mail queued");
    Ok(())
}
