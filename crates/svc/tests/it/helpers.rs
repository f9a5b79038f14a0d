use keel_svc::domain::settings::{SettingsPatch, SettingsStore};
use keel_testkit::{FakeExpo, FakeJwks, TestApp};
use reqwest::Method;
use serde_json::{Value, json};

pub const PROJECT: &str = "123456789";
pub const APP_ID: &str = "1:123456789:ios:abcdef";
pub const FORM: &str = "12:3";

pub struct Svc {
    pub app: TestApp,
    pub jwks: FakeJwks,
    pub expo: FakeExpo,
}

pub type Resp = keel_testkit::Resp<keel_testkit::resp::CodeField>;

pub async fn finish(r: reqwest::Response) -> Resp {
    Resp::read(r).await
}

pub fn contact_form() -> Value {
    json!({
        "id": FORM,
        "title": "Contact",
        "fields": [
            {"id": "name", "label": "Name", "type": "text", "required": true, "max_length": 50},
            {"id": "email", "label": "Email", "type": "email", "required": true},
            {"id": "topic", "label": "Topic", "type": "select", "choices": ["sales", "support"]},
            {"id": "note", "label": "Note", "type": "textarea"}
        ]
    })
}

impl Svc {
    /// svc with App Check configured, the contact form allow-listed.
    pub async fn start() -> Self {
        Self::with(&[]).await
    }

    pub async fn with(env: &[(&str, String)]) -> Self {
        let jwks = FakeJwks::start().await;
        let expo = FakeExpo::start().await;
        let mut b = TestApp::builder()
            .service(keel_svc::NAME)
            .env("KEEL_APPCHECK_JWKS_URL", jwks.url())
            .env("KEEL_EXPO_URL", expo.url())
            .env("KEEL_EXPO_RECEIPT_DELAY_SECS", "0");
        for (k, v) in env {
            b = b.env(k, v.clone());
        }
        let app = b.spawn().await;
        let svc = Self { app, jwks, expo };
        svc.configure(SettingsPatch {
            appcheck_project_number: Some(PROJECT.into()),
            appcheck_app_ids: Some(vec![APP_ID.into()]),
            forms_allowlist: Some(vec![FORM.into()]),
            ..Default::default()
        })
        .await;
        let def = serde_json::from_value(contact_form()).unwrap();
        keel_svc::domain::site::put_form(&svc.app.platform().db, &def)
            .await
            .unwrap();
        svc
    }

    /// Changes settings straight in the database (as the CLI would).
    pub async fn configure(&self, patch: SettingsPatch) {
        SettingsStore::new(self.app.platform().db.clone())
            .update(patch)
            .await
            .unwrap();
    }

    /// The same, then waits until the app serves them (its settings cache
    /// lasts a second), as GET /admin/settings shows.
    pub async fn settings(&self, patch: SettingsPatch) {
        self.configure(patch).await;
        let stored = SettingsStore::new(self.app.platform().db.clone())
            .get()
            .await
            .unwrap();
        let want = serde_json::to_value(keel_svc::domain::settings::SettingsView::from(
            stored.as_ref(),
        ))
        .unwrap();
        let probe = format!("probe{}", chrono::Utc::now().timestamp_micros());
        let (_, password) = self.admin(&probe).await;
        let served = keel_testkit::eventually_async(std::time::Duration::from_secs(5), || async {
            let r = self
                .admin_call(Method::GET, "/admin/settings", (&probe, &password), None)
                .await;
            (r.body == want).then_some(())
        })
        .await;
        assert!(served.is_some(), "the app serves the new settings");
    }

    pub fn url(&self, path: &str) -> String {
        self.app.url(keel_svc::NAME, path)
    }

    pub fn token(&self) -> String {
        self.token_with(|_| {})
    }

    pub fn token_with(&self, edit: impl FnOnce(&mut Value)) -> String {
        let now = chrono::Utc::now().timestamp();
        let mut claims = json!({
            "iss": format!("https://firebaseappcheck.googleapis.com/{PROJECT}"),
            "aud": [format!("projects/{PROJECT}"), "projects/my-project"],
            "sub": APP_ID,
            "iat": now,
            "exp": now + 3600,
        });
        edit(&mut claims);
        self.jwks.sign("k1", &claims)
    }

    pub async fn submit(&self, token: Option<&str>, body: Value) -> Resp {
        self.submit_to(FORM, token, body).await
    }

    pub async fn submit_to(&self, form: &str, token: Option<&str>, body: Value) -> Resp {
        let mut req = self
            .app
            .http
            .post(self.url(&format!("/submit/{form}")))
            .json(&body);
        if let Some(t) = token {
            req = req.header("X-Vendor-AppCheck", t);
        }
        finish(req.send().await.unwrap()).await
    }

    pub async fn fields(&self, form: &str, token: Option<&str>) -> Resp {
        let mut req = self
            .app
            .http
            .get(self.url(&format!("/forms/{form}/fields")));
        if let Some(t) = token {
            req = req.header("X-Vendor-AppCheck", t);
        }
        finish(req.send().await.unwrap()).await
    }

    /// An admin (svc_manage) and its application password.
    pub async fn admin(&self, username: &str) -> (String, String) {
        let db = &self.app.platform().db;
        let (_, login) =
            keel_svc::domain::admin::add_user(db, username, Some("login-password-1".into()), true)
                .await
                .unwrap();
        let app_password = keel_svc::domain::admin::add_app_password(db, username, "tests")
            .await
            .unwrap();
        (login, app_password)
    }

    /// "clerk", a user without svc_manage, and its application password.
    pub async fn clerk(&self) -> String {
        let db = &self.app.platform().db;
        keel_svc::domain::admin::add_user(db, "clerk", Some("pw-pw-pw-pw".into()), false)
            .await
            .unwrap();
        keel_svc::domain::admin::add_app_password(db, "clerk", "x")
            .await
            .unwrap()
    }

    pub async fn admin_call(
        &self,
        method: Method,
        path: &str,
        auth: (&str, &str),
        body: Option<Value>,
    ) -> Resp {
        let mut req = self
            .app
            .http
            .request(method, self.url(path))
            .basic_auth(auth.0, Some(auth.1));
        if let Some(b) = body {
            req = req.json(&b);
        }
        finish(req.send().await.unwrap()).await
    }

    pub async fn stored(&self) -> u64 {
        use keel_platform::sea_orm::{EntityTrait, PaginatorTrait};
        keel_svc::entity::submission::Entity::find()
            .count(self.app.platform().db.read())
            .await
            .unwrap()
    }
}

pub fn good() -> Value {
    json!({"fields": {"name": "Ada", "email": "ada@example.com", "topic": "support", "note": "hi"}})
}
