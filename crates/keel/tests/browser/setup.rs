use crate::harness::{Browser, EMAIL, PASSWORD, Site};

#[tokio::test]
async fn the_wizard_creates_the_owner_names_the_channel_provisions_and_cannot_be_used_again() {
    let site = Site::start().await;
    let b = Browser::start(1280, 900).await;
    b.goto(&site.page("/")).await;
    b.wait_path("/setup").await;
    let (code, link) = site.setup_code().await;
    // A wrong code is refused when the account is created; nothing is.
    b.fill("#code", "WRONG-CODE-0000").await;
    b.fill("#email", EMAIL).await;
    b.fill("#password", "short").await;
    b.fill("#confirm", "short").await;
    b.click("#step-account button[type=submit]").await;
    b.wait_js(
        "return document.querySelector('#step-channel').hidden && !document.querySelector('#password').validity.valid",
        "a short password keeps the wizard on its first step",
    )
    .await;
    b.fill("#password", PASSWORD).await;
    b.fill("#confirm", "another password").await;
    b.click("#step-account button[type=submit]").await;
    b.wait_text("#status", "do not match").await;
    b.fill("#password", PASSWORD).await;
    b.fill("#confirm", PASSWORD).await;
    b.click("#step-account button[type=submit]").await;
    b.fill("#title", "Night Owl Radio").await;
    b.fill("#description", "Lo-fi beats and late-night coding.")
        .await;
    b.click("#step-channel button[type=submit]").await;
    b.wait_text("#status", "set-up code is wrong").await;
    b.wait_js(
        "return !document.querySelector('#step-account').hidden",
        "a wrong code takes the wizard back to the code",
    )
    .await;
    // The link keel printed fills the code in.
    b.goto(&link).await;
    b.wait_js(
        &format!("return document.querySelector('#code').value === '{code}'"),
        "the printed link fills in the set-up code",
    )
    .await;
    b.fill("#email", EMAIL).await;
    b.fill("#password", PASSWORD).await;
    b.fill("#confirm", PASSWORD).await;
    b.click("#step-account button[type=submit]").await;
    b.fill("#title", "Night Owl Radio").await;
    b.click("#step-channel button[type=submit]").await;
    b.wait_text("#step-provider", "GetStream is configured")
        .await;
    b.click("#provision").await;
    b.wait_text("#rtmps-url", "rtmps://").await;
    b.click("#step-provider a.button").await;
    b.wait_path("/dashboard").await;
    b.wait_text("#rtmps-url", "rtmps://").await;
    b.goto(&site.page("/setup")).await;
    b.wait_path("/dashboard").await;
    b.goto(&site.page("/")).await;
    b.wait_text("h1", "Night Owl Radio").await;
    b.close().await;
}
