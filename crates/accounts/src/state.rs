//! What every accounts handler shares.

use std::sync::Arc;

use keel_platform::Platform;
use keel_platform::crypto::SecretBox;
use keel_platform::db::Db;

use crate::config::Config;
use crate::domain::sessions::Issuer;
use crate::domain::two_factor::Keys;
use crate::identity::cache::SessionCache;
use crate::identity::geo::GeoDb;
use crate::identity::tokens::TokenKeys;

pub type AppState = Arc<Inner>;

pub struct Inner {
    pub platform: Platform,
    pub cfg: Config,
    pub tokens: TokenKeys,
    pub secrets: SecretBox,
    pub geo: GeoDb,
    pub sessions: SessionCache,
    /// Group-commits new weekly goals.
    pub weekly_goals: crate::domain::goal_writer::WeeklyWriter,
    /// The passkey relying party, when passkeys are configured.
    pub webauthn: Option<crate::identity::webauthn::RelyingParty>,
}

impl Inner {
    pub fn db(&self) -> &Db {
        &self.platform.db
    }

    /// What opens sessions and issues their tokens.
    pub fn issuer(&self) -> Issuer<'_> {
        Issuer {
            tokens: &self.tokens,
            geo: &self.geo,
            refresh_ttl: self.cfg.refresh_ttl,
        }
    }

    /// The relying party (if any) and how long a ceremony lives.
    pub fn relying_party(
        &self,
    ) -> (
        Option<&crate::identity::webauthn::RelyingParty>,
        std::time::Duration,
    ) {
        let ttl = self
            .cfg
            .passkeys
            .as_ref()
            .map_or(std::time::Duration::ZERO, |p| p.timeout);
        (self.webauthn.as_ref(), ttl)
    }

    /// What two-factor's steps work with.
    pub fn keys(&self) -> Keys<'_> {
        Keys {
            db: &self.platform.db,
            sessions: &self.sessions,
            secrets: &self.secrets,
        }
    }
}
