//! Registration, login, logout and email verification.

use chrono::Utc;
use keel_platform::crypto;
use keel_platform::db::{Db, is_unique_violation};
use keel_platform::guard::{Knock, Throttled};
use keel_platform::mail::{self, Mail};
use keel_platform::password::{self, HashError};
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, Set,
};

use super::fields::{Email, Password, Username};
use super::sessions::{self, Client, Issuer, SessionError, TokenPair};
use super::two_factor::{self, TwoFactorError};
use super::users::{self, UserError};
use crate::entity::{email_verification, user};
use crate::id::UserId;
use crate::identity::cache::SessionCache;

/// Why a registration, a login or a verification was refused.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("Invalid login or password")]
    InvalidCredentials,
    #[error("This account is banned")]
    Banned,
    #[error(
        "Two-factor authentication is on: send a code from the authenticator app or a backup code"
    )]
    TwoFactorRequired,
    /// A wrong second factor at login.
    #[error("The code is wrong or was already used")]
    InvalidCode,
    #[error(transparent)]
    TwoFactor(TwoFactorError),
    #[error(transparent)]
    User(#[from] UserError),
    #[error("The token is unknown or has expired")]
    InvalidToken,
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Throttled(#[from] Throttled),
    #[error(transparent)]
    Hash(#[from] HashError),
    #[error(transparent)]
    Db(#[from] DbErr),
}

pub struct Registration {
    pub username: Username,
    pub email: Email,
    pub password: Password,
}

const VERIFY_TTL_HOURS: i64 = 24;

/// How the verification mail is written: with a link when `link` is set
/// (else the token alone), from `app_name`.
#[derive(Debug, Clone, Copy)]
pub struct VerifyMail<'a> {
    pub link: Option<&'a str>,
    pub app_name: &'a str,
}

/// Creates the user, opens its first session and sends the verification
/// mail.
pub async fn register(
    db: &Db,
    issuer: &Issuer<'_>,
    mail: VerifyMail<'_>,
    r: Registration,
    client: &Client,
) -> Result<(user::Model, TokenPair), AuthError> {
    if users::username_taken(db.read(), &r.username.key(), None).await? {
        return Err(UserError::UsernameTaken.into());
    }
    if users::email_taken(db.read(), &r.email.key(), None).await? {
        return Err(UserError::EmailTaken.into());
    }
    let hash = password::hash(r.password.into_inner()).await?;
    let now = Utc::now();
    let model = user::ActiveModel {
        id: Set(UserId::generate().into_string()),
        username: Set(r.username.as_str().to_owned()),
        username_key: Set(r.username.key()),
        email: Set(r.email.as_str().to_owned()),
        email_key: Set(r.email.key()),
        slug: Set(r.username.key()),
        role: Set("user".to_owned()),
        password_hash: Set(hash),
        two_factor: Set(false),
        totp_secret: Set(None),
        totp_pending: Set(None),
        totp_last_step: Set(0),
        email_verified: Set(false),
        is_banned: Set(false),
        banned_until: Set(None),
        streamer_mode: Set(false),
        notify_weekly_goals: Set(true),
        weekly_mail_week: Set(None),
        revision: Set(0),
        created_at: Set(now),
        updated_at: Set(now),
    };
    let txn = db.begin_write().await?;
    let created = match model.insert(&txn).await {
        Ok(u) => u,
        Err(e) if is_unique_violation(&e) => {
            drop(txn);
            // Lost a race with another registration: say which value.
            let taken = if users::username_taken(db.read(), &r.username.key(), None).await? {
                UserError::UsernameTaken
            } else {
                UserError::EmailTaken
            };
            return Err(taken.into());
        }
        Err(e) => return Err(e.into()),
    };
    send_verification(&txn, mail, &created).await?;
    let pair = sessions::open(&txn, issuer, &created.id, client).await?;
    txn.commit().await?;
    Ok((created, pair))
}

/// Mails the user a new verification token (an operator's resend, for a
/// user whose first mail went astray); `false` when the address is
/// verified already. Earlier tokens keep working until they expire.
pub async fn resend_verification(
    db: &Db,
    mail: VerifyMail<'_>,
    u: &user::Model,
) -> Result<bool, DbErr> {
    if u.email_verified {
        return Ok(false);
    }
    let txn = db.begin_write().await?;
    send_verification(&txn, mail, u).await?;
    txn.commit().await?;
    Ok(true)
}

async fn send_verification<C: ConnectionTrait>(
    conn: &C,
    VerifyMail {
        link: verify_link,
        app_name,
    }: VerifyMail<'_>,
    u: &user::Model,
) -> Result<(), DbErr> {
    let token = crypto::random_token(32);
    email_verification::ActiveModel {
        token_hash: Set(crypto::sha256_hex(token.as_bytes())),
        user_id: Set(u.id.clone()),
        email: Set(u.email.clone()),
        expires_at: Set(Utc::now() + chrono::Duration::hours(VERIFY_TTL_HOURS)),
    }
    .insert(conn)
    .await?;
    let link = verify_link
        .map(|base| format!("\nOr open {base}{token}\n"))
        .unwrap_or_default();
    let text = format!(
        "Hello {name},\n\nConfirm your email address with this token (valid {VERIFY_TTL_HOURS} hours):\n\n{token}\n{link}",
        name = u.username,
    );
    mail::enqueue(
        conn,
        Mail {
            from_name: Some(app_name.to_owned()),
            to: u.email.clone(),
            subject: "Verify your email address".to_owned(),
            text,
            ..Mail::default()
        },
    )
    .await?;
    Ok(())
}

/// What a login checks.
pub struct Login {
    /// Username or email.
    pub login: String,
    pub password: String,
    /// The second factor, when it is on.
    pub code: Option<String>,
}

/// Checks the credentials (and the second factor when it is on) through
/// the guard's `knock` and opens a session. An unknown login costs the same
/// password hash as a known one.
pub async fn login(
    keys: two_factor::Keys<'_>,
    issuer: &Issuer<'_>,
    attempt: Login,
    mut knock: Knock<'_>,
    client: &Client,
) -> Result<(user::Model, TokenPair), AuthError> {
    let db = keys.db;
    let found = users::find_by_login(db.read(), &attempt.login).await?;
    let hash = found.as_ref().map(|u| u.password_hash.clone());
    let matches = knock.verify(attempt.password, hash).await?;
    let u = match found {
        Some(u) if matches => u,
        Some(u) => {
            refused(db, &u, client, "password").await;
            return Err(AuthError::InvalidCredentials);
        }
        None => return Err(AuthError::InvalidCredentials),
    };
    if u.banned_now() {
        knock.refused();
        refused(db, &u, client, "banned").await;
        return Err(AuthError::Banned);
    }
    if u.two_factor {
        let code = attempt
            .code
            .filter(|c| !c.trim().is_empty())
            .ok_or(AuthError::TwoFactorRequired)?;
        if let Err(e) = two_factor::check_second_factor(keys, &u, &code).await {
            knock.refused();
            refused(db, &u, client, "second factor").await;
            return Err(match e {
                TwoFactorError::InvalidCode => AuthError::InvalidCode,
                other => AuthError::TwoFactor(other),
            });
        }
    }
    let txn = db.begin_write().await?;
    let pair = sessions::open(&txn, issuer, &u.id, client).await?;
    txn.commit().await?;
    knock.accepted();
    Ok((u, pair))
}

/// A refused sign-in of a user who exists, in the audit log (subject: the
/// user's id; what failed; from where), for the operator who looks at
/// them. The guard's limit per name bounds how many a minute.
async fn refused(db: &Db, u: &user::Model, client: &Client, what: &'static str) {
    let entry = keel_platform::audit::Entry::new(crate::NAME, "accounts_sign_in_refused")
        .on(u.id.as_str())
        .detail(serde_json::json!({ "failed": what }));
    let actor = keel_platform::audit::Actor::at("anonymous", client.ip);
    keel_platform::audit::record(db, &actor, entry).await;
}

/// Confirms the address a verification mail went to.
pub async fn verify_email(db: &Db, cache: &SessionCache, token: &str) -> Result<(), AuthError> {
    let hash = crypto::sha256_hex(token.as_bytes());
    let v = email_verification::Entity::find_by_id(hash.as_str())
        .one(db.read())
        .await?
        .filter(|v| v.expires_at > Utc::now())
        .ok_or(AuthError::InvalidToken)?;
    let u = users::find(db.read(), &UserId::stored(v.user_id.as_str())).await?;
    if u.email != v.email {
        return Err(AuthError::InvalidToken);
    }
    let txn = db.begin_write().await?;
    if !u.email_verified {
        users::update(&u.id)
            .col_expr(user::Column::EmailVerified, Expr::value(true))
            .exec(&txn)
            .await?;
    }
    email_verification::Entity::delete_many()
        .filter(email_verification::Column::UserId.eq(u.id.as_str()))
        .exec(&txn)
        .await?;
    txn.commit().await?;
    cache.user_changed(&u.id).await;
    Ok(())
}
