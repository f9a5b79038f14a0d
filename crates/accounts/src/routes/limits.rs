//! How often an address or a login may knock: sign-ins and registrations
//! per minute, counted in the shared cache (every node, with Redis), so a
//! password cannot be guessed at speed and accounts cannot be made in bulk.
//! Behind a proxy, set `KEEL_TRUSTED_PROXIES`, or every visitor counts as
//! the proxy's one address.

use crate::error::{self, Error};
use crate::state::AppState;
use std::net::IpAddr;

/// Sign-in attempts a minute for one login name, whatever the address.
const LOGINS_PER_NAME: u64 = 10;

/// At most `limit` hits of `subject` under `scope` a minute (0: no
/// limit); 429 beyond. The cache keys the subject by its pseudonym.
async fn within(state: &AppState, scope: &str, subject: &str, limit: u64) -> Result<(), Error> {
    match state
        .platform
        .cache
        .per_minute(scope, subject, limit)
        .await?
    {
        None => Ok(()),
        Some(wait) => Err(error::too_many_attempts(wait.as_secs())),
    }
}

/// A sign-in from `ip` as `login`.
pub async fn login(state: &AppState, ip: IpAddr, login: &str) -> Result<(), Error> {
    within(
        state,
        "accounts:login:ip",
        &ip.to_string(),
        state.cfg.logins_per_minute,
    )
    .await?;
    let name = login.trim().to_lowercase();
    within(state, "accounts:login:name", &name, LOGINS_PER_NAME).await
}

/// A registration from `ip`.
pub async fn register(state: &AppState, ip: IpAddr) -> Result<(), Error> {
    within(
        state,
        "accounts:register:ip",
        &ip.to_string(),
        state.cfg.registrations_per_minute,
    )
    .await
}

/// A passkey sign-in step (options or answer) from `ip`: counted with
/// password sign-ins' limit, on its own key.
pub async fn passkey(state: &AppState, ip: IpAddr) -> Result<(), Error> {
    within(
        state,
        "accounts:passkey:ip",
        &ip.to_string(),
        state.cfg.logins_per_minute,
    )
    .await
}
