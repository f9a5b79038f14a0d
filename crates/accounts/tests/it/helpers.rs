use keel_testkit::TestApp;
use reqwest::Method;
use serde_json::Value;

pub const JWT_SECRET: &str = "test-secret-test-secret-test-secret-0123";

pub struct Api {
    pub app: TestApp,
}

pub type Resp = keel_testkit::Resp<keel_testkit::resp::CodeField>;

/// A registered user.
#[derive(Clone, Debug)]
pub struct User {
    pub id: String,
    pub password: String,
    pub token: String,
    pub refresh: String,
}

impl Api {
    pub async fn start() -> Self {
        Self::with(&[]).await
    }

    pub async fn with(env: &[(&str, &str)]) -> Self {
        let mut b = TestApp::builder()
            .service(keel_accounts::NAME)
            .env("KEEL_ACCOUNTS_JWT_SECRET", JWT_SECRET);
        for (k, v) in env {
            b = b.env(k, *v);
        }
        Self {
            app: b.spawn().await,
        }
    }

    pub fn url(&self, path: &str) -> String {
        self.app.url(keel_accounts::NAME, path)
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        form: Option<&[(&str, &str)]>,
    ) -> Resp {
        let mut req = self.app.http.request(method, self.url(path));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(f) = form {
            req = req.form(f);
        }
        finish(req.send().await.unwrap()).await
    }

    pub async fn send_json(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: &Value,
    ) -> Resp {
        let mut req = self.app.http.request(method, self.url(path)).json(body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        finish(req.send().await.unwrap()).await
    }

    pub async fn get(&self, path: &str, token: &str) -> Resp {
        self.send(Method::GET, path, Some(token), None).await
    }

    pub async fn post(&self, path: &str, token: Option<&str>, form: &[(&str, &str)]) -> Resp {
        self.send(Method::POST, path, token, Some(form)).await
    }

    pub async fn put(&self, path: &str, token: &str, form: &[(&str, &str)]) -> Resp {
        self.send(Method::PUT, path, Some(token), Some(form)).await
    }

    pub async fn delete(&self, path: &str, token: &str) -> Resp {
        self.send(Method::DELETE, path, Some(token), None).await
    }

    pub async fn register(&self, username: &str) -> User {
        let email = format!("{username}@example.com");
        let password = "correct horse battery";
        let r = self
            .post(
                "/auth/register",
                None,
                &[
                    ("username", username),
                    ("email", &email),
                    ("password", password),
                ],
            )
            .await;
        assert_eq!(r.status, 200, "register {username}: {}", r.text);
        user_from(&r, password)
    }

    pub async fn login(&self, login: &str, password: &str, code: Option<&str>) -> Resp {
        let mut form = vec![("login", login), ("password", password)];
        if let Some(c) = code {
            form.push(("code", c));
        }
        self.post("/auth/login", None, &form).await
    }

    pub async fn me(&self, token: &str) -> Value {
        let r = self.get("/account", token).await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["user"].clone()
    }

    /// Runs SQL on the app's database (setting up states no endpoint sets).
    pub async fn sql(&self, sql: &str) {
        use keel_platform::sea_orm::ConnectionTrait;
        self.app
            .platform()
            .db
            .write()
            .execute_unprepared(sql)
            .await
            .unwrap();
    }
}

pub fn user_from(r: &Resp, password: &str) -> User {
    User {
        id: r.body["user"]["_id"].as_str().unwrap().to_owned(),
        password: password.to_owned(),
        token: r.body["accessToken"].as_str().unwrap().to_owned(),
        refresh: r.body["refreshToken"].as_str().unwrap().to_owned(),
    }
}

pub async fn finish(resp: reqwest::Response) -> Resp {
    Resp::read(resp).await
}

/// An ISO 8601 UTC timestamp with milliseconds and `Z`.
pub fn is_iso_millis(v: &Value) -> bool {
    let Some(s) = v.as_str() else { return false };
    s.len() == 24
        && s.ends_with('Z')
        && s.as_bytes()[19] == b'.'
        && chrono::DateTime::parse_from_rfc3339(s).is_ok()
}

pub fn is_object_id(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()))
}

impl Api {
    /// Waits for at least `n` mails to `to`; oldest first.
    pub async fn mails_to(&self, to: &str, n: usize) -> Vec<keel_testkit::TestMail> {
        keel_testkit::eventually(std::time::Duration::from_secs(10), || {
            let m: Vec<_> = self
                .app
                .mails()
                .into_iter()
                .filter(|m| m.to == to)
                .collect();
            (m.len() >= n).then_some(m)
        })
        .await
        .unwrap_or_else(|| panic!("expected {n} mails to {to}; have {:?}", self.app.mails()))
    }
}
