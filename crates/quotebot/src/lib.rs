//! quotebot: the scheduled-quote chat bot runtime (seed 002). PostgreSQL
//! and Redis only; run with `keel quotebot ...`, not `keel serve`.

use keel_platform::migrate::MigrationSet;

pub const NAME: &str = "quotebot";

pub static MIGRATIONS: MigrationSet = MigrationSet {
    component: "quotebot",
    migrations: &[],
};
