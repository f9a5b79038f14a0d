//! `keel svc form list | show <id> | put <file|-> | remove <id>`.

use clap::Subcommand;
use keel_platform::Platform;

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
            site::put_form(db, &def).await?;
            Ok(format!("saved form {}", def.id))
        }
        FormCommand::Remove { id } => {
            if site::delete_form(db, &id).await? {
                Ok(format!("removed form {id}"))
            } else {
                anyhow::bail!("no form {id:?}")
            }
        }
    }
}
