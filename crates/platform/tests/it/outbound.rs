use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use keel_platform::config::OutboundConfig;
use keel_platform::outbound::HttpClient;

/// Answers the statuses in `script` in turn, then 200.
async fn scripted(script: &'static [u16]) -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let app = Router::new()
        .route(
            "/",
            get(
                |State((hits, script)): State<(Arc<AtomicUsize>, &'static [u16])>| async move {
                    let i = hits.fetch_add(1, Ordering::SeqCst);
                    let code = script.get(i).copied().unwrap_or(200);
                    (StatusCode::from_u16(code).unwrap(), format!("answer {i}"))
                },
            ),
        )
        .with_state((hits.clone(), script));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, hits)
}

fn client(retries: usize) -> HttpClient {
    HttpClient::new(&OutboundConfig {
        timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(1),
        retries,
        jwks_refetch_cooldown: Duration::ZERO,
    })
    .unwrap()
}

#[tokio::test]
async fn an_idempotent_call_is_retried_on_503_and_429_until_it_succeeds() {
    let (url, hits) = scripted(&[503, 429]).await;
    let c = client(3);
    let resp = c.send_idempotent(|| c.client().get(&url)).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(hits.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_400_is_never_retried() {
    let (url, hits) = scripted(&[400]).await;
    let c = client(3);
    let resp = c.send_idempotent(|| c.client().get(&url)).await.unwrap();
    assert_eq!(resp.status(), 400);
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn after_the_last_retry_the_last_answer_is_returned() {
    let (url, hits) = scripted(&[500, 500, 500, 500]).await;
    let c = client(2);
    let resp = c.send_idempotent(|| c.client().get(&url)).await.unwrap();
    assert_eq!(resp.status(), 500);
    assert_eq!(hits.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_reported() {
    // A port nothing listens on. (Not a port freed just now: another test
    // running at the same time may be handed it and answer.)
    let url = "http://127.0.0.1:1/hooks/a-secret-token?api_key=another".to_owned();
    let c = client(2);
    let started = std::time::Instant::now();
    let err = c
        .send_idempotent(|| c.client().get(&url))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("request to 127.0.0.1:1 failed"), "{text}");
    assert!(
        !text.contains("secret") && !text.contains("api_key"),
        "{text}"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(200),
        "it backed off before giving up"
    );
}
