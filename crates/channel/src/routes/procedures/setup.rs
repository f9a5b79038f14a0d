//! `setup.status` and `setup.complete`: the first run's set-up.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Ctx;
use crate::auth::session_cookie;
use crate::domain::owner::{self, Setup};
use crate::domain::values::{Email, NewPassword};
use crate::error::Error;
use crate::trpc::{Access, Context, Kind, Procedures, no_input};
use keel_platform::guard::Door;
use keel_platform::values::{NotBlank, Text, Trimmed};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderCheck {
    /// Whether the GetStream variables are all set.
    pub configured: bool,
    /// The ones missing.
    pub missing: Vec<&'static str>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetupStatus {
    /// True until an owner exists.
    pub needs_setup: bool,
    pub provider: ProviderCheck,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetupInput {
    /// The set-up code keel printed in its log at start (or
    /// `KEEL_CHANNEL_SETUP_CODE`); case, spaces and dashes do not matter.
    pub code: String,
    #[schema(value_type = String, format = Email, max_length = 254)]
    pub email: Email,
    /// 10 to 200 characters, not one of the commonly used passwords.
    #[schema(value_type = String, format = Password, min_length = 10, max_length = 200)]
    pub password: NewPassword,
    #[schema(inline)]
    pub title: Text<120, NotBlank>,
    #[serde(default)]
    #[schema(inline)]
    pub description: Option<Text<2000, Trimmed>>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetupDone {
    /// The owner is signed in (the session cookie is set).
    pub signed_in: bool,
}

pub fn add(p: Procedures<Ctx>) -> Procedures<Ctx> {
    p.procedure(Kind::Query, "setup.status",
        Access::Public,
        "Whether set-up is needed, and which provider variables are missing",
        no_input(status),
    )
    .procedure(Kind::Mutation, "setup.complete",
        Access::Public,
        "Creates the owner and names the channel, once, with the set-up code from keel's log; signs the owner in",
        complete,
    )
}

async fn status(ctx: Ctx) -> Result<SetupStatus, Error> {
    let missing = ctx.state.stream.missing();
    Ok(SetupStatus {
        needs_setup: !owner::exists(&ctx.state.platform.db).await?,
        provider: ProviderCheck {
            configured: missing.is_empty(),
            missing,
        },
    })
}

/// The set-up code's check: 10 attempts a minute from one address (the
/// code has 60 bits), at the platform's guard.
pub const SETUP: Door = Door {
    service: crate::API,
    name: "setup",
    routes: &[("POST", "/api/trpc/setup.complete")],
    per_address: 10,
    per_name: 0,
};

async fn complete(ctx: Ctx, input: SetupInput) -> Result<SetupDone, Error> {
    let db = &ctx.state.platform.db;
    let knock = ctx
        .state
        .platform
        .guard
        .knock(SETUP, ctx.peer, None)
        .await?;
    let done = owner::set_up(
        db,
        Setup {
            code: input.code,
            email: input.email,
            password: input.password,
            title: input.title.into_string(),
            description: input.description.map(Text::into_string).unwrap_or_default(),
        },
        ctx.state.cfg.setup_code.as_ref(),
    )
    .await;
    match done {
        Ok(()) => knock.accepted(),
        Err(e) => {
            knock.refused();
            return Err(e.into());
        }
    }
    ctx.info_changed();
    let ttl = chrono::Duration::from_std(ctx.state.cfg.session_ttl).unwrap_or_default();
    let token = owner::open_session(db, ttl).await?;
    if let Some(c) = session_cookie(&ctx.state.cfg, &token, ttl.num_seconds()) {
        ctx.cookies().set(c);
    }
    Ok(SetupDone { signed_in: true })
}
