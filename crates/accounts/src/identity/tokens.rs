//! Access tokens (short-lived HS256 JWTs naming the user and the session)
//! and refresh tokens (random, stored as SHA-256 hashes).

use std::path::Path;
use std::time::Duration;

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use keel_platform::config::ConfigError;
use keel_platform::crypto;
use serde::{Deserialize, Serialize};

use crate::config::Config;

// The names of the variables read here.
const ACCOUNTS_JWT_SECRET: &str = "KEEL_ACCOUNTS_JWT_SECRET";

#[derive(Debug, Serialize, Deserialize)]
pub struct AccessClaims {
    /// User id.
    pub sub: String,
    /// Session id.
    pub sid: String,
    pub iat: i64,
    pub exp: i64,
    pub typ: String,
}

#[derive(Debug, PartialEq, Eq)]
pub enum TokenError {
    Expired,
    Invalid,
}

pub struct TokenKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    access_ttl: Duration,
}

const ACCESS: &str = "access";

impl TokenKeys {
    /// `KEEL_ACCOUNTS_JWT_SECRET`, or a key generated once under the data dir.
    pub fn load(cfg: &Config, data_dir: &Path) -> Result<Self, ConfigError> {
        let secret = match &cfg.jwt_secret {
            Some(s) => s.expose().as_bytes().to_vec(),
            None => crypto::load_or_generate_key(
                ACCOUNTS_JWT_SECRET,
                &data_dir.join("accounts-jwt.key"),
            )?
            .to_vec(),
        };
        Ok(Self::from_secret(&secret, cfg.access_ttl))
    }

    pub fn from_secret(secret: &[u8], access_ttl: Duration) -> Self {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 5;
        validation.set_required_spec_claims(&["exp", "sub"]);
        Self {
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
            validation,
            access_ttl,
        }
    }

    pub fn issue(
        &self,
        user_id: &str,
        session_id: &str,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        let now = chrono::Utc::now().timestamp();
        let claims = AccessClaims {
            sub: user_id.to_owned(),
            sid: session_id.to_owned(),
            iat: now,
            exp: now + i64::try_from(self.access_ttl.as_secs()).unwrap_or(900),
            typ: ACCESS.to_owned(),
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
    }

    pub fn verify(&self, token: &str) -> Result<AccessClaims, TokenError> {
        let data = jsonwebtoken::decode::<AccessClaims>(token, &self.decoding, &self.validation)
            .map_err(|e| match e.kind() {
                jsonwebtoken::errors::ErrorKind::ExpiredSignature => TokenError::Expired,
                _ => TokenError::Invalid,
            })?;
        if data.claims.typ != ACCESS {
            return Err(TokenError::Invalid);
        }
        Ok(data.claims)
    }
}

/// A new refresh token and the hash it is stored under.
pub fn new_refresh_token() -> (String, String) {
    let token = crypto::random_token(32);
    let hash = crypto::sha256_hex(token.as_bytes());
    (token, hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_foreign_ones_fail() {
        let keys = TokenKeys::from_secret(&[1u8; 32], Duration::from_secs(60));
        let t = keys.issue("u", "s").unwrap_or_default();
        let c = keys.verify(&t).ok();
        assert_eq!(c.map(|c| (c.sub, c.sid)), Some(("u".into(), "s".into())));
        let other = TokenKeys::from_secret(&[2u8; 32], Duration::from_secs(60));
        assert_eq!(other.verify(&t).err(), Some(TokenError::Invalid));
    }
}
