//! What every usage-alerts handler shares.

use keel_platform::db::Db;

use crate::auth::{Identifies, Identity};
use crate::config::Environment;
use crate::domain::ingest::Ingestor;

pub type AppState = std::sync::Arc<Inner>;

pub struct Inner {
    pub db: Db,
    pub environment: Environment,
    pub identity: Identity,
    pub ingestor: Ingestor,
}

impl Identifies for AppState {
    fn identity(&self) -> &Identity {
        &self.identity
    }
}
