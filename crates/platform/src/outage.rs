//! Whether a failure means a dependency is away rather than a bug: the
//! database unreachable or restarting, its connections used up, SQLite
//! busy past its timeout, Redis down, the disk full. Such a request is
//! answered 503 (507 when storage is full) with `Retry-After`, in the
//! service's own error shape, instead of 500; the cause is logged as any
//! internal error's is.

use std::error::Error;

use sea_orm::sqlx;
use sea_orm::{DbErr, RuntimeErr};

use crate::batch::{BatchError, SharedCause};
use crate::cache::CacheError;
use crate::jwks::JwtError;

/// What kind of outage a failure shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outage {
    /// A dependency cannot be reached or cannot serve now: 503.
    Unavailable,
    /// The database's storage is full: 507.
    StorageFull,
}

/// The outage `e` (or one of its sources) shows, if any.
pub fn of(e: &(dyn Error + 'static)) -> Option<Outage> {
    let mut next = Some(e);
    while let Some(e) = next {
        if let Some(found) = one(e) {
            return Some(found);
        }
        next = e.source();
    }
    None
}

fn one(e: &(dyn Error + 'static)) -> Option<Outage> {
    if let Some(db) = e.downcast_ref::<DbErr>() {
        return of_db(db);
    }
    if let Some(s) = e.downcast_ref::<sqlx::Error>() {
        return of_sqlx(s);
    }
    // A database error inside a `#[error(transparent)]` variant shows only
    // its source: what it ran into, or that no connection came.
    if let Some(RuntimeErr::SqlxError(s)) = e.downcast_ref::<RuntimeErr>() {
        return of_sqlx(s);
    }
    if e.is::<sea_orm::ConnAcquireErr>() {
        return Some(Outage::Unavailable);
    }
    if e.is::<CacheError>() {
        return Some(Outage::Unavailable);
    }
    // The identity provider's keys cannot be fetched: a token cannot be
    // judged either way, which is not the client's fault.
    if matches!(
        e.downcast_ref::<JwtError>(),
        Some(JwtError::KeysUnavailable(_))
    ) {
        return Some(Outage::Unavailable);
    }
    if let Some(shared) = e.downcast_ref::<SharedCause>() {
        return of(shared.get());
    }
    // The group-commit writer stopped: the server is shutting down.
    if matches!(e.downcast_ref::<BatchError>(), Some(BatchError::Stopped)) {
        return Some(Outage::Unavailable);
    }
    None
}

/// The outage a database error shows, if any.
pub fn of_db(e: &DbErr) -> Option<Outage> {
    match e {
        DbErr::ConnectionAcquire(_) => Some(Outage::Unavailable),
        DbErr::Conn(r) | DbErr::Exec(r) | DbErr::Query(r) => match r {
            RuntimeErr::SqlxError(s) => of_sqlx(s),
            // SeaORM's own connection failures.
            RuntimeErr::Internal(_) if matches!(e, DbErr::Conn(_)) => Some(Outage::Unavailable),
            _ => None,
        },
        _ => None,
    }
}

fn of_sqlx(e: &sqlx::Error) -> Option<Outage> {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => Some(Outage::Unavailable),
        sqlx::Error::Database(d) => d.code().and_then(|c| of_code(&c)),
        _ => None,
    }
}

/// PostgreSQL's SQLSTATE (five characters) or SQLite's result code.
fn of_code(code: &str) -> Option<Outage> {
    if code.len() == 5 {
        return match code {
            // disk_full
            "53100" => Some(Outage::StorageFull),
            // too_many_connections, out_of_memory, admin / crash shutdown,
            // cannot_connect_now, and every connection exception (08xxx).
            "53300" | "53200" | "57P01" | "57P02" | "57P03" => Some(Outage::Unavailable),
            c if c.starts_with("08") => Some(Outage::Unavailable),
            _ => None,
        };
    }
    // SQLite: the primary code is the extended code's low byte.
    match code.parse::<i32>().ok()? & 0xff {
        13 => Some(Outage::StorageFull), // SQLITE_FULL
        // BUSY, LOCKED, IOERR, CANTOPEN, PROTOCOL
        5 | 6 | 10 | 14 | 15 => Some(Outage::Unavailable),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_name_the_outage() {
        assert_eq!(of_code("53100"), Some(Outage::StorageFull));
        assert_eq!(of_code("57P01"), Some(Outage::Unavailable));
        assert_eq!(of_code("08006"), Some(Outage::Unavailable));
        assert_eq!(of_code("23505"), None, "a unique violation is no outage");
        assert_eq!(of_code("13"), Some(Outage::StorageFull));
        assert_eq!(of_code("5"), Some(Outage::Unavailable));
        assert_eq!(
            of_code("778"),
            Some(Outage::Unavailable),
            "SQLITE_IOERR_WRITE"
        );
        assert_eq!(of_code("2067"), None, "SQLITE_CONSTRAINT_UNIQUE");
    }

    /// A domain error wrapping the database's, as services write them.
    #[derive(Debug, thiserror::Error)]
    enum Wrapper {
        #[error(transparent)]
        Db(#[from] DbErr),
    }

    #[test]
    fn an_outage_is_found_inside_a_transparent_wrapper_and_a_batch() {
        let io = sqlx::Error::Io(std::io::Error::from(std::io::ErrorKind::UnexpectedEof));
        let query = DbErr::Query(RuntimeErr::SqlxError(std::sync::Arc::new(io)));
        let wrapped = Wrapper::from(query);
        assert_eq!(of(&wrapped), Some(Outage::Unavailable));
        let shared = crate::batch::BatchError::Write(SharedCause::new(Box::new(wrapped)));
        assert_eq!(of(&shared), Some(Outage::Unavailable));
        let acquire = Wrapper::from(DbErr::ConnectionAcquire(sea_orm::ConnAcquireErr::Timeout));
        assert_eq!(of(&acquire), Some(Outage::Unavailable));
        let unique = Wrapper::from(DbErr::RecordNotInserted);
        assert_eq!(of(&unique), None);
    }

    #[test]
    fn an_outage_is_found_through_a_shared_batch_cause() {
        let db = DbErr::ConnectionAcquire(sea_orm::ConnAcquireErr::Timeout);
        assert_eq!(of(&db), Some(Outage::Unavailable));
        assert_eq!(of(&DbErr::RecordNotFound("x".into())), None);
    }
}
