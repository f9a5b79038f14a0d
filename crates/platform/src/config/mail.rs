//! How mail leaves: SMTP or files, the sender, and the DKIM key that signs
//! it.

use std::path::{Path, PathBuf};

use super::{ConfigError, Secret, Source};

// The names of the variables read here.
const MAIL_FROM: &str = "KEEL_MAIL_FROM";
const SMTP_URL: &str = "KEEL_SMTP_URL";

#[derive(Debug, Clone)]
pub struct MailConfig {
    /// `smtp://` or `smtps://` URL; none writes `.eml` files instead.
    pub smtp_url: Option<Secret>,
    /// `KEEL_MAIL_FROM`: the sender's address (and a display name a
    /// service may replace with its app's name).
    pub from: String,
    pub dir: PathBuf,
    /// Signs every outgoing mail when set.
    pub dkim: Option<DkimConfig>,
}

/// `KEEL_DKIM_DOMAIN`, `KEEL_DKIM_SELECTOR` and `KEEL_DKIM_PRIVATE_KEY` (a
/// PEM RSA key; `KEEL_DKIM_PRIVATE_KEY_FILE` reads it from a file).
#[derive(Debug, Clone)]
pub struct DkimConfig {
    pub domain: String,
    pub selector: String,
    pub private_key: Secret,
}

const DOMAIN: &str = "KEEL_DKIM_DOMAIN";
const SELECTOR: &str = "KEEL_DKIM_SELECTOR";
const KEY: &str = "KEEL_DKIM_PRIVATE_KEY";

impl MailConfig {
    pub fn from_source(src: &Source, data_dir: &Path) -> Result<Self, ConfigError> {
        let from = mail_from(src)?;
        Ok(Self {
            smtp_url: smtp_url(src)?,
            dkim: dkim(src, &from)?,
            from,
            dir: data_dir.join("mail"),
        })
    }
}

/// Says mail goes to `.eml` files on purpose, where keel would otherwise
/// refuse to start without an SMTP URL.
pub const TO_FILES: &str = "KEEL_MAIL_TO_FILES";

/// For a service that mails people and listens as `listen`: in production
/// (`super::production`) an SMTP URL is required, unless mail goes to
/// files on purpose. Files are lost with the container, hold the links'
/// tokens on disk, and fill it; no one receives them.
pub fn require_delivery(src: &Source, listen: std::net::SocketAddr) -> Result<(), ConfigError> {
    if smtp_url(src)?.is_some() || src.bool_or(TO_FILES, false)? {
        return Ok(());
    }
    if !super::production(src, listen)? {
        return Ok(());
    }
    Err(ConfigError::invalid(
        SMTP_URL,
        format!(
            "is required in production (KEEL_ENV=production, or listening on {listen}, beyond this machine): \
             verification, email-change and deletion mail must reach people. Set it (or KEEL_SMTP_URL_FILE), \
             or {TO_FILES}=true to write mail to files under the data directory on purpose"
        ),
    ))
}

fn smtp_url(src: &Source) -> Result<Option<Secret>, ConfigError> {
    match src.secret(SMTP_URL) {
        Some(s) if !(s.expose().starts_with("smtp://") || s.expose().starts_with("smtps://")) => {
            Err(ConfigError::invalid(
                SMTP_URL,
                "expected an smtp:// or smtps:// URL",
            ))
        }
        other => Ok(other),
    }
}

fn mail_from(src: &Source) -> Result<String, ConfigError> {
    let from = src.string_or(MAIL_FROM, "keel <no-reply@localhost>");
    from.parse::<lettre::message::Mailbox>()
        .map_err(|e| ConfigError::invalid(MAIL_FROM, e.to_string()))?;
    Ok(from)
}

/// All three DKIM variables or none; the key must be usable, and the
/// sender's domain must be the signing domain or under it (DMARC's
/// alignment: a signature for another domain does not vouch for the
/// From).
fn dkim(src: &Source, from: &str) -> Result<Option<DkimConfig>, ConfigError> {
    let domain = src.get(DOMAIN).map(|d| d.trim().to_ascii_lowercase());
    let selector = src.get(SELECTOR).map(|s| s.trim().to_owned());
    let key = src.secret(KEY);
    let (domain, selector, key) = match (domain, selector, key) {
        (None, None, None) => return Ok(None),
        (Some(d), Some(s), Some(k)) => (d, s, k),
        (d, s, _) => {
            let missing = if d.is_none() {
                DOMAIN
            } else if s.is_none() {
                SELECTOR
            } else {
                KEY
            };
            return Err(ConfigError::invalid(
                missing,
                format!("DKIM needs {DOMAIN}, {SELECTOR} and {KEY} (or {KEY}_FILE) together"),
            ));
        }
    };
    let label =
        |l: &str| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if !domain.split('.').all(label) || !domain.contains('.') {
        return Err(ConfigError::invalid(
            DOMAIN,
            format!("{domain:?} is not a domain name"),
        ));
    }
    if !selector.split('.').all(label) {
        return Err(ConfigError::invalid(
            SELECTOR,
            format!("{selector:?} is not a selector (letters, digits, hyphens, dots)"),
        ));
    }
    let sender = from
        .parse::<lettre::message::Mailbox>()
        .map(|m| m.email.domain().to_ascii_lowercase())
        .unwrap_or_default();
    if sender != domain && !sender.ends_with(&format!(".{domain}")) {
        return Err(ConfigError::invalid(
            DOMAIN,
            format!(
                "KEEL_MAIL_FROM's domain ({sender}) is not {domain} or under it: receivers would not count the signature for it"
            ),
        ));
    }
    crate::dkim::DkimSigner::from_pem(&domain, &selector, key.expose())
        .map_err(|e| ConfigError::invalid(KEY, e.to_string()))?;
    Ok(Some(DkimConfig {
        domain,
        selector,
        private_key: key,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(pairs: &[(&str, &str)]) -> Result<MailConfig, String> {
        MailConfig::from_source(
            &Source::from_pairs(pairs.iter().copied()),
            Path::new("/tmp"),
        )
        .map_err(|e| e.to_string())
    }

    const KEY: &str = include_str!("../../../testkit/keys/rsa1.pem");

    #[test]
    fn dkim_needs_its_three_variables_a_usable_key_and_an_aligned_sender() {
        let from = ("KEEL_MAIL_FROM", "App <no-reply@mail.example.com>");
        let ok = load(&[
            from,
            (DOMAIN, "example.com"),
            (SELECTOR, "s1"),
            (super::KEY, KEY),
        ]);
        assert!(ok.is_ok_and(|c| c.dkim.is_some()));
        assert!(load(&[from]).is_ok_and(|c| c.dkim.is_none()));
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[from, (DOMAIN, "example.com")], SELECTOR),
            (&[from, (SELECTOR, "s1"), (super::KEY, KEY)], DOMAIN),
            (
                &[from, (DOMAIN, "example.com"), (SELECTOR, "s1")],
                super::KEY,
            ),
            (
                &[
                    from,
                    (DOMAIN, "example.org"),
                    (SELECTOR, "s1"),
                    (super::KEY, KEY),
                ],
                "is not example.org or under it",
            ),
            (
                &[
                    from,
                    (DOMAIN, "example.com"),
                    (SELECTOR, "s 1"),
                    (super::KEY, KEY),
                ],
                SELECTOR,
            ),
            (
                &[
                    from,
                    (DOMAIN, "example.com"),
                    (SELECTOR, "s1"),
                    (super::KEY, "nope"),
                ],
                "not a PEM file",
            ),
        ];
        for (pairs, said) in cases {
            let err = load(pairs).err().unwrap_or_default();
            assert!(err.contains(said), "{pairs:?}: {err}");
            assert!(
                !err.contains("BEGIN PRIVATE KEY"),
                "the key is never printed"
            );
        }
    }
}

#[cfg(test)]
mod delivery_tests {
    use super::*;

    fn check(pairs: &[(&str, &str)], listen: &str) -> Result<(), String> {
        let src = Source::from_pairs(pairs.iter().map(|(k, v)| (*k, *v)));
        let listen = listen.parse().map_err(|_| "addr".to_owned())?;
        require_delivery(&src, listen).map_err(|e| e.to_string())
    }

    #[test]
    fn production_needs_smtp_or_files_chosen_on_purpose() {
        assert!(
            check(&[], "127.0.0.1:8081").is_ok(),
            "a developer's machine"
        );
        let err = check(&[], "0.0.0.0:8081").err().unwrap_or_default();
        assert!(
            err.contains("KEEL_SMTP_URL") && err.contains(TO_FILES),
            "{err}"
        );
        assert!(check(&[("KEEL_ENV", "production")], "127.0.0.1:8081").is_err());
        assert!(check(&[("KEEL_ENV", "development")], "0.0.0.0:8081").is_ok());
        assert!(
            check(
                &[("KEEL_ENV", "production"), (TO_FILES, "true")],
                "0.0.0.0:8081"
            )
            .is_ok()
        );
        let smtp = [
            ("KEEL_ENV", "production"),
            ("KEEL_SMTP_URL", "smtps://u:p@mail:465"),
        ];
        assert!(check(&smtp, "0.0.0.0:8081").is_ok());
        assert!(check(&[("KEEL_ENV", "staging")], "127.0.0.1:8081").is_err());
    }
}
