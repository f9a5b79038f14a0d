//! Fake emote sources on one listener: 7TV under `/7tv`, BetterTTV under
//! `/bttv`, FrankerFaceZ under `/ffz`, each with its real paths and answer
//! shapes; each source can be made to fail (500) or not know the channel
//! (404).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use crate::lock;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

/// How a source answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Ok,
    NotFound,
    Fail,
}

#[derive(Default)]
struct Inner {
    /// By source key (`7tv-global`, `bttv-channel`, ...); default Ok.
    answers: Mutex<HashMap<&'static str, Answer>>,
    hits: Mutex<Vec<String>>,
}

#[derive(Clone)]
pub struct FakeEmotes {
    pub addr: SocketAddr,
    inner: Arc<Inner>,
}

impl FakeEmotes {
    pub async fn start() -> Self {
        let inner = Arc::new(Inner::default());
        let app = Router::new()
            .route("/7tv/v3/emote-sets/global", get(seventv_global))
            .route("/7tv/v3/users/twitch/{id}", get(seventv_user))
            .route("/bttv/3/cached/emotes/global", get(bttv_global))
            .route("/bttv/3/cached/users/twitch/{id}", get(bttv_user))
            .route("/ffz/v1/set/global", get(ffz_global))
            .route("/ffz/v1/room/id/{id}", get(ffz_room))
            .with_state(inner.clone());
        let addr = crate::serve_on_loopback(app, "fake emote sources").await;
        Self { addr, inner }
    }

    /// The environment that points keel at these sources for Twitch
    /// channel `twitch_id`.
    pub fn env(&self, twitch_id: &str) -> Vec<(&'static str, String)> {
        vec![
            ("KEEL_7TV_URL", format!("http://{}/7tv", self.addr)),
            ("KEEL_BTTV_URL", format!("http://{}/bttv", self.addr)),
            ("KEEL_FFZ_URL", format!("http://{}/ffz", self.addr)),
            ("KEEL_CHANNEL_TWITCH_ID", twitch_id.to_owned()),
        ]
    }

    pub fn answer(&self, source: &'static str, a: Answer) {
        lock(&self.inner.answers).insert(source, a);
    }

    /// Paths requested so far.
    pub fn hits(&self) -> Vec<String> {
        lock(&self.inner.hits).clone()
    }
}

fn serve(inner: &Inner, source: &'static str, path: String, ok: Value) -> Response {
    lock(&inner.hits).push(path);
    match lock(&inner.answers)
        .get(source)
        .copied()
        .unwrap_or(Answer::Ok)
    {
        Answer::Ok => axum::Json(ok).into_response(),
        Answer::NotFound => (
            StatusCode::NOT_FOUND,
            axum::Json(json!({"message": "Unknown User"})),
        )
            .into_response(),
        Answer::Fail => (StatusCode::INTERNAL_SERVER_ERROR, "upstream exploded").into_response(),
    }
}

async fn seventv_global(State(i): State<Arc<Inner>>) -> Response {
    let body = json!({"id": "global", "emotes": [
        {"id": "7g1", "name": "Shared", "data": {}},
        {"id": "7g2", "name": "SevenGlobal"}
    ]});
    serve(&i, "7tv-global", "/7tv/global".into(), body)
}

async fn seventv_user(State(i): State<Arc<Inner>>, Path(id): Path<String>) -> Response {
    let body = json!({"id": "u", "emote_set": {"id": "s", "emotes": [
        {"id": "7c1", "name": "Shared"},
        {"id": "7c2", "name": "SevenChannel"}
    ]}});
    serve(&i, "7tv-channel", format!("/7tv/user/{id}"), body)
}

async fn bttv_global(State(i): State<Arc<Inner>>) -> Response {
    let body = json!([{"id": "bg1", "code": "BttvGlobal"}, {"id": "bg2", "code": "Shared"}]);
    serve(&i, "bttv-global", "/bttv/global".into(), body)
}

async fn bttv_user(State(i): State<Arc<Inner>>, Path(id): Path<String>) -> Response {
    let body = json!({
        "channelEmotes": [{"id": "bc1", "code": "BttvChannel"}],
        "sharedEmotes": [{"id": "bs1", "code": "BttvShared"}]
    });
    serve(&i, "bttv-channel", format!("/bttv/user/{id}"), body)
}

async fn ffz_global(State(i): State<Arc<Inner>>) -> Response {
    let body = json!({"default_sets": [3], "sets": {
        "3": {"id": 3, "emoticons": [{"id": 1, "name": "FfzGlobal", "urls": {"1": "//cdn.frankerfacez.com/emote/1/1"}}]},
        "4": {"id": 4, "emoticons": [{"id": 2, "name": "NotDefault", "urls": {"1": "//cdn.frankerfacez.com/emote/2/1"}}]}
    }});
    serve(&i, "ffz-global", "/ffz/global".into(), body)
}

async fn ffz_room(State(i): State<Arc<Inner>>, Path(id): Path<String>) -> Response {
    let body = json!({"room": {"set": 77}, "sets": {
        "77": {"id": 77, "emoticons": [{"id": 9, "name": "FfzRoom", "urls": {"1": "https://cdn.frankerfacez.com/emote/9/1"}}]}
    }});
    serve(&i, "ffz-channel", format!("/ffz/room/{id}"), body)
}
