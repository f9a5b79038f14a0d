//! What every accounts handler shares.

use keel_platform::Platform;
use keel_platform::crypto::SecretBox;
use keel_platform::db::Db;
use keel_platform::state::Shared;

use crate::auth::cache::SessionCache;
use crate::auth::geo::GeoDb;
use crate::auth::tokens::TokenKeys;
use crate::config::Config;

pub type AppState = Shared<Inner>;

pub struct Inner {
    pub platform: Platform,
    pub cfg: Config,
    pub tokens: TokenKeys,
    pub secrets: SecretBox,
    pub geo: GeoDb,
    /// Verified against when a login names no user, so both cases cost the same.
    pub dummy_hash: String,
    pub sessions: SessionCache,
}

impl Inner {
    pub fn db(&self) -> &Db {
        &self.platform.db
    }

    /// Call after committing any change to the user's row or sessions.
    pub fn user_changed(&self, user_id: &str) {
        self.sessions.forget_user(user_id);
    }

    /// Call after committing a session's revocation.
    pub fn session_revoked(&self, session_id: &str) {
        self.sessions.forget_session(session_id);
    }
}
