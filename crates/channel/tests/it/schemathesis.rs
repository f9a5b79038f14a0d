//! The document says what the server enforces: schemathesis, driven by
//! `/openapi.json` alone, finds no request the server answers otherwise
//! than documented, as the signed-in owner of a provisioned channel, from
//! the channel's own origin.

use keel_testkit::Schemathesis;

use crate::helpers::{Channel, EMAIL, ORIGIN, PASSWORD};

/// Ends the run's session: run apart, after the rest, with its own.
const SIGN_OUT: &str = "sign_out";

#[tokio::test]
async fn schemathesis_finds_nothing_the_document_does_not_say() {
    let ch = Channel::start().await;
    ch.provisioned().await;
    let run = |cookie: String| {
        let session = cookie
            .split_once('=')
            .map_or(cookie.clone(), |(_, v)| v.to_owned());
        Schemathesis::new(ch.url("/openapi.json"), ch.url(""))
            .api_key("session", session)
            .header("Origin", ORIGIN)
    };
    let main = ch.cookie_header().expect("signed in");
    // The second session now: the main run's sign-ins exhaust the limit.
    assert_eq!(ch.sign_in(EMAIL, PASSWORD).await.status, 200);
    let leaving = ch.cookie_header().expect("signed in");
    run(main)
        .arg("--exclude-operation-id")
        .arg(SIGN_OUT)
        .passes()
        .await;
    run(leaving)
        .arg("--include-operation-id")
        .arg(SIGN_OUT)
        .passes()
        .await;
}
