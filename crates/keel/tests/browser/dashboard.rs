use crate::harness::{Browser, EMAIL, PASSWORD, Site, artifacts};

async fn signed_in(site: &Site) -> Browser {
    let b = Browser::start(1280, 1000).await;
    b.goto(&site.page("/dashboard")).await;
    b.wait_path("/login").await;
    b.fill("#email", EMAIL).await;
    b.fill("#password", PASSWORD).await;
    b.click("#login-form button[type=submit]").await;
    b.wait_path("/dashboard").await;
    b
}

#[tokio::test]
async fn the_owner_signs_in_with_the_right_password_only_and_signs_out() {
    let site = Site::start().await;
    site.set_up().await;
    let b = Browser::start(1280, 900).await;
    b.goto(&site.page("/dashboard")).await;
    b.wait_path("/login").await;
    b.fill("#email", EMAIL).await;
    b.fill("#password", "not the password").await;
    b.click("#login-form button[type=submit]").await;
    b.wait_text("#status", "Wrong email or password").await;
    assert_eq!(b.path().await, "/login");
    b.fill("#password", PASSWORD).await;
    b.click("#login-form button[type=submit]").await;
    b.wait_path("/dashboard").await;
    b.goto(&site.page("/login")).await;
    b.wait_path("/dashboard").await;
    b.click("#sign-out").await;
    b.wait_path("/login").await;
    b.goto(&site.page("/dashboard")).await;
    b.wait_path("/login").await;
    b.close().await;
}

#[tokio::test]
async fn the_owner_provisions_sees_the_key_only_when_revealed_and_goes_live_and_ends() {
    let site = Site::start().await;
    site.set_up_owner().await;
    let b = signed_in(&site).await;
    b.wait_js(
        "return !document.querySelector('#not-provisioned').hidden",
        "not provisioned yet",
    )
    .await;
    b.click("#provision").await;
    b.wait_text("#rtmps-url", "rtmps://").await;
    b.wait_text("#status", "Streaming is set up").await;
    assert!(b.text("#stream-key").await.starts_with('•'));
    b.click("#reveal-key").await;
    b.wait_js(
        "return document.querySelector('#stream-key').innerText.split('.').length === 3",
        "the revealed key is the broadcaster's token",
    )
    .await;
    assert_eq!(
        b.js("return document.querySelector('#reveal-key').getAttribute('aria-pressed')")
            .await,
        "true"
    );
    b.click("#reveal-key").await;
    b.wait_js(
        "return document.querySelector('#stream-key').innerText.startsWith('•')",
        "hidden again",
    )
    .await;
    b.close().await;
}

#[tokio::test]
async fn panels_are_added_reordered_and_shown_in_that_order_on_the_channel_page() {
    let site = Site::start().await;
    site.set_up().await;
    let b = signed_in(&site).await;
    for (title, body) in [("Schedule", "Weeknights at 9"), ("Gear", "A tired laptop")] {
        b.fill("#n-title", title).await;
        b.fill("#n-body", body).await;
        b.click("#panel-form button[type=submit]").await;
        b.wait_text("#panel-list", title).await;
    }
    let order = "return [...document.querySelectorAll('#panel-list .panel-title')].map(e => e.innerText).join(',')";
    assert_eq!(b.js(order).await, "Schedule,Gear");
    b.click("#panel-list li:first-child button.down").await;
    b.wait_js(
        &format!("return (() => {{ {order} }})() === 'Gear,Schedule'"),
        "the panels were swapped",
    )
    .await;
    b.client.refresh().await.expect("reload");
    b.wait_js(
        &format!("return (() => {{ {order} }})() === 'Gear,Schedule'"),
        "the order was kept",
    )
    .await;
    b.goto(&site.page("/")).await;
    b.wait_js(
        "return [...document.querySelectorAll('.panels h3')].map(e => e.innerText).join(',') === 'Gear,Schedule'",
        "the channel page shows the panels in order",
    )
    .await;
    b.close().await;
}

/// A 64×64 PNG: a purple square.
fn png() -> Vec<u8> {
    let img = image::RgbImage::from_pixel(64, 64, image::Rgb([109, 40, 217]));
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png)
        .expect("encode a PNG");
    out.into_inner()
}

#[tokio::test]
async fn an_uploaded_logo_is_previewed_and_appears_on_the_channel_page() {
    let site = Site::start().await;
    site.set_up().await;
    let b = signed_in(&site).await;
    let file = artifacts().join(format!("logo-{}.png", std::process::id()));
    std::fs::write(&file, png()).expect("write the logo");
    let input = b
        .client
        .find(fantoccini::Locator::Css("#logo-file"))
        .await
        .expect("the file input");
    input
        .send_keys(&file.display().to_string())
        .await
        .expect("choose the file");
    b.wait_js(
        "return !document.querySelector('#logo-preview').hidden",
        "a preview",
    )
    .await;
    b.click("#logo-form button[type=submit]").await;
    b.wait_text("#status", "Logo uploaded").await;
    b.goto(&site.page("/")).await;
    b.wait_js(
        "const i = document.querySelector('img.site-logo'); return !!i && i.complete && i.naturalWidth > 0 && i.src.includes('/api/logo/')",
        "the channel page shows the logo",
    )
    .await;
    let _ = std::fs::remove_file(&file);
    b.close().await;
}
