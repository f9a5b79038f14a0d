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
use sha2::Digest;
use tokio::sync::{Mutex, RwLock};

use crate::outbound::HttpClient;

#[derive(Debug, thiserror::Error)]
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
    #[error("the signing keys could not be fetched")]
    KeysUnavailable(#[source] KeysError),
}

/// Why the signing keys could not be fetched.
#[derive(Debug, thiserror::Error)]
pub enum KeysError {
    #[error(transparent)]
    Outbound(#[from] crate::outbound::OutboundError),
    #[error("the key endpoint answered {0}")]
    Status(reqwest::StatusCode),
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

/// A token whose signature and claims passed, remembered so that the same
/// token presented again (clients reuse theirs until they expire) costs no
/// signature check: RSA verification is by far the most expensive step.
struct Verified {
    fingerprint: u64,
    claims: serde_json::Value,
    exp: Option<i64>,
    kid: String,
    at: Instant,
}

const VERIFIED_TTL: Duration = Duration::from_secs(300);
const VERIFIED_CAPACITY: usize = 50_000;

pub struct JwksVerifier {
    http: HttpClient,
    cfg: JwksConfig,
    cache: RwLock<KeyCache>,
    fetching: Mutex<()>,
    verified: std::sync::Mutex<Remembered>,
}

/// The tokens verified lately, by digest.
struct Remembered {
    map: HashMap<[u8; 32], Verified>,
    sweep: crate::cache::Sweep,
}

impl JwksVerifier {
    pub fn new(http: HttpClient, cfg: JwksConfig) -> Self {
        Self {
            http,
            cfg,
            cache: RwLock::new(KeyCache::default()),
            fetching: Mutex::new(()),
            verified: std::sync::Mutex::new(Remembered {
                map: HashMap::new(),
                sweep: crate::cache::Sweep::every(VERIFIED_TTL),
            }),
        }
    }

    fn verified(&self) -> std::sync::MutexGuard<'_, Remembered> {
        self.verified
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The claims of `token` if it passed the same validation recently, is
    /// not expired, and its key is still published.
    async fn remembered(
        &self,
        digest: &[u8; 32],
        fingerprint: u64,
        leeway: u64,
    ) -> Option<serde_json::Value> {
        let (claims, kid) = {
            let remembered = self.verified();
            let v = remembered.map.get(digest)?;
            let now = chrono::Utc::now().timestamp();
            let live = v
                .exp
                .is_none_or(|exp| exp + i64::try_from(leeway).unwrap_or(0) > now);
            if v.fingerprint != fingerprint || v.at.elapsed() >= VERIFIED_TTL || !live {
                return None;
            }
            (v.claims.clone(), v.kid.clone())
        };
        let cache = self.cache.read().await;
        (is_fresh(&cache) && cache.keys.contains_key(&kid)).then_some(claims)
    }

    fn remember(&self, digest: [u8; 32], fingerprint: u64, claims: &serde_json::Value, kid: &str) {
        let mut remembered = self.verified();
        let Remembered { map, sweep } = &mut *remembered;
        if sweep.due() || map.len() >= VERIFIED_CAPACITY {
            map.retain(|_, v| v.at.elapsed() < VERIFIED_TTL);
            if map.len() >= VERIFIED_CAPACITY {
                map.clear();
            }
        }
        map.insert(
            digest,
            Verified {
                fingerprint,
                exp: claims.get("exp").and_then(serde_json::Value::as_i64),
                claims: claims.clone(),
                kid: kid.to_owned(),
                at: Instant::now(),
            },
        );
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
        let kid = header.kid.clone().ok_or(JwtError::MissingKid)?;
        let digest: [u8; 32] = sha2::Sha256::digest(token.as_bytes()).into();
        let fingerprint = fingerprint(validation);
        if let Some(claims) = self
            .remembered(&digest, fingerprint, validation.leeway)
            .await
        {
            let claims =
                serde_json::from_value(claims).map_err(|e| JwtError::Invalid(e.to_string()))?;
            return Ok(TokenData { header, claims });
        }
        let (alg, key) = self.key(&kid).await?;
        if alg != header.alg {
            return Err(JwtError::AlgorithmNotAllowed);
        }
        let mut validation = validation.clone();
        validation.algorithms = vec![alg];
        let data =
            decode::<serde_json::Value>(token, &key, &validation).map_err(|e| match e.kind() {
                jsonwebtoken::errors::ErrorKind::ExpiredSignature => JwtError::Expired,
                other => JwtError::Invalid(format!("{other:?}")),
            })?;
        self.remember(digest, fingerprint, &data.claims, &kid);
        let claims =
            serde_json::from_value(data.claims).map_err(|e| JwtError::Invalid(e.to_string()))?;
        Ok(TokenData {
            header: data.header,
            claims,
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
                // Keys may have been withdrawn: re-check every token.
                self.verified().map.clear();
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
            .map_err(|e| JwtError::KeysUnavailable(e.into()))?;
        if !resp.status().is_success() {
            return Err(JwtError::KeysUnavailable(KeysError::Status(resp.status())));
        }
        let ttl =
            cache_max_age(resp.headers()).map_or(self.cfg.max_age, |s| s.min(self.cfg.max_age));
        let set: JwkSet = crate::outbound::read_json(resp)
            .await
            .map_err(|e| JwtError::KeysUnavailable(e.into()))?;
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

/// What the validation demands, order-independent.
fn fingerprint(v: &Validation) -> u64 {
    use std::hash::{Hash, Hasher};
    let sorted = |set: &Option<std::collections::HashSet<String>>| {
        let mut items: Vec<&String> = set.iter().flatten().collect();
        items.sort();
        items.into_iter().cloned().collect::<Vec<_>>()
    };
    let mut required: Vec<&String> = v.required_spec_claims.iter().collect();
    required.sort();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (
        sorted(&v.iss),
        sorted(&v.aud),
        required,
        v.sub.clone(),
        v.leeway,
        v.validate_exp,
        v.validate_nbf,
        v.validate_aud,
    )
        .hash(&mut h);
    h.finish()
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
