//! Erasure that reaches the disk: after `DELETE /account` nothing of the
//! user is in any file of the data directory (SQLite's database, its
//! write-ahead log and shared memory, the keys), and no Redis key names
//! them (the rate limits name their subjects by a keyed hash; the one key
//! left is the revocation epoch, by id).

use std::time::Duration;

use keel_testkit::scan::{every_file, files_holding, redis_keys};
use keel_testkit::{FakeSmtp, eventually};
use reqwest::Method;

use crate::helpers::{Api, User};

const NAME: &str = "erasable_q7z";
const PENDING: &str = "pending-q7z@example.org";
const GOAL: &str = "goal-q7z-private";

/// A user with a pending new address and a goal, known to Redis by a
/// failed sign-in by name.
async fn someone(api: &Api) -> User {
    let user = api.register(NAME).await;
    let r = api
        .post(
            "/account/change-email",
            Some(&user.token),
            &[("email", PENDING)],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = api
        .post("/goals/weekly", Some(&user.token), &[("title", GOAL)])
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(api.login(NAME, "not the password", None).await.status, 401);
    user
}

async fn delete(api: &Api, user: &User) {
    let r = api
        .send(
            Method::DELETE,
            "/account",
            Some(&user.token),
            Some(&[("password", &user.password)]),
        )
        .await;
    assert_eq!((r.status, r.code()), (200, "ACCOUNT_DELETED"), "{}", r.text);
}

fn needles(user: &User) -> [String; 5] {
    [
        NAME.to_owned(),
        format!("{NAME}@example.com"),
        PENDING.to_owned(),
        GOAL.to_owned(),
        user.id.clone(),
    ]
}

#[tokio::test]
async fn a_deleted_accounts_bytes_are_in_no_file_of_the_data_directory() {
    // Mail leaves through SMTP, so the data directory holds only what keel
    // stores (its development mailbox would hold the last mail's copy).
    let smtp = FakeSmtp::start().await;
    let api = Api::with(&[("KEEL_SMTP_URL", &smtp.url())]).await;
    if api.app.is_postgres() {
        // PostgreSQL's files are the server's: docs/operations.md says what
        // VACUUM does with dead rows and how erasure is proved there.
        return;
    }
    let user = someone(&api).await;
    let dir = api.app.data_dir().to_owned();
    let before = every_file(&dir);
    for needle in needles(&user) {
        assert!(
            !files_holding(&before, &needle).is_empty(),
            "the scan finds {needle} before the deletion"
        );
    }
    delete(&api, &user).await;
    // The last mail (to the old address) goes out, then its row is erased too.
    let sent = eventually(Duration::from_secs(10), || {
        smtp.messages()
            .into_iter()
            .find(|m| m.data.contains("was deleted"))
    })
    .await;
    assert!(sent.is_some(), "no last mail: {:?}", smtp.messages());
    api.app.jobs_drained().await;
    let erased = eventually(Duration::from_secs(10), || {
        let files = every_file(&dir);
        needles(&user)
            .iter()
            .all(|n| files_holding(&files, n).is_empty())
            .then_some(())
    })
    .await;
    let files = every_file(&dir);
    let left: Vec<_> = needles(&user)
        .iter()
        .map(|n| (n.clone(), files_holding(&files, n)))
        .filter(|(_, f)| !f.is_empty())
        .collect();
    assert!(erased.is_some(), "still on disk: {left:?}");
    // Keel goes on writing and reading after the log was cut.
    let bob = api.register("bob_after").await;
    assert_eq!(api.me(&bob.token).await["username"], "bob_after");
}

#[tokio::test]
async fn no_redis_key_names_a_deleted_user_but_the_revocation_epoch_by_id() {
    let mut env: Vec<(&str, String)> = keel_testkit::redis_env().into();
    env.push(("KEEL_ACCOUNTS_SESSION_CACHE_SECS", "30".into()));
    let prefix = env[1].1.clone();
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let api = Api::with(&pairs).await;
    let user = someone(&api).await;
    // Rate limits keyed on the login name and the address exist, by hash.
    let keys = redis_keys(&prefix).await;
    assert!(
        keys.iter()
            .any(|k| k.contains("rl:guard:accounts:login:name:")),
        "{keys:?}"
    );
    delete(&api, &user).await;
    api.app.jobs_drained().await;
    let keys = redis_keys(&prefix).await;
    for needle in [NAME, "example.com", PENDING, "127.0.0.1"] {
        let found: Vec<_> = keys.iter().filter(|k| k.contains(needle)).collect();
        assert!(found.is_empty(), "{needle} in {found:?}");
    }
    let by_id: Vec<_> = keys.iter().filter(|k| k.contains(&user.id)).collect();
    assert_eq!(
        by_id,
        [&format!("{prefix}accounts:user-epoch:{}", user.id)],
        "only the revocation epoch names the user, by id"
    );
}
