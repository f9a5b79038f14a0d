//! The pages' scripts and styles: every file a page names is served,
//! compressed as the client accepts, cached for a year, revalidated.

use keel_testkit::encoding::{ENCODINGS, fetch};

use crate::helpers::Channel;

/// The `/assets/...` URLs a page names.
fn asset_urls(html: &str) -> Vec<String> {
    html.split('"')
        .filter(|s| s.starts_with("/assets/"))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn every_asset_a_page_names_is_served_in_every_encoding_with_a_long_cache() {
    let ch = Channel::with_web(&[]).await;
    let setup = ch.page("/setup").await.text;
    let urls = asset_urls(&setup);
    assert_eq!(urls.len(), 2, "a stylesheet and a script: {urls:?}");
    for url in urls {
        let mut bodies = Vec::new();
        for enc in ENCODINGS {
            let d = fetch(ch.app.http.get(ch.web(&url)), enc).await;
            assert_eq!(d.status, 200, "{url} {enc}");
            assert_eq!(
                d.headers["cache-control"], "public, max-age=31536000, immutable",
                "{url}"
            );
            assert_eq!(d.headers["vary"], "accept-encoding");
            if enc != "identity" {
                assert_eq!(
                    d.encoding.as_deref(),
                    Some(enc),
                    "{url} comes {enc}-compressed"
                );
            }
            bodies.push(d.body);
        }
        assert!(
            bodies.windows(2).all(|w| w[0] == w[1]),
            "{url}: same bytes decoded"
        );
    }
}

#[tokio::test]
async fn an_asset_is_revalidated_by_its_etag_and_unknown_files_are_404_pages() {
    let ch = Channel::with_web(&[]).await;
    let setup = ch.page("/setup").await.text;
    let css = asset_urls(&setup)
        .into_iter()
        .find(|u| u.ends_with(".css"))
        .unwrap();
    let r = ch
        .app
        .http
        .get(ch.web(&css))
        .header("accept-encoding", "br")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-type"], "text/css; charset=utf-8");
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    let again = ch
        .app
        .http
        .get(ch.web(&css))
        .header("accept-encoding", "br")
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    let other = ch
        .app
        .http
        .get(ch.web(&css))
        .header("accept-encoding", "identity")
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(
        other.status(),
        200,
        "another representation has another tag"
    );
    for path in [
        "/assets/nope.js",
        &format!("{css}.br"),
        "/assets/manifest.json",
        "/nowhere",
    ] {
        let r = ch.app.http.get(ch.web(path)).send().await.unwrap();
        assert_eq!(r.status(), 404, "{path}");
        assert!(
            r.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/html")
        );
    }
    let licences = ch
        .app
        .http
        .get(ch.web("/assets/LICENSES.txt"))
        .send()
        .await
        .unwrap();
    assert_eq!(licences.status(), 200);
    assert!(licences.text().await.unwrap().contains("hls.js"));
}

#[tokio::test]
async fn pages_are_gzipped_when_large_never_brotli_and_the_same_page_whatever_is_accepted() {
    let ch = Channel::with_web(&[]).await;
    let mut bodies = Vec::new();
    for enc in ENCODINGS {
        let d = fetch(ch.app.http.get(ch.web("/setup")), enc).await;
        assert_eq!(d.status, 200);
        // A page is an answer made per request: gzip from 4 KiB, never
        // brotli (that is for the files compressed at build time).
        let large = d.body.len() >= usize::from(keel_platform::http::COMPRESS_FROM);
        let expected = (enc == "gzip" && large).then_some("gzip");
        assert_eq!(
            d.encoding.as_deref(),
            expected,
            "{enc}, {} bytes",
            d.body.len()
        );
        bodies.push(d.body);
    }
    assert!(bodies.windows(2).all(|w| w[0] == w[1]));
}
