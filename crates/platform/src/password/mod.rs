//! Passwords: argon2id (default parameters: 19 MiB, 2 passes), hashed off
//! the async runtime, at most one hash per CPU at a time (more would not be
//! faster, and a flood of logins must not allocate 19 MiB each at once),
//! the slots shared fairly between services ([`slots`]). A password is
//! checked only through the guard (`guard::Knock::verify`).

pub mod slots;

use slots::{Crowded, slots};

use argon2::Argon2;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

/// The hashing lane of passwords being set (registrations, changes, new
/// admins): sign-ins of every service take their turns beside it.
const SETTING: &str = "setting";

/// Why a hash could not be made (never a password's content).
#[derive(Debug, thiserror::Error)]
pub enum HashError {
    #[error("password hashing failed")]
    Argon(#[from] argon2::password_hash::Error),
    #[error(transparent)]
    Crowded(#[from] Crowded),
    #[error("the password hashing task failed")]
    Task(#[from] tokio::task::JoinError),
}

pub async fn hash(password: String) -> Result<String, HashError> {
    let _slot = slots().acquire(SETTING).await?;
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(HashError::from)
    })
    .await?
}

/// A hash no password matches, with the parameters real hashes have:
/// verify against it when a login names no user, so both cases cost the
/// same. Made without hashing (a random salt and a random output), so
/// building it costs nothing at start (three services used to spend an
/// argon2 run and 19 MiB each on it).
pub fn dummy_hash() -> Result<String, HashError> {
    use argon2::password_hash::rand_core::RngCore;
    use argon2::password_hash::{Output, ParamsString};
    let salt = SaltString::generate(&mut OsRng);
    let mut bytes = [0u8; argon2::Params::DEFAULT_OUTPUT_LEN];
    OsRng.fill_bytes(&mut bytes);
    let hash = PasswordHash {
        algorithm: argon2::Algorithm::default().ident(),
        version: Some(argon2::Version::default().into()),
        params: ParamsString::try_from(&argon2::Params::default())?,
        salt: Some(salt.as_salt()),
        hash: Some(Output::new(&bytes)?),
    };
    Ok(hash.to_string())
}

/// Why `password` is too easy to guess, if it is: zxcvbn (the password
/// strength estimator, with its lists of the passwords people choose most
/// and of common words and names) puts it within about a million guesses
/// (its scores 0 and 1): a commonly used password or a variant of one, a
/// repetition, a sequence, a keyboard walk, a date, or words of `context`
/// (the user's name and address). NIST SP 800-63B asks a service to refuse
/// such passwords when they are set; existing ones keep working.
pub fn too_guessable(password: &str, context: &[&str]) -> Option<String> {
    let estimate = zxcvbn::zxcvbn(password, context);
    if u8::from(estimate.score()) > 1 {
        return None;
    }
    let why = estimate
        .feedback()
        .and_then(zxcvbn::feedback::Feedback::warning)
        .map_or_else(
            || {
                "it is among the most commonly used passwords or follows a simple pattern"
                    .to_owned()
            },
            |w| w.to_string().trim_end_matches('.').to_lowercase(),
        );
    Some(why)
}

/// Whether `password` matches `hash`, hashed in `lane`'s turn; a malformed
/// hash never matches. Each hash computed is counted
/// (`keel_password_verifications_total`), so a test can see that a login
/// for an unknown user paid for one too.
pub(crate) async fn verify(
    lane: &'static str,
    password: String,
    hash: String,
) -> Result<bool, Crowded> {
    let _slot = slots().acquire(lane).await?;
    Ok(tokio::task::spawn_blocking(move || {
        PasswordHash::new(&hash)
            .map(|parsed| {
                let ok = Argon2::default()
                    .verify_password(password.as_bytes(), &parsed)
                    .is_ok();
                metrics::counter!("keel_password_verifications_total").increment(1);
                ok
            })
            .unwrap_or(false)
    })
    .await
    .unwrap_or(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_and_patterned_passwords_are_too_guessable_and_others_are_not() {
        for weak in [
            "password",
            "12345678",
            "qwertyuiop",
            "P@ssw0rd!",
            "aaaaaaaaaaaa",
        ] {
            assert!(too_guessable(weak, &[]).is_some(), "{weak}");
        }
        assert_eq!(
            too_guessable("password", &[]).as_deref(),
            Some("this is a top-10 common password")
        );
        assert!(too_guessable("adalovelace1", &["adalovelace", "ada@example.com"]).is_some());
        assert!(
            too_guessable("adalovelace1", &[]).is_none(),
            "only as the user's own name"
        );
        for strong in ["correct horse battery", "Tr0ub4dor&3", "owner password!!"] {
            assert_eq!(too_guessable(strong, &[]), None, "{strong}");
        }
    }

    #[tokio::test]
    async fn the_dummy_hash_has_the_real_parameters_and_matches_nothing() -> Result<(), HashError> {
        let real = hash("a password".to_owned()).await?;
        let dummy = dummy_hash()?;
        let (r, d) = (PasswordHash::new(&real)?, PasswordHash::new(&dummy)?);
        assert_eq!(r.algorithm, d.algorithm);
        assert_eq!(r.version, d.version);
        assert_eq!(r.params, d.params);
        assert_eq!(r.hash.map(|h| h.len()), d.hash.map(|h| h.len()));
        let check = |p: &str, h: &str| verify("test", p.to_owned(), h.to_owned());
        assert_eq!(check("a password", &real).await, Ok(true));
        assert_eq!(check("a password", &dummy).await, Ok(false));
        assert_eq!(check("", &dummy).await, Ok(false));
        Ok(())
    }
}
