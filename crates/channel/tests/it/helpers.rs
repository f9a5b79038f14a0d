use std::sync::Mutex;

use keel_testkit::getstream::Delivery;
use keel_testkit::{FakeDiscord, FakeEmotes, FakeStream, TestApp};
use serde_json::{Value, json};

/// The public URL the tests' requests come from.
pub const ORIGIN: &str = "http://127.0.0.1:8083";
pub const EMAIL: &str = "owner@example.com";
pub const PASSWORD: &str = "correct horse battery";
/// The set-up code every test app is started with.
pub const SETUP_CODE: &str = "test-setup-code";
/// A schedule that does not come due during a test.
pub const NEVER: &str = "0 0 1 1 *";

pub struct Channel {
    pub app: TestApp,
    pub stream: FakeStream,
    pub discord: FakeDiscord,
    pub emotes: FakeEmotes,
    cookie: Mutex<Option<String>>,
}

pub type Resp = keel_testkit::Resp<keel_testkit::resp::Trpc>;

pub async fn finish(r: reqwest::Response) -> Resp {
    Resp::read(r).await
}

impl Channel {
    pub async fn start() -> Self {
        Self::with(&[]).await
    }

    /// channel-api with the fakes wired in and the cron jobs quiet, plus
    /// `env`.
    pub async fn with(env: &[(&str, String)]) -> Self {
        Self::serving(&[keel_channel::API], env).await
    }

    /// channel-web in front of channel-api, plus `env`.
    pub async fn with_web(env: &[(&str, String)]) -> Self {
        Self::serving(&[keel_channel::API, keel_channel::WEB], env).await
    }

    async fn serving(services: &[&'static str], env: &[(&str, String)]) -> Self {
        let stream = FakeStream::start().await;
        let discord = FakeDiscord::start().await;
        let emotes = FakeEmotes::start().await;
        let mut b = TestApp::builder();
        for s in services {
            b = b.service(s);
        }
        let mut b = b
            .env("KEEL_CHANNEL_PUBLIC_URL", ORIGIN)
            .env("KEEL_CHANNEL_LIVE_WEBHOOK_URL", discord.webhook_url())
            .env("KEEL_CHANNEL_EMOTE_CRON", NEVER)
            .env("KEEL_CHANNEL_SAMPLER_CRON", NEVER)
            .env("KEEL_CHANNEL_SETUP_CODE", SETUP_CODE);
        for (k, v) in stream.env().into_iter().chain(emotes.env("12345")) {
            b = b.env(k, v);
        }
        for (k, v) in env {
            b = b.env(k, v.clone());
        }
        let app = b.spawn().await;
        Self {
            app,
            stream,
            discord,
            emotes,
            cookie: Mutex::new(None),
        }
    }

    pub fn url(&self, path: &str) -> String {
        self.app.url(keel_channel::API, path)
    }

    /// A URL of channel-web (when it runs).
    pub fn web(&self, path: &str) -> String {
        self.app.url(keel_channel::WEB, path)
    }

    /// A page of channel-web, with the session cookie if there is one; no
    /// redirect followed.
    pub async fn page(&self, path: &str) -> Resp {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        finish(
            self.with_cookie(client.get(self.web(path)))
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    fn cookie(&self) -> Option<String> {
        self.cookie.lock().unwrap().clone()
    }

    /// The session cookie, as a `Cookie` header value.
    pub fn cookie_header(&self) -> Option<String> {
        self.cookie()
    }

    /// Keeps the session cookie a response sets (or clears).
    pub fn keep_cookie(&self, r: &Resp) {
        if let Some(c) = r.headers.get("set-cookie") {
            let pair = c.to_str().unwrap().split(';').next().unwrap().to_owned();
            *self.cookie.lock().unwrap() = (!pair.ends_with('=')).then_some(pair);
        }
    }

    pub fn forget_cookie(&self) {
        *self.cookie.lock().unwrap() = None;
    }

    fn with_cookie(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match self.cookie() {
            Some(c) => req.header("cookie", c),
            None => req,
        }
    }

    /// A query, its input (if any) in `?input=`.
    pub async fn query(&self, name: &str, input: Option<Value>) -> Resp {
        let mut req = self.app.http.get(self.url(&format!("/api/trpc/{name}")));
        if let Some(i) = input {
            req = req.query(&[("input", i.to_string())]);
        }
        finish(self.with_cookie(req).send().await.unwrap()).await
    }

    /// A mutation from the channel's own pages.
    pub async fn mutate(&self, name: &str, input: Value) -> Resp {
        let req = self
            .app
            .http
            .post(self.url(&format!("/api/trpc/{name}")))
            .header("origin", ORIGIN)
            .json(&input);
        let r = finish(self.with_cookie(req).send().await.unwrap()).await;
        self.keep_cookie(&r);
        r
    }

    /// Signs in from the channel's own pages, keeping the session cookie.
    pub async fn sign_in(&self, email: &str, password: &str) -> Resp {
        let r = finish(
            self.app
                .http
                .post(self.url("/api/auth/sign-in"))
                .header("origin", ORIGIN)
                .json(&json!({"email": email, "password": password}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        self.keep_cookie(&r);
        r
    }

    /// The set-up, done; the owner signed in.
    pub async fn set_up(&self) -> Resp {
        let r = self
            .mutate(
                "setup.complete",
                json!({"code": SETUP_CODE, "email": EMAIL, "password": PASSWORD, "title": "Ada's channel", "description": "Building things"}),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        r
    }

    /// Set up and provisioned, signed in.
    pub async fn provisioned(&self) -> Value {
        self.set_up().await;
        let r = self.mutate("stream.provision", json!({})).await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.data().clone()
    }

    /// The call's cid at the fake.
    pub fn cid(&self) -> String {
        "livestream:channel".to_owned()
    }

    /// Delivers a signed provider event to the webhook.
    pub async fn event(&self, kind: &str, extra: Value) -> Resp {
        let e = FakeStream::event(kind, &self.cid(), extra);
        self.deliver(&e, Delivery::default()).await
    }

    pub async fn deliver(&self, event: &Value, opts: Delivery) -> Resp {
        finish(
            self.stream
                .deliver(&self.url("/api/webhooks/stream"), event, opts)
                .await,
        )
        .await
    }

    pub async fn is_live(&self) -> Value {
        let r = self.query("stream.isLive", None).await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.data().clone()
    }

    /// Waits until `stream.isLive` says `live` (the snapshot is at most
    /// half a second old).
    pub async fn until_live(&self, live: bool) -> Value {
        keel_testkit::eventually_async(std::time::Duration::from_secs(5), || async {
            let s = self.is_live().await;
            (s["isLive"] == live).then_some(s)
        })
        .await
        .unwrap_or_else(|| panic!("isLive never became {live}"))
    }
}
