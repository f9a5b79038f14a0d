//! Why a dependency's health check failed, as `/readyz` reports it.

/// A failed health check: the check's answer, kept as the source.
#[derive(Debug, thiserror::Error)]
pub enum Unhealthy {
    #[error("timed out")]
    TimedOut,
    #[error("{0}")]
    Database(#[source] sea_orm::DbErr),
    #[error("{0}")]
    Redis(#[source] redis::RedisError),
    #[error("background task stopped: {}", .0.join(", "))]
    TasksStopped(Vec<&'static str>),
}
