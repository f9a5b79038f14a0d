//! Helpers for the push tests.

use std::time::Duration;

use chrono::Utc;
use keel_platform::sea_orm::{ColumnTrait, EntityTrait, QueryFilter, Set};
use keel_svc::entity::{push_device, push_message};
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Resp, Svc, finish};

pub fn token(i: usize) -> String {
    format!("ExponentPushToken[device{i:06}]")
}

pub struct Admin {
    pub user: String,
    pub password: String,
}

impl Admin {
    pub fn auth(&self) -> (&str, &str) {
        (&self.user, &self.password)
    }
}

/// A device row for [`Svc::seed`].
pub fn device(i: usize) -> push_device::ActiveModel {
    let now = Utc::now();
    push_device::ActiveModel {
        push_token: Set(token(i)),
        device_type: Set(if i.is_multiple_of(2) {
            "ios"
        } else {
            "android"
        }
        .to_owned()),
        device_model: Set(Some("Pixel 9".to_owned())),
        os_version: Set(Some("15".to_owned())),
        app_version: Set(Some("1.0.0".to_owned())),
        locale: Set(Some("en-US".to_owned())),
        timezone: Set(Some("UTC".to_owned())),
        user_label: Set(None),
        active: Set(true),
        inactive_reason: Set(None),
        app_id: Set("seed".to_owned()),
        registered_at: Set(now),
        updated_at: Set(now),
    }
}

impl Svc {
    pub async fn register(&self, body: Value) -> Resp {
        let t = self.token();
        self.register_with(Some(&t), body).await
    }

    pub async fn register_with(&self, appcheck: Option<&str>, body: Value) -> Resp {
        let mut req = self.app.http.post(self.url("/register")).json(&body);
        if let Some(t) = appcheck {
            req = req.header("X-Vendor-AppCheck", t);
        }
        finish(req.send().await.unwrap()).await
    }

    /// Registers `token(i)` as an iOS device.
    pub async fn registered(&self, i: usize) -> String {
        let t = token(i);
        let r = self
            .register(json!({"push_token": t, "device_type": "ios"}))
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        t
    }

    pub async fn status_of(&self, push_token: &str) -> Resp {
        let r = self
            .app
            .http
            .get(self.url("/register/status"))
            .query(&[("push_token", push_token)])
            .send()
            .await
            .unwrap();
        finish(r).await
    }

    pub async fn push_admin(&self) -> Admin {
        let (_, password) = self.admin("pusher").await;
        Admin {
            user: "pusher".into(),
            password,
        }
    }

    pub async fn send(&self, admin: &Admin, body: Value) -> Resp {
        self.admin_call(Method::POST, "/send", admin.auth(), Some(body))
            .await
    }

    /// POST /send that must be accepted; its id.
    pub async fn sent(&self, admin: &Admin, body: Value) -> String {
        let r = self.send(admin, body).await;
        assert_eq!(r.status, 202, "{}", r.text);
        r.body["id"].as_str().unwrap().to_owned()
    }

    pub async fn send_view(&self, admin: &Admin, id: &str) -> Resp {
        self.admin_call(Method::GET, &format!("/send/{id}"), admin.auth(), None)
            .await
    }

    /// Polls GET /send/{id} until every message is handed over.
    pub async fn wait_sent(&self, admin: &Admin, id: &str, within: Duration) -> Value {
        let sent = keel_testkit::eventually_async(within, || async {
            let r = self.send_view(admin, id).await;
            assert_eq!(r.status, 200, "{}", r.text);
            (r.body["status"] == "sent").then_some(r.body)
        })
        .await;
        sent.unwrap_or_else(|| panic!("the send {id} did not finish"))
    }

    pub async fn stats(&self, admin: &Admin) -> Value {
        let r = self
            .admin_call(Method::GET, "/stats", admin.auth(), None)
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.body
    }

    /// Inserts devices straight into the database (fast, for big sends).
    pub async fn seed(&self, rows: impl IntoIterator<Item = push_device::ActiveModel>) {
        let rows: Vec<_> = rows.into_iter().collect();
        let db = &self.app.platform().db;
        for chunk in rows.chunks(500) {
            push_device::Entity::insert_many(chunk.to_vec())
                .exec_without_returning(db.write())
                .await
                .unwrap();
        }
    }

    pub async fn device_row(&self, push_token: &str) -> Option<push_device::Model> {
        push_device::Entity::find_by_id(push_token)
            .one(self.app.platform().db.read())
            .await
            .unwrap()
    }

    /// GET /send/{id}'s `progress` equals a recount of its messages, read
    /// once the jobs due now have run: a sent batch's receipt check (due at
    /// once in these tests) moves the counts after the send reads `sent`.
    pub async fn assert_progress_recounts(&self, admin: &Admin, id: &str) {
        self.app.jobs_settled().await;
        let view = self.send_view(admin, id).await;
        assert_eq!(view.body["progress"], self.recount(id).await);
    }

    /// The send's messages counted one by one, shaped as GET /send/{id}'s
    /// `progress` (which reads the counts the send keeps).
    pub async fn recount(&self, send_id: &str) -> Value {
        use push_message::{MessageStatus as M, ReceiptStatus as R};
        let rows = push_message::Entity::find()
            .filter(push_message::Column::SendId.eq(send_id))
            .all(self.app.platform().db.read())
            .await
            .unwrap();
        let count = |f: &dyn Fn(&push_message::Model) -> bool| rows.iter().filter(|m| f(m)).count();
        json!({
            "pending": count(&|m| m.status == M::Pending),
            "queued": count(&|m| m.status == M::Batched),
            "sent": count(&|m| m.status == M::Sent),
            "failed": count(&|m| m.status == M::Error),
            "cancelled": count(&|m| m.status == M::Cancelled),
            "skipped": count(&|m| m.status == M::Skipped),
            "receipts_ok": count(&|m| m.receipt_status == Some(R::Ok)),
            "receipts_error": count(&|m| m.receipt_status == Some(R::Error)),
        })
    }

    /// How many send-batch jobs a worker has taken (and not yet ended).
    pub async fn batch_jobs_claimed(&self) -> u64 {
        use keel_platform::jobs::entity as job;
        use keel_platform::sea_orm::PaginatorTrait;
        job::Entity::find()
            .filter(job::Column::Kind.eq("svc.push.batch"))
            .filter(job::Column::LockedBy.is_not_null())
            .count(self.app.platform().db.read())
            .await
            .unwrap()
    }

    pub async fn all_devices(&self) -> Vec<push_device::Model> {
        use keel_platform::sea_orm::QueryOrder;
        push_device::Entity::find()
            .order_by_asc(push_device::Column::PushToken)
            .all(self.app.platform().db.read())
            .await
            .unwrap()
    }
}

/// Waits until `check` holds, for at most `within`.
pub async fn until<F, Fut>(within: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let ok = keel_testkit::eventually_async(within, || {
        let f = check();
        async move { f.await.then_some(()) }
    })
    .await;
    assert!(ok.is_some(), "timed out waiting for: {what}");
}
