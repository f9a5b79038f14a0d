//! `keel svc ...`: the host site's administration from the command line.

use std::io::Read;

use keel_platform::Platform;
use keel_platform::config::{PlatformConfig, Source};
use keel_svc::admin;
use keel_svc::forms::FormDef;
use keel_svc::settings::{SettingsPatch, SettingsStore, SettingsView};
use keel_svc::site;

use crate::cli::{AdminCommand, AppPasswordCommand, FormCommand, SettingsCommand, SvcCommand};

fn fail(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn json(v: &impl serde::Serialize) -> Result<String, String> {
    serde_json::to_string_pretty(v).map_err(fail)
}

/// Runs one command; what to print.
pub async fn run(src: &Source, cmd: SvcCommand) -> Result<String, String> {
    let platform = Platform::connect(PlatformConfig::from_source(src).map_err(fail)?)
        .await
        .map_err(fail)?;
    platform
        .migrate(&[&keel_svc::MIGRATIONS])
        .await
        .map_err(fail)?;
    let out = dispatch(&platform, cmd).await;
    platform.db.clone().close().await;
    out
}

async fn dispatch(p: &Platform, cmd: SvcCommand) -> Result<String, String> {
    let db = &p.db;
    match cmd {
        SvcCommand::Settings(SettingsCommand::Show) => {
            let s = SettingsStore::new(db.clone()).get().await.map_err(fail)?;
            json(&SettingsView::from(s.as_ref()))
        }
        SvcCommand::Settings(SettingsCommand::Set { key, value }) => {
            let patch = SettingsPatch::from_pair(&key, &value).map_err(fail)?;
            let s = SettingsStore::new(db.clone())
                .update(patch)
                .await
                .map_err(fail)?;
            json(&SettingsView::from(s.as_ref()))
        }
        SvcCommand::Admin(AdminCommand::Add {
            username,
            no_capability,
            password_stdin,
        }) => {
            let given = if password_stdin {
                let mut buf = String::new();
                std::io::stdin().read_to_string(&mut buf).map_err(fail)?;
                Some(buf.trim_end_matches(['\r', '\n']).to_owned()).filter(|p| !p.is_empty())
            } else {
                None
            };
            let generated = given.is_none();
            let (u, password) = admin::add_user(db, &username, given, !no_capability)
                .await
                .map_err(fail)?;
            let caps = if u.capabilities.is_empty() {
                "no capabilities"
            } else {
                u.capabilities.as_str()
            };
            Ok(if generated {
                format!(
                    "created {} ({caps}); login password (shown once): {password}",
                    u.username
                )
            } else {
                format!("created {} ({caps})", u.username)
            })
        }
        SvcCommand::AppPassword(AppPasswordCommand::Add { username, name }) => {
            let shown = admin::add_app_password(db, &username, &name)
                .await
                .map_err(fail)?;
            Ok(format!(
                "application password {name:?} for {username} (shown once): {shown}"
            ))
        }
        SvcCommand::AppPassword(AppPasswordCommand::Revoke { username, name }) => {
            if admin::revoke_app_password(db, &username, &name)
                .await
                .map_err(fail)?
            {
                Ok(format!("revoked {name:?} of {username}"))
            } else {
                Err(format!(
                    "{username} has no application password named {name:?}"
                ))
            }
        }
        SvcCommand::AppPassword(AppPasswordCommand::List { username }) => {
            let list = admin::list_app_passwords(db, &username)
                .await
                .map_err(fail)?;
            Ok(list
                .into_iter()
                .map(|(name, at)| format!("{name}\t{}", keel_platform::time::iso_millis(&at)))
                .collect::<Vec<_>>()
                .join("\n"))
        }
        SvcCommand::Form(FormCommand::List) => json(&site::list_forms(db).await.map_err(fail)?),
        SvcCommand::Form(FormCommand::Show { id }) => {
            let form = site::get_form(db, &id).await.map_err(fail)?;
            form.map_or_else(|| Err(format!("no form {id:?}")), |f| json(&f))
        }
        SvcCommand::Form(FormCommand::Put { file }) => {
            let text = if file == "-" {
                let mut buf = String::new();
                std::io::stdin().read_to_string(&mut buf).map_err(fail)?;
                buf
            } else {
                std::fs::read_to_string(&file).map_err(|e| format!("{file}: {e}"))?
            };
            let def: FormDef =
                serde_json::from_str(&text).map_err(|e| format!("not a form definition: {e}"))?;
            site::put_form(db, &def).await.map_err(fail)?;
            Ok(format!("saved form {}", def.id))
        }
        SvcCommand::Form(FormCommand::Remove { id }) => {
            if site::delete_form(db, &id).await.map_err(fail)? {
                Ok(format!("removed form {id}"))
            } else {
                Err(format!("no form {id:?}"))
            }
        }
    }
}
