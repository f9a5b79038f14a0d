//! Reading responses as clients that accept compression do: ask for an
//! encoding, read the body to its very end (a body cut off by the server is
//! a failure, not a short answer), and decode it.

use std::io::Read;

/// What browsers, `curl --compressed` and HTTP libraries ask for, and a
/// client that asks for nothing.
pub const ENCODINGS: [&str; 3] = ["gzip", "br", "identity"];

/// A response read to its end, its body decoded.
#[derive(Debug)]
pub struct Decoded {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    /// `Content-Encoding` as sent (`None` for identity).
    pub encoding: Option<String>,
    pub body: Vec<u8>,
}

impl Decoded {
    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("a UTF-8 body")
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

/// Sends `req` accepting `encoding` only, and decodes what comes back. Fails
/// the test when the body is cut off or encoded otherwise than asked.
pub async fn fetch(req: reqwest::RequestBuilder, encoding: &str) -> Decoded {
    let resp = req
        .header("accept-encoding", encoding)
        .send()
        .await
        .expect("send the request");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let raw = resp
        .bytes()
        .await
        .unwrap_or_else(|e| panic!("the body ({encoding}) was cut off: {e}"));
    let sent = headers
        .get("content-encoding")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = match sent.as_deref() {
        None => raw.to_vec(),
        Some(e) if e != encoding => panic!("asked for {encoding}, got {e}"),
        Some("gzip") => {
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(&raw[..])
                .read_to_end(&mut out)
                .expect("a complete gzip stream");
            out
        }
        Some("br") => {
            let mut out = Vec::new();
            brotli::Decompressor::new(&raw[..], 4096)
                .read_to_end(&mut out)
                .expect("a complete brotli stream");
            out
        }
        Some(other) => panic!("unexpected content-encoding {other}"),
    };
    Decoded {
        status,
        headers,
        encoding: sent,
        body,
    }
}
