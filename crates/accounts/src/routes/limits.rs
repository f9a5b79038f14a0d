//! How often an address or a login may knock. Every route that checks a
//! credential is a door of the platform's guard (`keel_platform::guard`):
//! attempts counted per address and per login in the shared cache (every
//! node, with Redis) before anything is hashed. Registrations are limited
//! per address the same way. Behind a proxy, set `KEEL_TRUSTED_PROXIES`,
//! or every visitor counts as the proxy's one address.

use keel_platform::guard::{Door, Knock};
use std::net::IpAddr;

use crate::NAME;
use crate::error::{self, Error};
use crate::state::AppState;

/// Sign-in attempts a minute for one login name, whatever the address.
const LOGINS_PER_NAME: u64 = 10;

/// A password sign-in (with its second factor when two-factor is on).
pub const LOGIN: Door = Door {
    service: NAME,
    name: "login",
    routes: &[("POST", "/auth/login")],
    per_address: 30,
    per_name: LOGINS_PER_NAME,
};

/// The two steps of a passkey sign-in, counted together per address.
pub const PASSKEY: Door = Door {
    service: NAME,
    name: "passkey",
    routes: &[("POST", "/auth/passkey/options"), ("POST", "/auth/passkey")],
    per_address: 30,
    per_name: 0,
};

/// The current password re-typed before a sensitive change, per address
/// and per user (besides the two-factor lockout it also counts towards).
pub const PROOF: Door = Door {
    service: NAME,
    name: "proof",
    routes: &[
        ("PUT", "/account/change-password"),
        ("DELETE", "/account"),
        ("POST", "/account/passkeys/registration"),
        ("DELETE", "/account/passkeys/{passkeyId}"),
    ],
    per_address: 30,
    per_name: LOGINS_PER_NAME,
};

/// Every door of the service.
pub const DOORS: &[Door] = &[LOGIN, PASSKEY, PROOF];

/// The guard's answer for `door` from `ip` as `name`, the door limited
/// per address by `KEEL_ACCOUNTS_LOGINS_PER_MINUTE`.
pub async fn knock<'a>(
    state: &'a AppState,
    door: Door,
    ip: IpAddr,
    name: Option<&str>,
) -> Result<Knock<'a>, Error> {
    let door = door.limited(state.cfg.logins_per_minute, door.per_name);
    Ok(state.platform.guard.knock(door, ip, name).await?)
}

/// A registration from `ip`.
pub async fn register(state: &AppState, ip: IpAddr) -> Result<(), Error> {
    match state
        .platform
        .cache
        .per_minute(
            "accounts:register:ip",
            &ip.to_string(),
            state.cfg.registrations_per_minute,
        )
        .await
    {
        None => Ok(()),
        Some(wait) => Err(error::too_many_attempts(wait.as_secs())),
    }
}
