//! What every console handler shares.

use std::sync::Arc;

use keel_platform::Platform;
use keel_platform::http::Readiness;

use crate::config::Config;

pub type AppState = Arc<Inner>;

pub struct Inner {
    pub platform: Platform,
    pub cfg: Config,
    /// The process's readiness, as `/readyz` answers it.
    pub readiness: Readiness,
    /// The job kinds this process registered.
    pub job_kinds: Vec<&'static str>,
    /// The areas the services added: (name, title, role).
    pub areas: Vec<AreaView>,
    /// The services this process serves.
    pub services: Vec<&'static str>,
}

/// An area as the navigation lists it.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct AreaView {
    pub name: &'static str,
    pub title: &'static str,
    pub role: keel_platform::console::Role,
}
