//! Passwords: argon2id (default parameters: 19 MiB, 2 passes), hashed off
//! the async runtime, at most one hash per CPU at a time: more would not be
//! faster, and a flood of logins must not allocate 19 MiB each at once.

use std::sync::OnceLock;

use tokio::sync::Semaphore;

use argon2::Argon2;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

fn slots() -> &'static Semaphore {
    static SLOTS: OnceLock<Semaphore> = OnceLock::new();
    SLOTS.get_or_init(|| {
        Semaphore::new(std::thread::available_parallelism().map_or(2, std::num::NonZero::get))
    })
}

/// Why a hash could not be made (never a password's content).
#[derive(Debug, thiserror::Error)]
#[error("password hashing failed: {0}")]
pub struct HashError(String);

pub async fn hash(password: String) -> Result<String, HashError> {
    let _slot = slots()
        .acquire()
        .await
        .map_err(|e| HashError(e.to_string()))?;
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| HashError(e.to_string()))
    })
    .await
    .map_err(|e| HashError(e.to_string()))?
}

/// A hash of a random password: verify against it when a login names no
/// user, so both cases cost the same.
pub fn dummy_hash() -> Result<String, HashError> {
    let salt = SaltString::generate(&mut OsRng);
    let password = crate::crypto::random_token(16);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| HashError(e.to_string()))
}

/// Whether `password` matches `hash`; a malformed hash never matches.
pub async fn verify(password: String, hash: String) -> bool {
    let Ok(_slot) = slots().acquire().await else {
        return false;
    };
    tokio::task::spawn_blocking(move || {
        PasswordHash::new(&hash)
            .map(|parsed| {
                Argon2::default()
                    .verify_password(password.as_bytes(), &parsed)
                    .is_ok()
            })
            .unwrap_or(false)
    })
    .await
    .unwrap_or(false)
}
