//! Re-checking the person before a sensitive change (deleting the account,
//! adding or removing a passkey): the current password, and a second
//! factor when two-factor is on. A wrong password or code counts towards
//! the same lockout as wrong two-factor codes.

use keel_platform::guard::{Knock, Throttled};
use keel_platform::sea_orm::DbErr;

use super::two_factor::{self, Keys, TwoFactorError};
use crate::entity::user;

/// Why the person was not recognised.
#[derive(Debug, thiserror::Error)]
pub enum ProofError {
    #[error("password is not the current password")]
    WrongPassword,
    #[error("Two-factor authentication is on: send a code from the app or a backup code")]
    TwoFactorRequired,
    #[error(transparent)]
    TwoFactor(#[from] TwoFactorError),
    #[error(transparent)]
    Throttled(#[from] Throttled),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// What the person sent to prove it is them, let in by the guard.
pub struct Proof<'g> {
    pub password: String,
    pub code: Option<String>,
    pub knock: Knock<'g>,
}

/// Checks `proof` for `u`.
pub async fn check(k: Keys<'_>, u: &user::Model, proof: Proof<'_>) -> Result<(), ProofError> {
    let Proof {
        password,
        code,
        mut knock,
    } = proof;
    two_factor::check_lockout(k.db, &u.id).await?;
    if !knock
        .verify(password, Some(u.password_hash.clone()))
        .await?
    {
        two_factor::record_failure(k.db, &u.id).await?;
        return Err(ProofError::WrongPassword);
    }
    if u.two_factor {
        let code = code.filter(|c| !c.trim().is_empty());
        let code = code.ok_or(ProofError::TwoFactorRequired)?;
        if let Err(e) = two_factor::check_second_factor(k, u, &code).await {
            knock.refused();
            return Err(e.into());
        }
    }
    knock.accepted();
    Ok(())
}
