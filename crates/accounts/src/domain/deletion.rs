//! Deleting an account: the person proves it is them (the password, and a
//! second factor when two-factor is on), then everything stored about the
//! user goes in one transaction: the user row and, by its foreign keys,
//! sessions, refresh tokens, goals, pending email changes, verification
//! tokens, backup codes, lockout records, passkeys and passkey ceremonies; queued mails to the user's
//! addresses are dropped and a last mail says the account is gone. Then the
//! deleted bytes are erased from the disk (`Db::erase_freed`), and again
//! once that last mail is sent.

use keel_platform::db::Db;
use keel_platform::mail::{self, Mail};
use keel_platform::sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use super::proof::{self, Proof, ProofError};
use super::two_factor::Keys;
use crate::entity::{email_change, email_verification, user};

/// Why a deletion was refused.
#[derive(Debug, thiserror::Error)]
pub enum DeletionError {
    #[error(transparent)]
    Proof(#[from] ProofError),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Deletes the user after checking `proof` (see [`proof::check`]).
pub async fn delete_account(
    k: Keys<'_>,
    app_name: &str,
    u: &user::Model,
    proof: Proof<'_>,
) -> Result<(), DeletionError> {
    proof::check(k, u, proof).await?;
    erase(k.db, app_name, u).await?;
    k.sessions.user_changed(&u.id).await;
    tracing::info!(user = %u.id, "account deleted");
    Ok(())
}

/// Deletes the user at an operator's word (who checked who asks): the
/// same erasure as the user's own deletion, without their proof.
pub async fn delete_by_operator(k: Keys<'_>, app_name: &str, u: &user::Model) -> Result<(), DbErr> {
    erase(k.db, app_name, u).await?;
    k.sessions.user_changed(&u.id).await;
    tracing::info!(user = %u.id, "account deleted by an operator");
    Ok(())
}

/// Every address a queued mail to this user could be going to.
async fn addresses<C: ConnectionTrait>(conn: &C, u: &user::Model) -> Result<Vec<String>, DbErr> {
    let mut all = vec![u.email.clone()];
    let changes = email_change::Entity::find()
        .filter(email_change::Column::UserId.eq(u.id.as_str()))
        .all(conn)
        .await?;
    all.extend(changes.into_iter().map(|c| c.new_email));
    let verifications = email_verification::Entity::find()
        .filter(email_verification::Column::UserId.eq(u.id.as_str()))
        .all(conn)
        .await?;
    all.extend(verifications.into_iter().map(|v| v.email));
    all.sort();
    all.dedup();
    Ok(all)
}

async fn erase(db: &Db, app_name: &str, u: &user::Model) -> Result<(), DbErr> {
    let txn = db.begin_write().await?;
    let to = addresses(&txn, u).await?;
    let refs: Vec<&str> = to.iter().map(String::as_str).collect();
    mail::forget(&txn, &refs).await?;
    user::Entity::delete_by_id(u.id.as_str()).exec(&txn).await?;
    // Refused sign-ins name the user and where the attempts came from.
    keel_platform::audit::forget(&txn, crate::NAME, "accounts_sign_in_refused", u.id.as_str())
        .await?;
    mail::enqueue_last(
        &txn,
        Mail {
            from_name: Some(app_name.to_owned()),
            to: u.email.clone(),
            subject: format!("Your {app_name} account was deleted"),
            text: format!(
                "Hello {name},\n\nYour {app_name} account {name} and everything stored with it (goals, sessions, settings) were deleted at your request. Nothing of it is kept.\n\nIf you did not ask for this, someone knew your password: it may be in use elsewhere, so change it there.\n",
                name = u.username,
            ),
            ..Mail::default()
        },
    )
    .await?;
    txn.commit().await?;
    // The rows are gone from queries; now from the disk (SQLite's log).
    db.erase_freed().await
}
