//! A fake JWKS endpoint (Apple, Firebase App Check) that signs tokens with
//! keys it holds. Keys are fixed fixtures (generating RSA keys per test is
//! slow); which of them are published is up to the test.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::lock;
use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Serialize;
use serde_json::{Value, json};

/// Each fixture: its key id, private key and public key (PEM).
const PEMS: [(&str, &str, &str); 3] = [
    (
        "k1",
        include_str!("../keys/rsa1.pem"),
        include_str!("../keys/rsa1.pub.pem"),
    ),
    (
        "k2",
        include_str!("../keys/rsa2.pem"),
        include_str!("../keys/rsa2.pub.pem"),
    ),
    (
        "k3",
        include_str!("../keys/rsa3.pem"),
        include_str!("../keys/rsa3.pub.pem"),
    ),
];

struct Key {
    kid: &'static str,
    pem: &'static str,
    jwk: Value,
    public_pem: &'static str,
}

struct Inner {
    keys: Vec<Key>,
    published: Mutex<Vec<&'static str>>,
    fetches: AtomicUsize,
    cache_control: Mutex<Option<String>>,
}

/// The fake; cheap to clone.
#[derive(Clone)]
pub struct FakeJwks {
    pub addr: SocketAddr,
    inner: Arc<Inner>,
}

impl FakeJwks {
    /// Serves `/jwks` publishing key `k1`.
    pub async fn start() -> Self {
        let keys = PEMS
            .iter()
            .map(|(kid, pem, public)| load(kid, pem, public))
            .collect();
        let inner = Arc::new(Inner {
            keys,
            published: Mutex::new(vec!["k1"]),
            fetches: AtomicUsize::new(0),
            cache_control: Mutex::new(None),
        });
        let app = Router::new()
            .route("/jwks", get(serve_keys))
            .with_state(inner.clone());
        let addr = crate::serve_on_loopback(app, "fake JWKS").await;
        Self { addr, inner }
    }

    pub fn url(&self) -> String {
        format!("http://{}/jwks", self.addr)
    }

    /// How many times the key set was fetched.
    pub fn fetches(&self) -> usize {
        self.inner.fetches.load(Ordering::SeqCst)
    }

    /// Publishes exactly these key ids (`k1`, `k2`, `k3`).
    pub fn publish(&self, kids: &[&'static str]) {
        *lock(&self.inner.published) = kids.to_vec();
    }

    /// Sends `Cache-Control` with the key set.
    pub fn set_cache_control(&self, value: Option<&str>) {
        *lock(&self.inner.cache_control) = value.map(str::to_owned);
    }

    /// An RS256 token signed by `kid` (published or not).
    pub fn sign<C: Serialize>(&self, kid: &str, claims: &C) -> String {
        let key = self.key(kid);
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some(kid.to_owned());
        let enc = EncodingKey::from_rsa_pem(key.pem.as_bytes()).expect("fixture key");
        jsonwebtoken::encode(&header, claims, &enc).expect("sign")
    }

    /// An HS256 token whose secret is `kid`'s public key (the classic
    /// algorithm-confusion attack).
    pub fn sign_hs256_with_public_key<C: Serialize>(&self, kid: &str, claims: &C) -> String {
        let key = self.key(kid);
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some(kid.to_owned());
        let enc = EncodingKey::from_secret(key.public_pem.as_bytes());
        jsonwebtoken::encode(&header, claims, &enc).expect("sign")
    }

    /// An unsigned token with `alg: none`.
    pub fn sign_none<C: Serialize>(&self, kid: &str, claims: &C) -> String {
        let header = json!({"alg": "none", "typ": "JWT", "kid": kid});
        let enc = |v: &Value| URL_SAFE_NO_PAD.encode(v.to_string());
        let claims = serde_json::to_value(claims).expect("claims");
        format!("{}.{}.", enc(&header), enc(&claims))
    }

    fn key(&self, kid: &str) -> &Key {
        self.inner
            .keys
            .iter()
            .find(|k| k.kid == kid)
            .unwrap_or_else(|| panic!("no fixture key {kid}"))
    }
}

async fn serve_keys(State(inner): State<Arc<Inner>>) -> impl IntoResponse {
    inner.fetches.fetch_add(1, Ordering::SeqCst);
    let published = lock(&inner.published).clone();
    let keys: Vec<Value> = inner
        .keys
        .iter()
        .filter(|k| published.contains(&k.kid))
        .map(|k| k.jwk.clone())
        .collect();
    let cache = lock(&inner.cache_control)
        .clone()
        .unwrap_or_else(|| "no-cache".to_owned());
    (
        [(header::CACHE_CONTROL, cache)],
        axum::Json(json!({ "keys": keys })),
    )
}

fn load(kid: &'static str, pem: &'static str, public_pem: &'static str) -> Key {
    let private = EncodingKey::from_rsa_pem(pem.as_bytes()).expect("fixture key parses");
    let mut jwk = jsonwebtoken::jwk::Jwk::from_encoding_key(&private, Algorithm::RS256)
        .expect("fixture key's public components");
    jwk.common.key_id = Some(kid.to_owned());
    jwk.common.public_key_use = Some(jsonwebtoken::jwk::PublicKeyUse::Signature);
    Key {
        kid,
        pem,
        jwk: serde_json::to_value(jwk).expect("JWK as JSON"),
        public_pem,
    }
}
