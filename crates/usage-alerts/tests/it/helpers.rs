use keel_testkit::TestApp;
use reqwest::Method;
use serde_json::{Value, json};

pub struct Api {
    pub app: TestApp,
}

pub type Resp = keel_testkit::Resp<keel_testkit::resp::ErrorText>;

impl Api {
    pub async fn start() -> Self {
        Self::with(&[]).await
    }

    pub async fn with(env: &[(&str, String)]) -> Self {
        let mut b = TestApp::builder().service(keel_usage_alerts::NAME);
        for (k, v) in env {
            b = b.env(k, v.clone());
        }
        Self {
            app: b.spawn().await,
        }
    }

    pub fn url(&self, path: &str) -> String {
        self.app.url(keel_usage_alerts::NAME, path)
    }

    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> Resp {
        let mut req = self.app.http.request(method, self.url(path));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        Resp::read(req.send().await.unwrap()).await
    }

    pub async fn get(&self, path: &str, token: &str) -> Resp {
        self.call(Method::GET, path, Some(token), None).await
    }

    pub async fn post(&self, path: &str, token: &str, body: Value) -> Resp {
        self.call(Method::POST, path, Some(token), Some(body)).await
    }

    pub async fn event(&self, token: &str, session: &str, cost: f64) -> Resp {
        let r = self.post("/event", token, event(session, cost)).await;
        assert_eq!(r.status, 200, "{}", r.text);
        r
    }

    pub async fn register(&self, token: &str, device: &str, platform: &str, sandbox: bool) {
        let r = self
            .post(
                "/register",
                token,
                json!({"device_token": device, "platform": platform, "sandbox": sandbox}),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
    }
}

pub fn event(session: &str, cost: f64) -> Value {
    json!({
        "sessionId": session,
        "timestamp": "2026-11-22T10:00:00.000Z",
        "model": "claude-sonnet",
        "inputTokens": 100,
        "outputTokens": 50,
        "cacheReadTokens": 10,
        "cacheWriteTokens": 5,
        "costUSD": cost,
    })
}

/// A distinct, well-formed APNs device token.
pub fn device(n: u32) -> String {
    format!("{n:064x}")
}
