//! The WebAuthn relying party made from the passkey settings.

use keel_platform::config::ConfigError;
use webauthn_rs::{Webauthn, WebauthnBuilder};

use crate::config::Passkeys;

/// The relying party: its id, name, allowed origins and timeout. The first
/// web origin is the builder's own; the rest are added as allowed.
pub fn relying_party(cfg: &Passkeys) -> Result<Webauthn, ConfigError> {
    let invalid = |e: webauthn_rs::prelude::WebauthnError| {
        ConfigError::invalid("KEEL_ACCOUNTS_WEBAUTHN_RP_ID", e.to_string())
    };
    let mut web = cfg
        .origins
        .iter()
        .filter(|o| o.scheme().starts_with("http"));
    let first = web.next().ok_or_else(|| {
        ConfigError::invalid("KEEL_ACCOUNTS_WEBAUTHN_ORIGINS", "names no web origin")
    })?;
    let mut builder = WebauthnBuilder::new(&cfg.rp_id, first)
        .map_err(invalid)?
        .rp_name(&cfg.rp_name)
        .timeout(cfg.timeout);
    for origin in cfg.origins.iter().filter(|o| *o != first) {
        builder = builder.append_allowed_origin(origin);
    }
    builder.build().map_err(invalid)
}
