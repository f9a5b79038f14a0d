//! channel-web's pages over HTTP: redirects until set-up and for the
//! owner's pages, what each page says, and its headers.

use serde_json::json;

use crate::helpers::Channel;

fn location(r: &crate::helpers::Resp) -> &str {
    r.headers
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

#[tokio::test]
async fn until_set_up_every_page_sends_visitors_to_the_wizard() {
    let ch = Channel::with_web(&[]).await;
    for path in ["/", "/login", "/dashboard"] {
        let r = ch.page(path).await;
        assert_eq!((r.status, location(&r)), (303, "/setup"), "{path}");
    }
    let r = ch.page("/setup").await;
    assert_eq!(r.status, 200);
    assert!(r.text.contains(r#"id="step-account""#), "{}", r.text);
    assert!(r.text.contains("GetStream is configured"), "{}", r.text);
    assert_eq!(r.headers["cache-control"], "no-store");
    assert!(r.text.contains(r#"<meta name="robots" content="noindex">"#));
}

#[tokio::test]
async fn the_wizard_names_the_provider_variables_that_are_missing() {
    let ch = Channel::with_web(&[
        ("KEEL_STREAM_API_KEY", String::new()),
        ("KEEL_STREAM_API_SECRET", String::new()),
    ])
    .await;
    let r = ch.page("/setup").await;
    assert!(
        r.text.contains("<code>KEEL_STREAM_API_KEY</code>"),
        "{}",
        r.text
    );
    assert!(r.text.contains("<code>KEEL_STREAM_API_SECRET</code>"));
}

#[tokio::test]
async fn after_set_up_the_wizard_sends_to_the_dashboard_and_the_dashboard_wants_a_session() {
    let ch = Channel::with_web(&[]).await;
    ch.set_up().await;
    let r = ch.page("/setup").await;
    assert_eq!((r.status, location(&r)), (303, "/dashboard"));
    let r = ch.page("/login").await;
    assert_eq!(
        (r.status, location(&r)),
        (303, "/dashboard"),
        "signed in already"
    );
    ch.forget_cookie();
    let r = ch.page("/dashboard").await;
    assert_eq!((r.status, location(&r)), (303, "/login"));
    let r = ch.page("/login").await;
    assert_eq!(r.status, 200);
    assert!(r.text.contains(r#"id="login-form""#));
    let forged = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(ch.web("/dashboard"))
        .header("cookie", "channel_session=forged-token")
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 303, "a forged session is no session");
}

#[tokio::test]
async fn the_channel_page_shows_the_channel_escaped_with_link_preview_tags() {
    let ch = Channel::with_web(&[]).await;
    ch.set_up().await;
    ch.mutate(
        "channel.update",
        json!({"title": "Ada <script>alert(1)</script>", "description": "Lo-fi & code </script><b>"}),
    )
    .await;
    ch.mutate(
        "panels.create",
        json!({"title": "Schedule", "body": "Weeknights"}),
    )
    .await;
    ch.mutate(
        "panels.create",
        json!({"title": "Gear", "body": "A laptop"}),
    )
    .await;
    ch.forget_cookie();
    let r = crate::helpers::finish(ch.app.http.get(ch.web("/")).send().await.unwrap()).await;
    assert_eq!(r.status, 200);
    let html = &r.text;
    assert!(
        r.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    assert_eq!(r.headers["cache-control"], "no-cache");
    assert!(!html.contains("<script>alert(1)"), "the title is escaped");
    assert!(html.contains("Ada &lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(
        html.contains(
            r#"<meta property="og:title" content="Ada &lt;script&gt;alert(1)&lt;/script&gt;">"#
        ),
        "{html}"
    );
    assert!(html.contains(
        r#"<meta property="og:description" content="Lo-fi &amp; code &lt;/script&gt;&lt;b&gt;">"#
    ));
    assert!(html.contains(r#"<meta name="twitter:card" content="summary">"#));
    assert!(html.contains(r#"data-live="false""#));
    let schedule = html.find("<h3>Schedule</h3>").unwrap();
    let gear = html.find("<h3>Gear</h3>").unwrap();
    assert!(schedule < gear, "panels in order");
    // The embedded state cannot end its script element early.
    let state = html.split(r#"id="channel-state">"#).nth(1).unwrap();
    let state = state.split("</script>").next().unwrap();
    assert!(!state.contains('<'), "{state}");
    let csp = r.headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("script-src 'self'") && csp.contains(&ch.stream.url()),
        "{csp}"
    );
    assert_eq!(r.headers["x-content-type-options"], "nosniff");
}

#[tokio::test]
async fn the_channel_page_is_live_from_the_server_with_the_viewer_count() {
    let ch = Channel::with_web(&[]).await;
    ch.provisioned().await;
    ch.stream.set_viewers(&[("viewer", 2)], 1);
    ch.event("call.live_started", json!({})).await;
    ch.event(
        "call.session_participant_count_updated",
        json!({"participants_count_by_role": {"viewer": 2}, "anonymous_participant_count": 1}),
    )
    .await;
    let live = keel_testkit::eventually_async(std::time::Duration::from_secs(5), || async {
        let r = ch.page("/").await;
        r.text.contains(r#"data-live="true""#).then_some(r)
    })
    .await
    .expect("the page turns live");
    assert!(live.text.contains("3 viewers"), "{}", live.text);
    assert!(live.text.contains("(live)</title>"));
}

#[tokio::test]
async fn the_dashboard_shows_the_ingest_url_but_never_the_stream_key() {
    let ch = Channel::with_web(&[]).await;
    let p = ch.provisioned().await;
    let r = ch.page("/dashboard").await;
    assert_eq!(r.status, 200);
    assert!(r.text.contains(p["rtmpsUrl"].as_str().unwrap()));
    let key = ch.query("stream.credentials", None).await.data()["streamKey"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!r.text.contains(&key), "the key is only revealed on demand");
    assert_eq!(r.headers["cache-control"], "no-store");
}

#[tokio::test]
async fn a_logo_becomes_the_pages_icon_and_preview_image() {
    let ch = Channel::with_web(&[]).await;
    ch.set_up().await;
    let png = {
        let img = image::RgbImage::from_pixel(32, 32, image::Rgb([10, 20, 30]));
        let mut out = std::io::Cursor::new(Vec::new());
        img.write_to(&mut out, image::ImageFormat::Png).unwrap();
        out.into_inner()
    };
    let part = reqwest::multipart::Part::bytes(png).file_name("l.png");
    let r = ch
        .app
        .http
        .post(ch.web("/api/upload/logo"))
        .header("origin", crate::helpers::ORIGIN)
        .header("cookie", ch.cookie_header().unwrap())
        .multipart(reqwest::multipart::Form::new().part("file", part))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "uploaded through the web's /api");
    let url: serde_json::Value = r.json().await.unwrap();
    let logo = url["logoUrl"].as_str().unwrap();
    let page = ch.page("/").await;
    assert!(
        page.text.contains(&format!(
            r#"<meta property="og:image" content="{}{logo}">"#,
            crate::helpers::ORIGIN
        )),
        "{}",
        page.text
    );
    assert!(
        page.text
            .contains(&format!(r#"<link rel="icon" href="{logo}">"#))
    );
    let img = ch.app.http.get(ch.web(logo)).send().await.unwrap();
    assert_eq!(img.status(), 200);
    assert_eq!(img.headers()["content-type"], "image/png");
}
