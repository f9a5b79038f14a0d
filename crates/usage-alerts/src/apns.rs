//! A small APNs client: HTTP/2 over TLS (reqwest, rustls), token-based
//! authentication (ES256 provider token, reused until `token_ttl`), one
//! pooled connection per host reused for every push.

use std::time::{Duration, Instant};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use keel_platform::config::{ConfigError, OutboundConfig};
use keel_platform::outbound::{HttpClient, retry_after};
use reqwest::StatusCode;
use serde::Serialize;
use tokio::sync::Mutex;

use crate::config::{ApnsConfig, ApnsCredentials};
use crate::domain::values::Platform;

// The names of the variables read here.
const APNS_CA_CERT: &str = "KEEL_APNS_CA_CERT";
const APNS_KEY_PATH: &str = "KEEL_APNS_KEY_PATH";

/// Where a push goes.
pub struct Target<'a> {
    pub device_token: &'a str,
    /// `ios` or `watchos`
    pub platform: Platform,
    pub sandbox: bool,
}

/// How APNs answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Delivered {
        apns_id: Option<String>,
    },
    /// Do not retry; `remove_device` for tokens APNs disowns.
    Rejected {
        reason: String,
        remove_device: bool,
    },
    /// Try again later.
    Retry {
        reason: String,
        after: Option<Duration>,
    },
}

pub struct ApnsClient {
    http: HttpClient,
    creds: ApnsCredentials,
    key: EncodingKey,
    token: Mutex<Option<(String, Instant)>>,
    token_ttl: Duration,
    production_url: String,
    sandbox_url: String,
}

#[derive(Serialize)]
struct ProviderClaims<'a> {
    iss: &'a str,
    iat: i64,
}

impl ApnsClient {
    /// `None` when no credentials are configured.
    pub fn from_config(
        cfg: &ApnsConfig,
        outbound: &OutboundConfig,
    ) -> Result<Option<Self>, ConfigError> {
        let Some(creds) = cfg.credentials.clone() else {
            return Ok(None);
        };
        let pem = std::fs::read(&creds.key_path).map_err(|e| {
            ConfigError::invalid(APNS_KEY_PATH, format!("{}: {e}", creds.key_path.display()))
        })?;
        let key = EncodingKey::from_ec_pem(&pem).map_err(|e| {
            ConfigError::invalid(APNS_KEY_PATH, format!("not an ES256 .p8 key: {e}"))
        })?;
        let mut builder = reqwest::Client::builder().pool_idle_timeout(Duration::from_secs(600));
        if let Some(ca) = &cfg.ca_cert {
            let pem = std::fs::read(ca).map_err(|e| {
                ConfigError::invalid(APNS_CA_CERT, format!("{}: {e}", ca.display()))
            })?;
            let cert = reqwest::Certificate::from_pem(&pem)
                .map_err(|e| ConfigError::invalid(APNS_CA_CERT, e.to_string()))?;
            builder = builder.tls_certs_only([cert]);
        }
        let http = HttpClient::with_builder(outbound, builder)
            .map_err(|e| ConfigError::invalid(APNS_CA_CERT, e.to_string()))?;
        Ok(Some(Self {
            http,
            creds,
            key,
            token: Mutex::new(None),
            token_ttl: cfg.token_ttl,
            production_url: cfg.production_url.trim_end_matches('/').to_owned(),
            sandbox_url: cfg.sandbox_url.trim_end_matches('/').to_owned(),
        }))
    }

    /// The provider token, regenerated only once it is `token_ttl` old.
    async fn provider_token(&self, force_new: bool) -> Result<String, jsonwebtoken::errors::Error> {
        let mut slot = self.token.lock().await;
        let fresh = slot
            .as_ref()
            .filter(|(_, made)| !force_new && made.elapsed() < self.token_ttl);
        if let Some((token, _)) = fresh {
            return Ok(token.clone());
        }
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.creds.key_id.clone());
        header.typ = None;
        let claims = ProviderClaims {
            iss: &self.creds.team_id,
            iat: chrono::Utc::now().timestamp(),
        };
        let token = jsonwebtoken::encode(&header, &claims, &self.key)?;
        *slot = Some((token.clone(), Instant::now()));
        Ok(token)
    }

    fn topic(&self, platform: Platform) -> &str {
        if platform == Platform::Watchos {
            &self.creds.watchos_topic
        } else {
            &self.creds.topic
        }
    }

    /// Sends one alert push.
    pub async fn send(
        &self,
        target: &Target<'_>,
        payload: &serde_json::Value,
        collapse_id: &str,
    ) -> Outcome {
        match self.send_once(target, payload, collapse_id, false).await {
            // A stale provider token is ours to fix: once, with a new one.
            Outcome::Retry { reason, .. } if reason == "ExpiredProviderToken" => {
                self.send_once(target, payload, collapse_id, true).await
            }
            other => other,
        }
    }

    async fn send_once(
        &self,
        target: &Target<'_>,
        payload: &serde_json::Value,
        collapse_id: &str,
        force_new_token: bool,
    ) -> Outcome {
        let token = match self.provider_token(force_new_token).await {
            Ok(t) => t,
            Err(e) => {
                return Outcome::Rejected {
                    reason: format!("cannot sign the provider token: {e}"),
                    remove_device: false,
                };
            }
        };
        let base = if target.sandbox {
            &self.sandbox_url
        } else {
            &self.production_url
        };
        let url = format!("{base}/3/device/{}", target.device_token);
        let expiration = (chrono::Utc::now() + chrono::Duration::hours(24)).timestamp();
        let req = self
            .http
            .client()
            .post(&url)
            .header("authorization", format!("bearer {token}"))
            .header("apns-topic", self.topic(target.platform))
            .header("apns-push-type", "alert")
            .header("apns-priority", "10")
            .header("apns-expiration", expiration.to_string())
            .header("apns-collapse-id", collapse_id)
            .header("apns-id", uuid::Uuid::new_v4().to_string())
            .json(payload);
        match self.http.send(req).await {
            Err(e) => Outcome::Retry {
                reason: format!("network: {e}"),
                after: None,
            },
            Ok(resp) => classify(resp).await,
        }
    }
}

async fn classify(resp: reqwest::Response) -> Outcome {
    let status = resp.status();
    if status.is_success() {
        let apns_id = resp
            .headers()
            .get("apns-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        return Outcome::Delivered { apns_id };
    }
    let after = retry_after(&resp);
    let reason = resp
        .json::<serde_json::Value>()
        .await
        .ok()
        .and_then(|v| v.get("reason").and_then(|r| r.as_str()).map(str::to_owned))
        .unwrap_or_else(|| status.to_string());
    match status {
        StatusCode::TOO_MANY_REQUESTS
        | StatusCode::INTERNAL_SERVER_ERROR
        | StatusCode::SERVICE_UNAVAILABLE => Outcome::Retry { reason, after },
        StatusCode::FORBIDDEN if reason == "ExpiredProviderToken" => Outcome::Retry {
            reason,
            after: None,
        },
        StatusCode::GONE => Outcome::Rejected {
            reason,
            remove_device: true,
        },
        _ => {
            let remove_device = matches!(reason.as_str(), "BadDeviceToken" | "Unregistered");
            Outcome::Rejected {
                reason,
                remove_device,
            }
        }
    }
}

/// The reasons APNs documents for refusing a request; any other answer is
/// counted as `other`.
const REASONS: [&str; 31] = [
    "BadCollapseId",
    "BadDeviceToken",
    "BadExpirationDate",
    "BadMessageId",
    "BadPriority",
    "BadTopic",
    "DeviceTokenNotForTopic",
    "DuplicateHeaders",
    "IdleTimeout",
    "InvalidPushType",
    "MissingDeviceToken",
    "MissingTopic",
    "PayloadEmpty",
    "TopicDisallowed",
    "BadCertificate",
    "BadCertificateEnvironment",
    "ExpiredProviderToken",
    "Forbidden",
    "InvalidProviderToken",
    "MissingProviderToken",
    "UnrelatedKeyIdInToken",
    "BadPath",
    "MethodNotAllowed",
    "ExpiredToken",
    "Unregistered",
    "PayloadTooLarge",
    "TooManyProviderTokenUpdates",
    "TooManyRequests",
    "InternalServerError",
    "ServiceUnavailable",
    "Shutdown",
];

/// Counts an answer: `keel_apns_responses_total{outcome, reason}`
/// (`delivered`, `rejected`, `retry`; `reason` one of APNs' documented
/// reasons, `other`, or empty). `InvalidProviderToken` and its kin say
/// the signing key, its id, the team or the topic is wrong.
pub fn count(outcome: &Outcome) {
    let (label, reason) = match outcome {
        Outcome::Delivered { .. } => ("delivered", ""),
        Outcome::Rejected { reason, .. } => ("rejected", reason_label(reason)),
        Outcome::Retry { reason, .. } => ("retry", reason_label(reason)),
    };
    metrics::counter!("keel_apns_responses_total", "outcome" => label, "reason" => reason)
        .increment(1);
}

fn reason_label(reason: &str) -> &'static str {
    REASONS
        .iter()
        .find(|r| **r == reason)
        .copied()
        .unwrap_or("other")
}
