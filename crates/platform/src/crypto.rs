//! Secrets at rest and in transit: AES-256-GCM sealing, random tokens,
//! hashes for looking tokens up, constant-time comparison, and keys that
//! come from configuration or are generated once under the data directory.

use std::path::Path;

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::config::{ConfigError, PlatformConfig, Source};

// The names of the variables read here.
const SECRET_KEY: &str = "KEEL_SECRET_KEY";

/// Installs the process-wide TLS crypto provider (AWS-LC, the one crypto
/// stack: rustls for outbound HTTPS, SMTP, PostgreSQL and the trace
/// exporter). Idempotent.
pub fn install_crypto_provider() {
    // Err means one is installed already, which is what we want.
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
}
/// Seals and opens small secrets (TOTP secrets, backup codes, provider keys).
/// Stored form: base64(nonce ‖ ciphertext ‖ tag).
#[derive(Clone)]
pub struct SecretBox {
    cipher: Aes256Gcm,
    /// Keys [`Pseudonyms`]: derived from the same key, never the key itself.
    pseudonym_key: [u8; 32],
}

#[derive(Debug, thiserror::Error)]
#[error("a sealed secret could not be opened (wrong KEEL_SECRET_KEY, or damaged data)")]
pub struct OpenError;

impl SecretBox {
    pub fn new(key: &[u8; 32]) -> Self {
        Self {
            cipher: Aes256Gcm::new(key.into()),
            pseudonym_key: hmac_sha256(key, b"keel pseudonyms v1"),
        }
    }

    /// Pseudonyms keyed by this box's key: the same on every node that
    /// shares `KEEL_SECRET_KEY`.
    pub fn pseudonyms(&self) -> Pseudonyms {
        Pseudonyms(self.pseudonym_key)
    }

    /// The box for `KEEL_SECRET_KEY` (base64 of 32 bytes), or for a key
    /// generated once and kept in `<data dir>/secret.key`.
    pub fn from_config(cfg: &PlatformConfig) -> Result<Self, ConfigError> {
        let mut src = Source::default();
        if let Some(k) = &cfg.secret_key {
            src.set(SECRET_KEY, k.expose());
        }
        let key = key_from_config(&src, SECRET_KEY, &cfg.data_dir.join("secret.key"))?;
        Ok(Self::new(&key))
    }

    pub fn seal(&self, plain: &[u8]) -> String {
        let mut nonce = [0u8; 12];
        rand::rng().fill_bytes(&mut nonce);
        // Encryption with a fresh nonce and a valid key cannot fail.
        let sealed = self
            .cipher
            .encrypt(&Nonce::from(nonce), plain)
            .unwrap_or_default();
        let mut out = nonce.to_vec();
        out.extend(sealed);
        STANDARD.encode(out)
    }

    pub fn open(&self, sealed: &str) -> Result<Vec<u8>, OpenError> {
        let raw = STANDARD.decode(sealed).map_err(|_| OpenError)?;
        if raw.len() < 12 {
            return Err(OpenError);
        }
        let (nonce, body) = raw.split_at(12);
        let nonce: [u8; 12] = nonce.try_into().map_err(|_| OpenError)?;
        self.cipher
            .decrypt(&Nonce::from(nonce), body)
            .map_err(|_| OpenError)
    }
}

/// A 32-byte key from `var` (base64), or generated once into `file`.
pub fn key_from_config(src: &Source, var: &str, file: &Path) -> Result<[u8; 32], ConfigError> {
    if let Some(secret) = src.secret(var) {
        let raw = STANDARD
            .decode(secret.expose().trim())
            .or_else(|_| URL_SAFE_NO_PAD.decode(secret.expose().trim()))
            .map_err(|_| ConfigError::invalid(var, "expected base64 of 32 random bytes"))?;
        return raw
            .try_into()
            .map_err(|_| ConfigError::invalid(var, "expected base64 of exactly 32 bytes"));
    }
    load_or_generate_key(var, file)
}

/// The 32-byte key kept in `file`, generated there (0600) on first use.
pub fn load_or_generate_key(var: &str, file: &Path) -> Result<[u8; 32], ConfigError> {
    let io = |e: std::io::Error| ConfigError::invalid(var, format!("{}: {e}", file.display()));
    if file.exists() {
        let text = std::fs::read_to_string(file).map_err(io)?;
        let raw = STANDARD
            .decode(text.trim())
            .map_err(|_| ConfigError::invalid(var, format!("{} is not base64", file.display())))?;
        return raw.try_into().map_err(|_| {
            ConfigError::invalid(var, format!("{} does not hold 32 bytes", file.display()))
        });
    }
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut key = [0u8; 32];
    rand::rng().fill_bytes(&mut key);
    write_private(file, STANDARD.encode(key).as_bytes()).map_err(io)?;
    tracing::warn!(
        "{var} is not set: generated a key in {} (every node must share one key: set {var} when running more than one)",
        file.display()
    );
    Ok(key)
}

#[cfg(unix)]
fn write_private(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(file)?;
    f.write_all(bytes)
}

#[cfg(not(unix))]
fn write_private(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(file, bytes)
}

/// `n` random bytes as URL-safe base64 (a bearer secret).
pub fn random_token(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    rand::rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A code a person types: `groups` groups of four characters from an
/// alphabet without look-alikes (`0`/`O`, `1`/`I`), joined by `-`; five
/// bits a character.
pub fn random_code(groups: usize) -> String {
    const ALPHABET: &[u8; 32] = b"23456789ABCDEFGHJKLMNPQRSTUVWXYZ";
    let mut bytes = vec![0u8; groups * 4];
    rand::rng().fill_bytes(&mut bytes);
    bytes
        .chunks(4)
        .map(|g| {
            g.iter()
                .map(|b| char::from(ALPHABET[usize::from(b % 32)]))
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("-")
}

/// Stands a name (a login, an address) in for a keyed hash of it, where a
/// name must not be readable: rate-limit keys in Redis. Without the key
/// the hash cannot be tried against a list of likely names.
#[derive(Clone, Copy)]
pub struct Pseudonyms([u8; 32]);

impl Pseudonyms {
    /// Pseudonyms under a fixed key: for caches that hold no one's name
    /// (tests, tools).
    pub const UNKEYED: Self = Self([0; 32]);

    /// 128 bits of HMAC-SHA-256 of `name`, in hex.
    pub fn of(&self, name: &str) -> String {
        hex::encode(&hmac_sha256(&self.0, name.as_bytes())[..16])
    }
}

fn hmac_sha256(key: &[u8], data: &[u8]) -> [u8; 32] {
    use hmac::{Hmac, Mac};
    let Ok(mut mac) = <Hmac<Sha256> as hmac::KeyInit>::new_from_slice(key) else {
        // HMAC takes a key of any length.
        return [0; 32];
    };
    mac.update(data);
    mac.finalize().into_bytes().into()
}

/// SHA-256 hex: how high-entropy tokens are stored and looked up.
pub fn sha256_hex(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

/// Compares two secrets in constant time.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.ct_eq(b).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_random_code_is_grouped_and_unambiguous() {
        let c = random_code(3);
        assert_eq!(c.len(), 14);
        assert_eq!(c.matches('-').count(), 2);
        assert!(!c.contains(['0', 'O', '1', 'I']), "{c}");
        assert_ne!(c, random_code(3));
    }

    #[test]
    fn sealed_secrets_open_and_tampering_is_detected() {
        let b = SecretBox::new(&[7u8; 32]);
        let sealed = b.seal(b"JBSWY3DPEHPK3PXP");
        assert_ne!(sealed, b.seal(b"JBSWY3DPEHPK3PXP"), "fresh nonce each time");
        assert_eq!(
            b.open(&sealed).ok().as_deref(),
            Some(&b"JBSWY3DPEHPK3PXP"[..])
        );
        let mut raw = STANDARD.decode(&sealed).unwrap_or_default();
        if let Some(last) = raw.last_mut() {
            *last ^= 1;
        }
        assert!(b.open(&STANDARD.encode(raw)).is_err());
        assert!(SecretBox::new(&[8u8; 32]).open(&sealed).is_err());
    }

    #[test]
    fn a_generated_key_is_kept_and_reused() -> Result<(), ConfigError> {
        let dir = tempfile::tempdir().map_err(|e| ConfigError::invalid("T", e.to_string()))?;
        let file = dir.path().join("k");
        let src = Source::default();
        let a = key_from_config(&src, "K", &file)?;
        let b = key_from_config(&src, "K", &file)?;
        assert_eq!(a, b);
        Ok(())
    }

    #[test]
    fn a_configured_key_must_be_32_bytes() {
        let src = Source::from_pairs([("K", STANDARD.encode([1u8; 16]))]);
        let err = key_from_config(&src, "K", Path::new("/nonexistent/k")).err();
        assert_eq!(err.map(|e| e.var), Some("K".to_owned()));
    }
}
