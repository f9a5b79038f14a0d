//! The logo: uploaded by content, re-encoded, served content-addressed.

use std::io::Cursor;

use reqwest::multipart::{Form, Part};

use crate::helpers::{Channel, ORIGIN, Resp, finish};

fn image(w: u32, h: u32, format: image::ImageFormat) -> Vec<u8> {
    let img = image::RgbImage::from_pixel(w, h, image::Rgb([40, 120, 200]));
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut Cursor::new(&mut out), format)
        .unwrap();
    out
}

pub async fn upload(ch: &Channel, bytes: Vec<u8>, name: &str, mime: &str) -> Resp {
    let part = Part::bytes(bytes)
        .file_name(name.to_owned())
        .mime_str(mime)
        .unwrap();
    let mut req = ch
        .app
        .http
        .post(ch.url("/api/upload/logo"))
        .header("origin", ORIGIN)
        .multipart(Form::new().part("file", part));
    if let Some(c) = ch.cookie_header() {
        req = req.header("cookie", c);
    }
    finish(req.send().await.unwrap()).await
}

/// Uploads a 64×64 PNG; its URL.
pub async fn upload_png(ch: &Channel) -> String {
    let r = upload(
        ch,
        image(64, 64, image::ImageFormat::Png),
        "logo.png",
        "image/png",
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["logoUrl"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn an_upload_is_re_encoded_and_served_with_a_long_lived_content_hashed_url() {
    let ch = Channel::start().await;
    ch.set_up().await;
    // A JPEG named .png and declared as a GIF: judged by its content.
    let r = upload(
        &ch,
        image(1200, 600, image::ImageFormat::Jpeg),
        "logo.png",
        "image/gif",
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (r.body["width"].as_u64(), r.body["height"].as_u64()),
        (Some(512), Some(256))
    );
    let url = r.body["logoUrl"].as_str().unwrap().to_owned();
    assert!(
        url.starts_with("/api/logo/") && url.ends_with(".png"),
        "{url}"
    );
    assert_eq!(
        ch.query("channel.getInfo", None).await.data()["logoUrl"],
        url.as_str()
    );
    let got = ch.app.http.get(ch.url(&url)).send().await.unwrap();
    assert_eq!(got.status(), 200);
    assert_eq!(got.headers()["content-type"], "image/png");
    assert!(
        got.headers()["cache-control"]
            .to_str()
            .unwrap()
            .contains("immutable")
    );
    let etag = got.headers()["etag"].to_str().unwrap().to_owned();
    let bytes = got.bytes().await.unwrap();
    assert!(bytes.starts_with(b"\x89PNG"));
    let again = ch
        .app
        .http
        .get(ch.url(&url))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    let gone = ch
        .app
        .http
        .get(ch.url(&format!("/api/logo/{}.png", "0".repeat(64))))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
}

#[tokio::test]
async fn wrong_types_large_files_and_non_images_are_refused() {
    let ch = Channel::start().await;
    ch.set_up().await;
    let bmp = image(8, 8, image::ImageFormat::Bmp);
    let r = upload(&ch, bmp, "logo.bmp", "image/bmp").await;
    assert_eq!(
        (r.status, r.code()),
        (415, "UNSUPPORTED_MEDIA_TYPE"),
        "{}",
        r.text
    );
    let r = upload(
        &ch,
        b"just text, not a picture".to_vec(),
        "logo.png",
        "image/png",
    )
    .await;
    assert_eq!((r.status, r.code()), (400, "BAD_REQUEST"));
    let mut huge = image(8, 8, image::ImageFormat::Png);
    huge.resize(3 * 1024 * 1024, 0);
    let r = upload(&ch, huge, "logo.png", "image/png").await;
    assert_eq!(
        (r.status, r.code()),
        (413, "PAYLOAD_TOO_LARGE"),
        "{}",
        r.text
    );
    let bomb = image(5000, 1, image::ImageFormat::Png);
    let r = upload(&ch, bomb, "logo.png", "image/png").await;
    assert_eq!((r.status, r.code()), (400, "BAD_REQUEST"), "{}", r.text);
    assert_eq!(
        ch.query("channel.getInfo", None).await.data()["logoUrl"],
        serde_json::Value::Null
    );
}

#[tokio::test]
async fn only_the_signed_in_owner_uploads_and_only_from_the_channels_pages() {
    let ch = Channel::start().await;
    let r = upload(
        &ch,
        image(8, 8, image::ImageFormat::Png),
        "logo.png",
        "image/png",
    )
    .await;
    assert_eq!((r.status, r.code()), (401, "UNAUTHORIZED"));
    ch.set_up().await;
    let part = Part::bytes(image(8, 8, image::ImageFormat::Png))
        .file_name("l.png")
        .mime_str("image/png")
        .unwrap();
    let r = finish(
        ch.app
            .http
            .post(ch.url("/api/upload/logo"))
            .header("origin", "https://evil.example")
            .header("cookie", ch.cookie_header().unwrap())
            .multipart(Form::new().part("file", part))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((r.status, r.code()), (403, "FORBIDDEN"));
}
