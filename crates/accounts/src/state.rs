//! What every accounts handler shares.

use keel_platform::Platform;
use keel_platform::crypto::SecretBox;
use keel_platform::db::Db;
use keel_platform::state::Shared;

use crate::auth::cache::SessionCache;
use crate::auth::geo::GeoDb;
use crate::auth::tokens::TokenKeys;
use crate::config::Config;
use crate::entity::session;
use keel_platform::sea_orm::EntityTrait;

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
    /// Group-commits new weekly goals.
    pub weekly_goals: crate::domain::goal_writer::WeeklyWriter,
}

impl Inner {
    pub fn db(&self) -> &Db {
        &self.platform.db
    }

    /// Call after committing any change to the user's row or sessions,
    /// before answering: every node sees it from the next request on.
    pub async fn user_changed(&self, user_id: &str) {
        self.sessions.forget_user(user_id);
        self.sessions.bump(user_id).await;
    }

    /// Call after committing a session's revocation, before answering;
    /// `user_id` when known (else it is looked up, only when shared).
    pub async fn session_revoked(&self, session_id: &str, user_id: Option<&str>) {
        self.sessions.forget_session(session_id);
        if !self.sessions.is_shared() {
            return;
        }
        let owner = match user_id {
            Some(u) => Some(u.to_owned()),
            None => session::Entity::find_by_id(session_id)
                .one(self.db().read())
                .await
                .ok()
                .flatten()
                .map(|s| s.user_id),
        };
        if let Some(u) = owner {
            self.sessions.bump(&u).await;
        }
    }
}
