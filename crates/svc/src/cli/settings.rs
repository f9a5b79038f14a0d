//! `keel svc settings show | set <key> <value>`.

use clap::Subcommand;
use keel_platform::Platform;

use crate::domain::settings::{SettingsPatch, SettingsStore, SettingsView};

#[derive(Debug, Subcommand)]
pub enum SettingsCommand {
    /// Print the settings as JSON.
    Show,
    /// Set one setting; lists are comma-separated. Keys: allowed_origins,
    /// forms_allowlist, push_enabled, appcheck_project_number,
    /// appcheck_app_ids, appcheck_debug_tokens, submission_rate_limit,
    /// payload_limit_bytes.
    Set {
        key: String,
        /// The value (an empty string clears a list).
        value: String,
    },
}

pub async fn run(p: &Platform, cmd: SettingsCommand) -> anyhow::Result<String> {
    let store = SettingsStore::new(p.db.clone());
    let s = match cmd {
        SettingsCommand::Show => store.get().await?,
        SettingsCommand::Set { key, value } => {
            store
                .update(SettingsPatch::from_pair(&key, &value)?)
                .await?
        }
    };
    super::json(&SettingsView::from(s.as_ref()))
}
