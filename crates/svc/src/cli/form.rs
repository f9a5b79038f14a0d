//! `keel svc form list | show <id> | put <file|-> | remove <id>`.

use clap::Subcommand;
use keel_platform::Platform;
use keel_platform::audit::{self, Actor, Entry};
use serde_json::json;

use crate::domain::forms::FormDef;
use crate::domain::site;

#[derive(Debug, Subcommand)]
pub enum FormCommand {
    /// List the forms as JSON.
    List,
    /// Print one form as JSON.
    Show { id: String },
    /// Create or replace a form from a JSON file (`-` reads standard input):
    /// {"id": "12", "title": "...", "fields": [{"id", "label", "type", "required", "choices", "max_length"}]}
    Put { file: String },
    /// Delete a form and its submissions.
    Remove { id: String },
}

pub async fn run(p: &Platform, cmd: FormCommand) -> anyhow::Result<String> {
    let db = &p.db;
    match cmd {
        FormCommand::List => super::json(&site::list_forms(db).await?),
        FormCommand::Show { id } => match site::get_form(db, &id).await? {
            Some(f) => super::json(&f),
            None => anyhow::bail!("no form {id:?}"),
        },
        FormCommand::Put { file } => {
            let text = if file == "-" {
                super::stdin()?
            } else {
                std::fs::read_to_string(&file).map_err(|e| anyhow::anyhow!("{file}: {e}"))?
            };
            let def: FormDef = serde_json::from_str(&text)
                .map_err(|e| anyhow::anyhow!("not a form definition: {e}"))?;
            let before = site::get_form(db, &def.id).await?;
            site::put_form(db, &def).await?;
            let action = if before.is_some() {
                "svc_form_changed"
            } else {
                "svc_form_created"
            };
            let (before, after) = (before.map(|b| json!(b)), Some(json!(def)));
            let entry = Entry::new(crate::NAME, action)
                .on(&def.id)
                .change(before, after);
            audit::record(db, &Actor::cli(), entry).await;
            Ok(format!("saved form {}", def.id))
        }
        FormCommand::Remove { id } => {
            let before = site::get_form(db, &id).await?.map(|b| json!(b));
            if site::delete_form(db, &id).await? {
                let entry = Entry::new(crate::NAME, "svc_form_removed").on(&id);
                audit::record(db, &Actor::cli(), entry.change(before, None)).await;
                Ok(format!("removed form {id}"))
            } else {
                anyhow::bail!("no form {id:?}")
            }
        }
    }
}
