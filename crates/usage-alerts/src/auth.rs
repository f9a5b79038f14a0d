//! Who is calling: a Sign in with Apple identity token (production) or any
//! token mapped to a stable synthetic id (development).

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use jsonwebtoken::{Algorithm, Validation};
use keel_platform::crypto::sha256_hex;
use keel_platform::jwks::{JwksVerifier, JwtError};
use keel_platform::observe::{Phase, timed};
use serde::Deserialize;

use crate::config::AppleConfig;
use crate::error::{self, Error};

/// The authenticated user.
pub struct Caller {
    pub user_id: String,
}

pub enum Identity {
    /// Any token is accepted and mapped to `dev-<hash>`.
    Development,
    Production {
        verifier: Box<JwksVerifier>,
        validation: Box<Validation>,
    },
}

#[derive(Deserialize)]
struct AppleClaims {
    sub: String,
}

impl Identity {
    pub fn production(verifier: JwksVerifier, apple: &AppleConfig) -> Self {
        let mut validation = Validation::new(Algorithm::RS256);
        validation.set_issuer(&[&apple.issuer]);
        validation.set_audience(&apple.audiences);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.leeway = 60;
        Self::Production {
            verifier: Box::new(verifier),
            validation: Box::new(validation),
        }
    }

    pub async fn user_id(&self, token: &str) -> Result<String, Error> {
        match self {
            Self::Development => Ok(synthetic_id(token)),
            Self::Production {
                verifier,
                validation,
            } => {
                let data = verifier
                    .verify::<AppleClaims>(token, validation)
                    .await
                    .map_err(|e| match e {
                        // Not the token's fault: 503, never a 401 that
                        // would sign the user out.
                        JwtError::KeysUnavailable(_) => Error::internal(e),
                        e => {
                            tracing::debug!(error = %e, "identity token refused");
                            error::unauthorized()
                        }
                    })?;
                if data.claims.sub.is_empty() || data.claims.sub.len() > 255 {
                    return Err(error::unauthorized());
                }
                Ok(data.claims.sub)
            }
        }
    }
}

/// The same id for the same token, and nothing of the token in it.
pub fn synthetic_id(token: &str) -> String {
    format!("dev-{}", &sha256_hex(token.as_bytes())[..32])
}

/// A state that can tell whose a token is.
pub trait Identifies: Send + Sync {
    fn identity(&self) -> &Identity;
}

impl<S: Identifies> FromRequestParts<S> for Caller {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Error> {
        let token = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, t)| t.trim())
            .filter(|t| !t.is_empty())
            .ok_or_else(error::unauthorized)?;
        Ok(Self {
            user_id: timed(Phase::Auth, state.identity().user_id(token)).await?,
        })
    }
}
