//! Verifies JWTs against a remote JWKS (Apple identity tokens, Firebase App
//! Check). Keys are fetched once and cached for at most `max_age` (or less,
//! if the server's `Cache-Control: max-age` says so); a token naming an
//! unknown `kid` triggers a refetch, at most once per cooldown. The allowed
//! algorithms are fixed by the caller: anything else is refused before any
//! key is looked at, so `none` and HS* tokens never get near a key.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, TokenData, Validation, decode, decode_header};
use serde::de::DeserializeOwned;
use tokio::sync::{Mutex, RwLock};

use crate::outbound::HttpClient;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum JwtError {
    #[error("the token is not a well-formed JWT")]
    Malformed,
    #[error("the token's algorithm is not allowed")]
    AlgorithmNotAllowed,
    #[error("the token names no key id")]
    MissingKid,
    #[error("the token's key id is unknown")]
    UnknownKid,
    #[error("the token is expired")]
    Expired,
    #[error("the token failed validation: {0}")]
    Invalid(String),
    #[error("the signing keys could not be fetched: {0}")]
    KeysUnavailable(String),
}

/// Which keys to fetch and how long to trust them.
#[derive(Debug, Clone)]
pub struct JwksConfig {
    pub url: String,
    pub algorithms: Vec<Algorithm>,
    pub max_age: Duration,
    pub refetch_cooldown: Duration,
}

#[derive(Default)]
struct KeyCache {
    keys: HashMap<String, (Algorithm, DecodingKey)>,
    fetched_at: Option<Instant>,
    ttl: Duration,
}

pub struct JwksVerifier {
    http: HttpClient,
    cfg: JwksConfig,
    cache: RwLock<KeyCache>,
    fetching: Mutex<()>,
}

impl JwksVerifier {
    pub fn new(http: HttpClient, cfg: JwksConfig) -> Self {
        Self {
            http,
            cfg,
            cache: RwLock::new(KeyCache::default()),
            fetching: Mutex::new(()),
        }
    }

    /// Verifies signature and claims; `validation.algorithms` is replaced
    /// by the configured algorithms.
    pub async fn verify<C: DeserializeOwned>(
        &self,
        token: &str,
        validation: &Validation,
    ) -> Result<TokenData<C>, JwtError> {
        let header = decode_header(token).map_err(|_| JwtError::Malformed)?;
        if !self.cfg.algorithms.contains(&header.alg) {
            return Err(JwtError::AlgorithmNotAllowed);
        }
        let kid = header.kid.ok_or(JwtError::MissingKid)?;
        let (alg, key) = self.key(&kid).await?;
        if alg != header.alg {
            return Err(JwtError::AlgorithmNotAllowed);
        }
        let mut validation = validation.clone();
        validation.algorithms = vec![alg];
        decode::<C>(token, &key, &validation).map_err(|e| match e.kind() {
            jsonwebtoken::errors::ErrorKind::ExpiredSignature => JwtError::Expired,
            other => JwtError::Invalid(format!("{other:?}")),
        })
    }

    async fn key(&self, kid: &str) -> Result<(Algorithm, DecodingKey), JwtError> {
        {
            let cache = self.cache.read().await;
            if let Some(found) = cache.keys.get(kid).filter(|_| is_fresh(&cache)) {
                return Ok(found.clone());
            }
        }
        let _guard = self.fetching.lock().await;
        // Another task may have refreshed the keys while we waited.
        let (stale_hit, may_fetch) = {
            let cache = self.cache.read().await;
            let hit = cache.keys.get(kid).cloned();
            if is_fresh(&cache) && hit.is_some() {
                return hit.ok_or(JwtError::UnknownKid);
            }
            let cooled = cache
                .fetched_at
                .is_none_or(|t| t.elapsed() >= self.cfg.refetch_cooldown);
            (hit, !is_fresh(&cache) || cooled)
        };
        if !may_fetch {
            return Err(JwtError::UnknownKid);
        }
        match self.fetch().await {
            Ok(fresh) => {
                let found = fresh.keys.get(kid).cloned();
                *self.cache.write().await = fresh;
                found.ok_or(JwtError::UnknownKid)
            }
            // Keys we had are better than none while the endpoint is down.
            Err(e) => stale_hit.ok_or(e),
        }
    }

    async fn fetch(&self) -> Result<KeyCache, JwtError> {
        let resp = self
            .http
            .send_idempotent(|| self.http.client().get(&self.cfg.url))
            .await
            .map_err(|e| JwtError::KeysUnavailable(e.to_string()))?;
        if !resp.status().is_success() {
            return Err(JwtError::KeysUnavailable(format!(
                "status {}",
                resp.status()
            )));
        }
        let ttl =
            cache_max_age(resp.headers()).map_or(self.cfg.max_age, |s| s.min(self.cfg.max_age));
        let set: JwkSet = resp
            .json()
            .await
            .map_err(|e| JwtError::KeysUnavailable(e.to_string()))?;
        let mut keys = HashMap::new();
        for jwk in &set.keys {
            let (Some(kid), Ok(key)) = (jwk.common.key_id.clone(), DecodingKey::from_jwk(jwk))
            else {
                continue;
            };
            let alg = jwk
                .common
                .key_algorithm
                .and_then(|a| a.to_string().parse::<Algorithm>().ok())
                .unwrap_or(Algorithm::RS256);
            keys.insert(kid, (alg, key));
        }
        tracing::debug!(url = %self.cfg.url, keys = keys.len(), "fetched signing keys");
        Ok(KeyCache {
            keys,
            fetched_at: Some(Instant::now()),
            ttl,
        })
    }
}

fn is_fresh(cache: &KeyCache) -> bool {
    cache.fetched_at.is_some_and(|t| t.elapsed() < cache.ttl)
}

fn cache_max_age(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers.get(reqwest::header::CACHE_CONTROL)?.to_str().ok()?;
    value.split(',').find_map(|part| {
        let secs = part.trim().strip_prefix("max-age=")?;
        secs.parse::<u64>().ok().map(Duration::from_secs)
    })
}
