//! The migration set `quotebot` (PostgreSQL only, numbered from 0000,
//! forward only): the four documented tables with quoted camelCase names, its
//! enums and indexes. History is kept in the platform's `keel_migrations`
//! under component `quotebot`.

pub mod guard;
pub mod shape;

use keel_platform::migrate::{Migration, MigrationSet};
use keel_platform::sea_orm::{DbBackend, Statement};

pub const COMPONENT: &str = "quotebot";

/// The application tables.
pub const TABLES: [&str; 4] = [
    "Guild",
    "MotivationQuote",
    "SuggestionQuote",
    "PlatformActivity",
];

/// Migration 0000, as SQL statements.
pub const INITIAL: &[&str] = &[
    r#"CREATE TYPE "MotivationFrequency" AS ENUM ('Daily', 'Weekly', 'Monthly')"#,
    r#"CREATE TYPE "SuggestionStatus" AS ENUM ('Pending', 'Approved', 'Rejected')"#,
    r#"CREATE TYPE "ActivityType" AS ENUM ('Custom', 'Listening', 'Streaming', 'Playing')"#,
    r#"CREATE TABLE "Guild" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "guildId" text NOT NULL,
        "motivationChannelId" text,
        "motivationFrequency" "MotivationFrequency" NOT NULL DEFAULT 'Daily',
        "motivationTime" text NOT NULL DEFAULT '09:00',
        "motivationDay" integer,
        "timezone" text NOT NULL DEFAULT 'UTC',
        "lastMotivationSentAt" timestamp(3),
        "isPremium" boolean NOT NULL DEFAULT false,
        "joinedAt" timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
        "updatedAt" timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
        CONSTRAINT "Guild_pkey" PRIMARY KEY ("id")
    )"#,
    r#"CREATE UNIQUE INDEX "Guild_guildId_key" ON "Guild" ("guildId")"#,
    r#"CREATE INDEX "guild_motivation_channel_idx" ON "Guild" ("motivationChannelId")"#,
    r#"CREATE TABLE "MotivationQuote" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "quote" text NOT NULL,
        "author" text NOT NULL,
        "addedBy" text NOT NULL,
        "createdAt" timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
        CONSTRAINT "MotivationQuote_pkey" PRIMARY KEY ("id")
    )"#,
    r#"CREATE TABLE "SuggestionQuote" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "quote" text NOT NULL,
        "author" text NOT NULL,
        "addedBy" text NOT NULL,
        "status" "SuggestionStatus" NOT NULL DEFAULT 'Pending',
        "reviewedBy" text,
        "reviewedAt" timestamp(3),
        "createdAt" timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
        "updatedAt" timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
        CONSTRAINT "SuggestionQuote_pkey" PRIMARY KEY ("id")
    )"#,
    r#"CREATE INDEX "suggestion_status_idx" ON "SuggestionQuote" ("status")"#,
    r#"CREATE TABLE "PlatformActivity" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "activity" text NOT NULL,
        "type" "ActivityType" NOT NULL DEFAULT 'Playing',
        "url" text,
        "createdAt" timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
        CONSTRAINT "PlatformActivity_pkey" PRIMARY KEY ("id")
    )"#,
];

fn initial(_backend: DbBackend) -> Vec<Statement> {
    INITIAL
        .iter()
        .map(|sql| Statement::from_string(DbBackend::Postgres, *sql))
        .collect()
}

pub static MIGRATIONS: MigrationSet = MigrationSet {
    component: COMPONENT,
    migrations: &[Migration {
        version: 0,
        name: "guild_quotes_suggestions_activities",
        up: initial,
    }],
    tables: keel_platform::migrate::no_tables,
};
