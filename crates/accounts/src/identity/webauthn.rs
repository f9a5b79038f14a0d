//! The WebAuthn relying party made from the passkey settings, and the one
//! check webauthn-rs leaves to us: whether a ceremony was made inside a
//! frame of another site.

use keel_platform::config::ConfigError;
use serde::Deserialize;
use webauthn_rs::{Webauthn, WebauthnBuilder};

use crate::config::Passkeys;

// The names of the variables read here.
const ACCOUNTS_WEBAUTHN_ORIGINS: &str = "KEEL_ACCOUNTS_WEBAUTHN_ORIGINS";
const ACCOUNTS_WEBAUTHN_RP_ID: &str = "KEEL_ACCOUNTS_WEBAUTHN_RP_ID";

/// webauthn-rs' relying party and the sites that may frame a sign-in.
pub struct RelyingParty {
    pub webauthn: Webauthn,
    /// The top-level origins a framed sign-in may come from, without the
    /// trailing slash `Url` writes (`https://portal.example.org`).
    top_origins: Vec<String>,
}

/// Why a ceremony's framing is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Framed {
    #[error("it was made inside a frame of another site")]
    ByAnotherSite,
    #[error("its client data is not JSON")]
    Unreadable,
}

/// What a browser says of the page a ceremony ran in (WebAuthn Level 3,
/// `CollectedClientData`): `crossOrigin` when a frame's origin differs
/// from one of its ancestors', and then `topOrigin`, the page's.
#[derive(Deserialize)]
struct Framing {
    #[serde(rename = "crossOrigin", default)]
    cross_origin: Option<bool>,
    #[serde(rename = "topOrigin", default)]
    top_origin: Option<String>,
}

impl RelyingParty {
    /// The relying party: its id, name, allowed origins and timeout. The
    /// first web origin is the builder's own; the rest are added as allowed.
    pub fn new(cfg: &Passkeys) -> Result<Self, ConfigError> {
        let invalid = |e: webauthn_rs::prelude::WebauthnError| {
            ConfigError::invalid(ACCOUNTS_WEBAUTHN_RP_ID, e.to_string())
        };
        let mut web = cfg
            .origins
            .iter()
            .filter(|o| o.scheme().starts_with("http"));
        let first = web.next().ok_or_else(|| {
            ConfigError::invalid(ACCOUNTS_WEBAUTHN_ORIGINS, "names no web origin")
        })?;
        let mut builder = WebauthnBuilder::new(&cfg.rp_id, first)
            .map_err(invalid)?
            .rp_name(&cfg.rp_name)
            .timeout(cfg.timeout);
        for origin in cfg.origins.iter().filter(|o| *o != first) {
            builder = builder.append_allowed_origin(origin);
        }
        Ok(Self {
            webauthn: builder.build().map_err(invalid)?,
            top_origins: cfg
                .top_origins
                .iter()
                .map(|o| o.as_str().trim_end_matches('/').to_owned())
                .collect(),
        })
    }

    /// A sign-in made in a frame (`crossOrigin`, or a `topOrigin` at all)
    /// is accepted only when its top origin is one the operator listed
    /// (WebAuthn Level 3, 7.2: the relying party must expect to be framed
    /// by that page). webauthn-rs checks `crossOrigin` when registering
    /// only.
    pub fn check_sign_in_framing(&self, client_data_json: &[u8]) -> Result<(), Framed> {
        let framing = read_framing(client_data_json)?;
        if !framing.framed() {
            return Ok(());
        }
        match framing.top_origin.as_deref() {
            Some(top) if self.top_origins.iter().any(|o| o == top) => Ok(()),
            _ => Err(Framed::ByAnotherSite),
        }
    }

    /// A registration is never accepted from a frame of another site,
    /// whatever is listed: webauthn-rs refuses `crossOrigin` itself, and a
    /// `topOrigin` alone is refused here.
    pub fn check_registration_framing(client_data_json: &[u8]) -> Result<(), Framed> {
        if read_framing(client_data_json)?.framed() {
            Err(Framed::ByAnotherSite)
        } else {
            Ok(())
        }
    }
}

impl Framing {
    fn framed(&self) -> bool {
        self.cross_origin == Some(true) || self.top_origin.is_some()
    }
}

fn read_framing(client_data_json: &[u8]) -> Result<Framing, Framed> {
    serde_json::from_slice(client_data_json).map_err(|_| Framed::Unreadable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use url::Url;

    fn rp(top: &[&str]) -> RelyingParty {
        let cfg = Passkeys {
            rp_id: "example.com".into(),
            rp_name: "Example".into(),
            origins: vec![Url::parse("https://example.com").expect("url")],
            apple_app_ids: vec![],
            android_apps: vec![],
            timeout: std::time::Duration::from_secs(60),
            top_origins: top.iter().map(|o| Url::parse(o).expect("url")).collect(),
        };
        RelyingParty::new(&cfg).expect("relying party")
    }

    fn data(cross: Option<bool>, top: Option<&str>) -> Vec<u8> {
        let mut v = serde_json::json!({"type": "webauthn.get", "origin": "https://example.com"});
        if let Some(c) = cross {
            v["crossOrigin"] = c.into();
        }
        if let Some(t) = top {
            v["topOrigin"] = t.into();
        }
        serde_json::to_vec(&v).expect("json")
    }

    #[test]
    fn an_unframed_sign_in_passes_whatever_is_listed() {
        for top in [&[][..], &["https://portal.example.org"][..]] {
            let rp = rp(top);
            assert_eq!(rp.check_sign_in_framing(&data(None, None)), Ok(()));
            assert_eq!(rp.check_sign_in_framing(&data(Some(false), None)), Ok(()));
        }
    }

    #[test]
    fn a_framed_sign_in_passes_only_from_a_listed_top_origin() {
        let none = rp(&[]);
        let listed = rp(&["https://portal.example.org"]);
        let evil = data(Some(true), Some("https://evil.example.com"));
        let portal = data(Some(true), Some("https://portal.example.org"));
        assert_eq!(
            none.check_sign_in_framing(&evil),
            Err(Framed::ByAnotherSite)
        );
        assert_eq!(
            none.check_sign_in_framing(&portal),
            Err(Framed::ByAnotherSite)
        );
        assert_eq!(
            listed.check_sign_in_framing(&evil),
            Err(Framed::ByAnotherSite)
        );
        assert_eq!(listed.check_sign_in_framing(&portal), Ok(()));
        // Framed without saying by whom; a top origin without crossOrigin.
        assert_eq!(
            listed.check_sign_in_framing(&data(Some(true), None)),
            Err(Framed::ByAnotherSite)
        );
        assert_eq!(
            listed.check_sign_in_framing(&data(None, Some("https://evil.example.com"))),
            Err(Framed::ByAnotherSite)
        );
    }

    #[test]
    fn a_framed_registration_never_passes() {
        let portal = data(Some(true), Some("https://portal.example.org"));
        assert_eq!(
            RelyingParty::check_registration_framing(&portal),
            Err(Framed::ByAnotherSite)
        );
        assert_eq!(
            RelyingParty::check_registration_framing(&data(None, None)),
            Ok(())
        );
    }
}
