//! What the bot does with its tables, without Discord.

pub mod guilds;
pub mod quotes;
pub mod schedule;
pub mod suggestions;
