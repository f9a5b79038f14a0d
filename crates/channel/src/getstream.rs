//! A small GetStream client: the livestream call (get-or-create, get, go
//! live, stop live), its chat channel, and the tokens a broadcaster and a
//! viewer need. Every request carries `api_key` and the server JWT (HS256
//! with the API secret, `{"server": true}`), as protocols.md says.

use std::time::Duration;

use jsonwebtoken::{EncodingKey, Header};
use keel_platform::outbound::{HttpClient, OutboundError};
use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::config::StreamConfig;

/// The call type of a live stream.
pub const CALL_TYPE: &str = "livestream";
/// The user the broadcaster streams as (its token is the stream key).
pub const BROADCASTER: &str = "channel-owner";
/// The user id of every anonymous viewer.
pub const ANONYMOUS: &str = "!anon";

/// Why a provider call failed.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// These variables are not set.
    #[error("the streaming provider is not configured: set {}", .0.join(" and "))]
    NotConfigured(Vec<&'static str>),
    /// A network error or a timeout.
    #[error("the streaming provider could not be reached")]
    Unreachable(#[source] OutboundError),
    /// An error answer, or an answer without what was asked.
    #[error("the streaming provider failed: {0}")]
    Failed(String),
    /// A token could not be signed with the configured secret.
    #[error("could not sign a token for the streaming provider")]
    Signing(#[source] jsonwebtoken::errors::Error),
}

/// What keel needs of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallInfo {
    pub cid: String,
    pub rtmp_address: Option<String>,
    pub hls_playlist_url: Option<String>,
    pub backstage: bool,
    /// Viewers now (participants of every role plus anonymous ones).
    pub viewers: i64,
}

#[derive(Clone)]
pub struct GetStream {
    http: HttpClient,
    cfg: StreamConfig,
}

/// The configured key and secret, or what is missing.
struct Credentials<'a> {
    key: &'a str,
    secret: &'a [u8],
}

impl GetStream {
    pub fn new(http: HttpClient, cfg: StreamConfig) -> Self {
        Self { http, cfg }
    }

    pub fn call_id(&self) -> &str {
        &self.cfg.call_id
    }

    pub fn call_cid(&self) -> String {
        format!("{CALL_TYPE}:{}", self.cfg.call_id)
    }

    pub fn api_key(&self) -> Option<&str> {
        self.cfg.api_key.as_deref()
    }

    pub fn missing(&self) -> Vec<&'static str> {
        self.cfg.missing()
    }

    fn credentials(&self) -> Result<Credentials<'_>, ProviderError> {
        match (&self.cfg.api_key, &self.cfg.api_secret) {
            (Some(key), Some(secret)) => Ok(Credentials {
                key,
                secret: secret.expose().as_bytes(),
            }),
            _ => Err(ProviderError::NotConfigured(self.cfg.missing())),
        }
    }

    fn sign(&self, claims: &Value) -> Result<String, ProviderError> {
        let c = self.credentials()?;
        jsonwebtoken::encode(
            &Header::default(),
            claims,
            &EncodingKey::from_secret(c.secret),
        )
        .map_err(ProviderError::Signing)
    }

    /// The stream key: a user token of the broadcaster.
    pub fn broadcaster_token(&self) -> Result<String, ProviderError> {
        self.sign(&json!({"user_id": BROADCASTER, "iat": now()}))
    }

    /// A token that lets an anonymous viewer watch this call and read its
    /// chat, valid for `ttl`.
    pub fn viewer_token(&self, ttl: Duration) -> Result<String, ProviderError> {
        let iat = now();
        self.sign(&json!({
            "user_id": ANONYMOUS,
            "role": "viewer",
            "call_cids": [self.call_cid()],
            "iat": iat,
            "exp": iat + i64::try_from(ttl.as_secs()).unwrap_or(3600),
        }))
    }

    async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, ProviderError> {
        let c = self.credentials()?;
        let token = self.sign(&json!({"server": true}))?;
        let url = format!("{}{path}", self.cfg.url);
        let send = || {
            let mut req = self
                .http
                .client()
                .request(method.clone(), &url)
                .query(&[("api_key", c.key)])
                .header("authorization", &token)
                .header("stream-auth-type", "jwt");
            if let Some(b) = &body {
                req = req.json(b);
            }
            req
        };
        // Get-or-create, get and the live switches are idempotent.
        let resp = self
            .http
            .send_idempotent(send)
            .await
            .map_err(ProviderError::Unreachable)?;
        let status = resp.status();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        if status.is_success() {
            return Ok(body);
        }
        let detail = body
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("no details");
        Err(ProviderError::Failed(format!(
            "{path} answered {status}: {detail}"
        )))
    }

    fn call_path(&self) -> String {
        format!("/api/v2/video/call/{CALL_TYPE}/{}", self.cfg.call_id)
    }

    /// Creates (or refreshes) the broadcaster user: the call and the chat
    /// name it as their creator, and GetStream refuses a creator that does
    /// not exist. The same body GetStream's server SDK sends for
    /// `upsertUsers([{id, role, name}])`.
    pub async fn upsert_broadcaster(&self) -> Result<(), ProviderError> {
        let body = json!({"users": {BROADCASTER: {"id": BROADCASTER, "role": "user", "name": "The channel"}}});
        self.request(Method::POST, "/api/v2/users", Some(body))
            .await
            .map(|_| ())
    }

    /// Gets the livestream call, creating it (in backstage) if it is new.
    pub async fn get_or_create_call(&self) -> Result<CallInfo, ProviderError> {
        let body = json!({"data": {"created_by_id": BROADCASTER, "custom": {"keel": true}}});
        let answer = self
            .request(Method::POST, &self.call_path(), Some(body))
            .await?;
        call_info(&answer)
    }

    /// The call as the provider sees it now.
    pub async fn get_call(&self) -> Result<CallInfo, ProviderError> {
        let answer = self.request(Method::GET, &self.call_path(), None).await?;
        call_info(&answer)
    }

    /// Makes the call public and starts HLS.
    pub async fn go_live(&self) -> Result<(), ProviderError> {
        let path = format!("{}/go_live", self.call_path());
        self.request(Method::POST, &path, Some(json!({"start_hls": true})))
            .await
            .map(|_| ())
    }

    /// Puts the call back in backstage.
    pub async fn stop_live(&self) -> Result<(), ProviderError> {
        let path = format!("{}/stop_live", self.call_path());
        self.request(Method::POST, &path, Some(json!({})))
            .await
            .map(|_| ())
    }

    /// Gets the call's chat channel, creating it if it is new; its cid.
    pub async fn get_or_create_chat(&self) -> Result<String, ProviderError> {
        let path = format!(
            "/api/v2/chat/channels/{CALL_TYPE}/{}/query",
            self.cfg.call_id
        );
        let body = json!({"data": {"created_by_id": BROADCASTER}});
        let answer = self.request(Method::POST, &path, Some(body)).await?;
        answer["channel"]["cid"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| ProviderError::Failed("the chat channel has no cid".to_owned()))
    }
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

#[derive(Deserialize)]
struct Session {
    #[serde(default)]
    participants_count_by_role: std::collections::HashMap<String, i64>,
    #[serde(default)]
    anonymous_participant_count: i64,
}

/// The viewer count of a call's session (or of a count-updated event).
pub fn viewers(session: &Value) -> i64 {
    serde_json::from_value::<Session>(session.clone()).map_or(0, |s| {
        s.participants_count_by_role.values().sum::<i64>() + s.anonymous_participant_count
    })
}

fn call_info(answer: &Value) -> Result<CallInfo, ProviderError> {
    let call = &answer["call"];
    let cid = call["cid"]
        .as_str()
        .ok_or_else(|| ProviderError::Failed("the answer holds no call".to_owned()))?;
    Ok(CallInfo {
        cid: cid.to_owned(),
        rtmp_address: call["ingress"]["rtmp"]["address"]
            .as_str()
            .map(str::to_owned),
        hls_playlist_url: call["egress"]["hls"]["playlist_url"]
            .as_str()
            .map(str::to_owned),
        backstage: call["backstage"].as_bool().unwrap_or(true),
        viewers: viewers(&call["session"]),
    })
}
