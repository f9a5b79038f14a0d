//! How often an address or a login may knock: sign-ins and registrations
//! per minute, counted in the shared cache (every node, with Redis), so a
//! password cannot be guessed at speed and accounts cannot be made in bulk.
//! Behind a proxy, set `KEEL_TRUSTED_PROXIES`, or every visitor counts as
//! the proxy's one address.

use std::net::IpAddr;
use std::time::Duration;

use crate::error::{self, Error};
use crate::state::AppState;

/// Sign-in attempts a minute for one login name, whatever the address.
const LOGINS_PER_NAME: u64 = 10;

/// At most `limit` hits of `key` a minute (0: no limit); 429 beyond.
async fn within(state: &AppState, key: &str, limit: u64) -> Result<(), Error> {
    if limit == 0 {
        return Ok(());
    }
    let d = state
        .platform
        .cache
        .hit(key, limit, Duration::from_secs(60))
        .await?;
    if d.allowed {
        Ok(())
    } else {
        Err(error::too_many_attempts(d.retry_after.as_secs().max(1)))
    }
}

/// A sign-in from `ip` as `login`.
pub async fn login(state: &AppState, ip: IpAddr, login: &str) -> Result<(), Error> {
    within(
        state,
        &format!("accounts:login:ip:{ip}"),
        state.cfg.logins_per_minute,
    )
    .await?;
    let name = login.trim().to_lowercase();
    within(
        state,
        &format!("accounts:login:name:{name}"),
        LOGINS_PER_NAME,
    )
    .await
}

/// A registration from `ip`.
pub async fn register(state: &AppState, ip: IpAddr) -> Result<(), Error> {
    within(
        state,
        &format!("accounts:register:ip:{ip}"),
        state.cfg.registrations_per_minute,
    )
    .await
}

/// A passkey sign-in step (options or answer) from `ip`: counted with
/// password sign-ins' limit, on its own key.
pub async fn passkey(state: &AppState, ip: IpAddr) -> Result<(), Error> {
    within(
        state,
        &format!("accounts:passkey:ip:{ip}"),
        state.cfg.logins_per_minute,
    )
    .await
}
