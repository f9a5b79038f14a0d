//! How mail leaves: SMTP or files, the sender, and the DKIM key that signs
//! it.

use std::path::{Path, PathBuf};

use super::{ConfigError, Secret, Source};

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

fn smtp_url(src: &Source) -> Result<Option<Secret>, ConfigError> {
    match src.secret("KEEL_SMTP_URL") {
        Some(s) if !(s.expose().starts_with("smtp://") || s.expose().starts_with("smtps://")) => {
            Err(ConfigError::invalid(
                "KEEL_SMTP_URL",
                "expected an smtp:// or smtps:// URL",
            ))
        }
        other => Ok(other),
    }
}

fn mail_from(src: &Source) -> Result<String, ConfigError> {
    let from = src.string_or("KEEL_MAIL_FROM", "keel <no-reply@localhost>");
    from.parse::<lettre::message::Mailbox>()
        .map_err(|e| ConfigError::invalid("KEEL_MAIL_FROM", e.to_string()))?;
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
    crate::mail::dkim::DkimSigner::from_pem(&domain, &selector, key.expose())
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
