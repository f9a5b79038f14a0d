//! A fake APNs: HTTP/2 over TLS (a certificate of its own, which keel is
//! told to trust through `KEEL_APNS_CA_CERT`), `POST /3/device/<token>`,
//! provider tokens checked against an ES256 key it generated. It records
//! every request and answers each device token as scripted (200 with an
//! `apns-id` by default, or a status with `{"reason": ...}`). Production and
//! sandbox are two listeners over one record.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::lock;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Version};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Value, json};
use tokio_rustls::TlsAcceptor;

pub const KEY_ID: &str = "ABC123DEFG";
pub const TEAM_ID: &str = "TEAM123456";
pub const TOPIC: &str = "com.example.usage";

/// One push as the fake saw it.
#[derive(Debug, Clone)]
pub struct ApnsRequest {
    pub sandbox: bool,
    pub device_token: String,
    pub headers: HashMap<String, String>,
    pub body: Value,
    pub http2: bool,
    pub provider_token: String,
}

#[derive(Default)]
struct Inner {
    requests: Mutex<Vec<ApnsRequest>>,
    scripted: Mutex<HashMap<String, VecDeque<(u16, String)>>>,
}

#[derive(Clone)]
struct Listener {
    inner: Arc<Inner>,
    sandbox: bool,
    decoding: Arc<DecodingKey>,
}

pub struct FakeApns {
    pub production: SocketAddr,
    pub sandbox: SocketAddr,
    inner: Arc<Inner>,
    dir: tempfile::TempDir,
}

impl FakeApns {
    pub async fn start() -> Self {
        crate::init();
        let dir = tempfile::tempdir().expect("a directory for the fake APNs");
        let signing =
            rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("an ES256 key");
        std::fs::write(dir.path().join("AuthKey.p8"), signing.serialize_pem())
            .expect("write the .p8");
        let decoding = Arc::new(
            DecodingKey::from_ec_pem(signing.public_key_pem().as_bytes())
                .expect("the ES256 public key"),
        );
        let cert = rcgen::generate_simple_self_signed(vec![
            "127.0.0.1".to_owned(),
            "localhost".to_owned(),
        ])
        .expect("a TLS certificate");
        std::fs::write(dir.path().join("ca.pem"), cert.cert.pem()).expect("write the certificate");
        let acceptor = acceptor(&cert);
        let inner = Arc::new(Inner::default());
        let production = serve(
            acceptor.clone(),
            Listener {
                inner: inner.clone(),
                sandbox: false,
                decoding: decoding.clone(),
            },
        )
        .await;
        let sandbox = serve(
            acceptor,
            Listener {
                inner: inner.clone(),
                sandbox: true,
                decoding,
            },
        )
        .await;
        Self {
            production,
            sandbox,
            inner,
            dir,
        }
    }

    pub fn key_path(&self) -> PathBuf {
        self.dir.path().join("AuthKey.p8")
    }

    pub fn ca_path(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// The configuration that points keel's APNs client here.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("KEEL_APNS_URL", format!("https://{}", self.production)),
            ("KEEL_APNS_SANDBOX_URL", format!("https://{}", self.sandbox)),
            ("KEEL_APNS_CA_CERT", self.ca_path().display().to_string()),
            ("KEEL_APNS_KEY_PATH", self.key_path().display().to_string()),
            ("KEEL_APNS_KEY_ID", KEY_ID.to_owned()),
            ("KEEL_APNS_TEAM_ID", TEAM_ID.to_owned()),
            ("KEEL_APNS_TOPIC", TOPIC.to_owned()),
        ]
    }

    /// The next push to `device_token` is answered `status` with `reason`.
    pub fn respond(&self, device_token: &str, status: u16, reason: &str) {
        lock(&self.inner.scripted)
            .entry(device_token.to_ascii_lowercase())
            .or_default()
            .push_back((status, reason.to_owned()));
    }

    pub fn requests(&self) -> Vec<ApnsRequest> {
        lock(&self.inner.requests).clone()
    }
}

fn acceptor(cert: &rcgen::CertifiedKey<rcgen::KeyPair>) -> TlsAcceptor {
    let der = rustls::pki_types::CertificateDer::from(cert.cert.der().to_vec());
    let key = rustls::pki_types::PrivateKeyDer::try_from(cert.signing_key.serialize_der())
        .expect("the TLS key");
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_no_client_auth()
    .with_single_cert(vec![der], key)
    .expect("a TLS server config");
    // APNs speaks HTTP/2 only.
    config.alpn_protocols = vec![b"h2".to_vec()];
    TlsAcceptor::from(Arc::new(config))
}

async fn serve(acceptor: TlsAcceptor, listener: Listener) -> SocketAddr {
    let socket = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the fake APNs");
    let addr = socket.local_addr().expect("fake APNs address");
    let app = Router::new()
        .route("/3/device/{token}", post(push))
        .with_state(listener);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = socket.accept().await {
            let (acceptor, app) = (acceptor.clone(), app.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = TowerToHyperService::new(app);
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .http2_only()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    addr
}

async fn push(
    State(l): State<Listener>,
    Path(token): Path<String>,
    version: Version,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let provider_token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("bearer "))
        .unwrap_or_default()
        .to_owned();
    let request = ApnsRequest {
        sandbox: l.sandbox,
        device_token: token.clone(),
        headers: headers
            .iter()
            .filter_map(|(k, v)| Some((k.as_str().to_owned(), v.to_str().ok()?.to_owned())))
            .collect(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        http2: version == Version::HTTP_2,
        provider_token: provider_token.clone(),
    };
    let apns_id = request.headers.get("apns-id").cloned().unwrap_or_default();
    lock(&l.inner.requests).push(request);
    if !valid_provider_token(&provider_token, &l.decoding) {
        return failure(403, "InvalidProviderToken");
    }
    let scripted = lock(&l.inner.scripted)
        .get_mut(&token)
        .and_then(VecDeque::pop_front);
    match scripted {
        Some((status, reason)) => failure(status, &reason),
        None => (StatusCode::OK, [("apns-id", apns_id)]).into_response(),
    }
}

fn valid_provider_token(token: &str, key: &DecodingKey) -> bool {
    let Ok(header) = jsonwebtoken::decode_header(token) else {
        return false;
    };
    let mut v = Validation::new(Algorithm::ES256);
    v.required_spec_claims.clear();
    v.validate_exp = false;
    v.set_issuer(&[TEAM_ID]);
    header.kid.as_deref() == Some(KEY_ID) && jsonwebtoken::decode::<Value>(token, key, &v).is_ok()
}

fn failure(status: u16, reason: &str) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    let mut body = json!({ "reason": reason });
    if status == 410 {
        body["timestamp"] = json!(chrono::Utc::now().timestamp_millis());
    }
    (code, axum::Json(body)).into_response()
}
