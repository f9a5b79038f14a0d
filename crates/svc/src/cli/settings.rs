//! `keel svc settings show | set <key> <value>`.

use clap::Subcommand;
use keel_platform::Platform;
use keel_platform::audit::{self, Actor};

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
            let patch = SettingsPatch::from_pair(&key, &value)?;
            let tokens_given = patch.appcheck_debug_tokens.is_some();
            let before = SettingsView::from(store.get().await?.as_ref());
            let after = store.update(patch).await?;
            let changes = SettingsView::changes(&before, &after.as_ref().into(), tokens_given);
            if let Some(entry) = changes {
                audit::record(&p.db, &Actor::cli(), entry).await;
            }
            after
        }
    };
    super::json(&SettingsView::from(s.as_ref()))
}
