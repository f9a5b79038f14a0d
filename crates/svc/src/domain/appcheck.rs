//! Firebase App Check tokens: RS256 from the App Check JWKS (cached up to
//! 6 hours, refetched on an unknown `kid`), `typ` JWT, `iss` and `aud` of the
//! configured project, `sub` among the allowed app ids, not expired.
//! Configured debug tokens are accepted as they are (for simulators).

use jsonwebtoken::{Algorithm, Validation};
use keel_platform::crypto::{constant_time_eq, sha256_hex};
use keel_platform::jwks::{JwksVerifier, JwtError};
use serde::Deserialize;

use crate::domain::settings::Settings;

pub const ISSUER_PREFIX: &str = "https://firebaseappcheck.googleapis.com/";

/// A verified caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub app_id: String,
    pub debug: bool,
}

#[derive(Deserialize)]
struct Claims {
    sub: String,
}

/// Why a caller was not let in.
#[derive(Debug, thiserror::Error)]
pub enum AppCheckError {
    #[error("App Check failed: {0}")]
    Failed(String),
    /// Firebase's keys cannot be fetched: not the app's fault.
    #[error("App Check's keys are unavailable")]
    KeysUnavailable(#[source] JwtError),
}

fn failed(why: &str) -> AppCheckError {
    AppCheckError::Failed(why.to_owned())
}

pub struct AppCheck {
    verifier: JwksVerifier,
}

impl AppCheck {
    pub fn new(verifier: JwksVerifier) -> Self {
        Self { verifier }
    }

    pub async fn verify(
        &self,
        token: Option<&str>,
        settings: &Settings,
    ) -> Result<Verified, AppCheckError> {
        let token = token
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| failed("no token"))?;
        let hash = sha256_hex(token.as_bytes());
        let debug = settings
            .appcheck_debug_token_hashes
            .iter()
            .any(|h| constant_time_eq(h.as_bytes(), hash.as_bytes()));
        if debug {
            tracing::info!("accepted an App Check debug token");
            return Ok(Verified {
                app_id: "debug".to_owned(),
                debug: true,
            });
        }
        let Some(project) = settings.appcheck_project_number.as_deref() else {
            tracing::warn!("App Check token refused: appcheck_project_number is not set");
            return Err(failed("App Check is not configured"));
        };
        let header = jsonwebtoken::decode_header(token).map_err(|_| failed("malformed token"))?;
        if header.typ.as_deref() != Some("JWT") {
            return Err(failed("token type is not JWT"));
        }
        let mut validation = Validation::new(Algorithm::RS256);
        validation.set_issuer(&[format!("{ISSUER_PREFIX}{project}")]);
        validation.set_audience(&[format!("projects/{project}")]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.leeway = 60;
        let data = self
            .verifier
            .verify::<Claims>(token, &validation)
            .await
            .map_err(|e| match e {
                JwtError::KeysUnavailable(_) => AppCheckError::KeysUnavailable(e),
                e => failed(&e.to_string()),
            })?;
        let app_id = data.claims.sub;
        if app_id.is_empty() || !settings.appcheck_app_ids.iter().any(|a| a == &app_id) {
            return Err(failed("the app is not allowed"));
        }
        Ok(Verified {
            app_id,
            debug: false,
        })
    }
}
