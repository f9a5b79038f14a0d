//! `Guild` rows: one per server the bot is in (kept true by join and
//! leave), with its quote schedule; claiming a due quote.

use chrono::{DateTime, NaiveDateTime, SubsecRound, Utc};
use keel_platform::db::Db;
use keel_platform::sea_orm::{ConnectionTrait, DbBackend, DbErr, QueryResult, Statement, Value};

use super::schedule::{Frequency, Plan, parse_time, parse_zone};

fn stmt(sql: &str, values: impl IntoIterator<Item = Value>) -> Statement {
    Statement::from_sql_and_values(DbBackend::Postgres, sql, values)
}

/// Timestamps are stored as UTC without a zone, to the millisecond
/// (`timestamp(3)`).
pub fn naive(t: DateTime<Utc>) -> NaiveDateTime {
    t.trunc_subsecs(3).naive_utc()
}

/// A server's row.
#[derive(Debug, Clone)]
pub struct Guild {
    pub id: String,
    pub guild_id: String,
    pub channel_id: Option<String>,
    pub frequency: Frequency,
    pub time: String,
    pub day: Option<i32>,
    pub timezone: String,
    pub last_sent: Option<NaiveDateTime>,
    pub updated_at: NaiveDateTime,
}

impl Guild {
    fn from_row(r: &QueryResult) -> Result<Self, DbErr> {
        let frequency: String = r.try_get("", "frequency")?;
        Ok(Self {
            id: r.try_get("", "id")?,
            guild_id: r.try_get("", "guildId")?,
            channel_id: r.try_get("", "motivationChannelId")?,
            frequency: Frequency::parse(&frequency).unwrap_or(Frequency::Daily),
            time: r.try_get("", "motivationTime")?,
            day: r.try_get("", "motivationDay")?,
            timezone: r.try_get("", "timezone")?,
            last_sent: r.try_get("", "lastMotivationSentAt")?,
            updated_at: r.try_get("", "updatedAt")?,
        })
    }

    /// Its schedule, if the row holds a valid one.
    pub fn plan(&self) -> Option<Plan> {
        let p = Plan {
            frequency: self.frequency,
            time: parse_time(&self.time)?,
            day: self.day,
            tz: parse_zone(&self.timezone)?,
        };
        Plan::valid_day(p.frequency, p.day).then_some(p)
    }
}

const COLUMNS: &str = r#""id"::text AS "id", "guildId", "motivationChannelId",
    "motivationFrequency"::text AS "frequency", "motivationTime", "motivationDay",
    "timezone", "lastMotivationSentAt", "updatedAt""#;

/// The bot joined (or saw again) a server.
pub async fn joined(db: &Db, guild_id: u64) -> Result<(), DbErr> {
    db.write()
        .execute_raw(stmt(
            r#"INSERT INTO "Guild" ("guildId") VALUES ($1) ON CONFLICT ("guildId") DO NOTHING"#,
            [Value::from(guild_id.to_string())],
        ))
        .await?;
    Ok(())
}

/// The bot left (or was removed from) a server.
pub async fn left(db: &Db, guild_id: u64) -> Result<(), DbErr> {
    db.write()
        .execute_raw(stmt(
            r#"DELETE FROM "Guild" WHERE "guildId" = $1"#,
            [Value::from(guild_id.to_string())],
        ))
        .await?;
    Ok(())
}

/// The schedule `/setup channel` asked for.
pub struct Setup {
    pub guild_id: u64,
    pub channel_id: u64,
    pub frequency: Frequency,
    pub time: String,
    pub day: Option<i32>,
    pub timezone: String,
}

pub async fn set_up(db: &Db, s: &Setup) -> Result<Guild, DbErr> {
    let row = db
        .write()
        .query_one_raw(stmt(
            &format!(
                r#"INSERT INTO "Guild" ("guildId", "motivationChannelId", "motivationFrequency",
                       "motivationTime", "motivationDay", "timezone", "updatedAt")
                   VALUES ($1, $2, $3::"MotivationFrequency", $4, $5, $6, $7)
                   ON CONFLICT ("guildId") DO UPDATE SET
                       "motivationChannelId" = EXCLUDED."motivationChannelId",
                       "motivationFrequency" = EXCLUDED."motivationFrequency",
                       "motivationTime" = EXCLUDED."motivationTime",
                       "motivationDay" = EXCLUDED."motivationDay",
                       "timezone" = EXCLUDED."timezone",
                       "updatedAt" = EXCLUDED."updatedAt"
                   RETURNING {COLUMNS}"#
            ),
            [
                Value::from(s.guild_id.to_string()),
                Value::from(s.channel_id.to_string()),
                Value::from(s.frequency.as_str()),
                Value::from(s.time.as_str()),
                Value::from(s.day),
                Value::from(s.timezone.as_str()),
                Value::from(naive(Utc::now())),
            ],
        ))
        .await?
        .ok_or_else(|| DbErr::RecordNotFound("Guild".to_owned()))?;
    Guild::from_row(&row)
}

pub async fn find(db: &Db, guild_id: u64) -> Result<Option<Guild>, DbErr> {
    db.read()
        .query_one_raw(stmt(
            &format!(r#"SELECT {COLUMNS} FROM "Guild" WHERE "guildId" = $1"#),
            [Value::from(guild_id.to_string())],
        ))
        .await?
        .as_ref()
        .map(Guild::from_row)
        .transpose()
}

/// The configured guilds of shard `shard` of `total` (Discord's rule:
/// `(guild_id >> 22) % total`).
/// The guilds of shard `shard` of `total` with a quote channel, by
/// Discord's formula `(guild_id >> 22) % total`. Computed in `numeric`: a
/// snowflake is a u64, and one above PostgreSQL's bigint (a row imported
/// by reconcile) must not fail the whole tick.
pub async fn scheduled(db: &Db, shard: u32, total: u32) -> Result<Vec<Guild>, DbErr> {
    let rows = db
        .read()
        .query_all_raw(stmt(
            &format!(
                r#"SELECT {COLUMNS} FROM "Guild"
                   WHERE "motivationChannelId" IS NOT NULL AND "guildId" ~ '^[0-9]{{1,20}}$'
                     AND "guildId"::numeric <= 18446744073709551615
                     AND mod(div("guildId"::numeric, 4194304), $2) = $1"#
            ),
            [
                Value::from(i64::from(shard)),
                Value::from(i64::from(total.max(1))),
            ],
        ))
        .await?;
    rows.iter().map(Guild::from_row).collect()
}

/// Whether the quote due at `due` is still to be sent: not sent since, and
/// the schedule was not set after it.
pub fn owed(g: &Guild, due: DateTime<Utc>) -> bool {
    let due = naive(due);
    g.updated_at <= due && g.last_sent.is_none_or(|s| s < due)
}

/// Claims the quote for this period: only one process wins, whichever
/// runs, restarts or runs twice.
pub async fn claim(db: &Db, g: &Guild, at: DateTime<Utc>) -> Result<bool, DbErr> {
    let res = db
        .write()
        .execute_raw(stmt(
            r#"UPDATE "Guild" SET "lastMotivationSentAt" = $2
               WHERE "id"::text = $1 AND "lastMotivationSentAt" IS NOT DISTINCT FROM $3"#,
            [
                Value::from(g.id.as_str()),
                Value::from(naive(at)),
                Value::from(g.last_sent),
            ],
        ))
        .await?;
    Ok(res.rows_affected() == 1)
}

/// Gives a claim back (the post failed for a reason that may pass).
pub async fn unclaim(db: &Db, g: &Guild, at: DateTime<Utc>) -> Result<(), DbErr> {
    db.write()
        .execute_raw(stmt(
            r#"UPDATE "Guild" SET "lastMotivationSentAt" = $3
               WHERE "id"::text = $1 AND "lastMotivationSentAt" = $2"#,
            [
                Value::from(g.id.as_str()),
                Value::from(naive(at)),
                Value::from(g.last_sent),
            ],
        ))
        .await?;
    Ok(())
}
