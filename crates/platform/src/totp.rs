//! Two-factor codes, for every service that asks one (accounts' users,
//! the console's operators): RFC 6238 TOTP (SHA-1, 6 digits, 30 s steps, ±1 step),
//! each code accepted once; QR codes of the otpauth URL; backup codes.

use base64::Engine;
use rand::{Rng, RngCore};
use totp_rs::{Algorithm, Builder, Totp};

use crate::failure::Cause;

const STEP: u64 = 30;

pub fn new_secret() -> Vec<u8> {
    let mut s = vec![0u8; 20];
    rand::rng().fill_bytes(&mut s);
    s
}

fn totp(secret: &[u8], issuer: &str, account: &str) -> Result<Totp, Cause> {
    Builder::new()
        .with_algorithm(Algorithm::SHA1)
        .with_digits(6)
        .with_skew(1)
        .with_step_duration(STEP)
        .with_secret(secret.to_vec())
        .with_issuer(Some(issuer))
        .with_account_name(account)
        .build()
        .map_err(Cause::from)
}

/// The secret as base32 (what authenticator apps take).
pub fn base32(secret: &[u8]) -> String {
    base32::encode(base32::Alphabet::Rfc4648 { padding: false }, secret)
}

/// A secret from its base32 text (`None` if it is not base32).
pub fn from_base32(text: &str) -> Option<Vec<u8>> {
    base32::decode(base32::Alphabet::Rfc4648 { padding: false }, text)
}

pub fn otpauth_url(secret: &[u8], issuer: &str, account: &str) -> Result<String, Cause> {
    totp(secret, issuer, account)?.to_url().map_err(Cause::from)
}

/// The code for `unix_time` (used by tests and by verification).
pub fn code_at(secret: &[u8], unix_time: u64) -> Result<String, Cause> {
    Ok(totp(secret, "keel", "user")?
        .generate(unix_time)
        .to_string())
}

/// The time step `code` belongs to (now ±1), if it is later than
/// `last_step`: a code is accepted once.
pub fn matching_step(
    secret: &[u8],
    code: &str,
    now: u64,
    last_step: i64,
) -> Result<Option<i64>, Cause> {
    let code = code.trim();
    if code.len() != 6 || !code.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(None);
    }
    let t = totp(secret, "keel", "user")?;
    let current = now / STEP;
    let mut found = None;
    for step in [current.saturating_sub(1), current, current + 1] {
        let expected = t.generate(step * STEP).to_string();
        let step = i64::try_from(step).unwrap_or(i64::MAX);
        if crate::crypto::constant_time_eq(expected.as_bytes(), code.as_bytes()) && step > last_step
        {
            found = Some(step);
        }
    }
    Ok(found)
}

/// Ten 8-digit backup codes.
pub fn new_backup_codes() -> Vec<String> {
    let mut rng = rand::rng();
    (0..10)
        .map(|_| format!("{:08}", rng.random_range(0..100_000_000u32)))
        .collect()
}

/// A PNG of the QR code for `text`, as a `data:` URI.
pub fn qr_data_uri(text: &str) -> Result<String, Cause> {
    let code = qrcode::QrCode::new(text.as_bytes()).map_err(Cause::from)?;
    let modules = code.width();
    let (scale, quiet) = (6usize, 4usize);
    let side = (modules + 2 * quiet) * scale;
    let mut pixels = vec![255u8; side * side];
    for y in 0..modules {
        for x in 0..modules {
            if code[(x, y)] == qrcode::Color::Dark {
                for dy in 0..scale {
                    let row = (y + quiet) * scale + dy;
                    let start = row * side + (x + quiet) * scale;
                    pixels[start..start + scale].fill(0);
                }
            }
        }
    }
    let mut png = Vec::new();
    {
        let side = u32::try_from(side).map_err(Cause::from)?;
        let mut enc = png::Encoder::new(&mut png, side, side);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(Cause::from)?;
        writer.write_image_data(&pixels).map_err(Cause::from)?;
    }
    Ok(format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(png)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc6238_sha1_vector() {
        // RFC 6238 appendix B, SHA-1, T = 59 s, last 6 digits of 94287082.
        let secret = b"12345678901234567890";
        assert_eq!(code_at(secret, 59).ok().as_deref(), Some("287082"));
    }

    #[test]
    fn a_code_matches_its_step_and_its_neighbours_once() {
        let secret = new_secret();
        let now = 1_000_000_000u64;
        let code = code_at(&secret, now).unwrap_or_default();
        let step = i64::try_from(now / 30).unwrap_or(0);
        assert_eq!(
            matching_step(&secret, &code, now + 30, 0).ok().flatten(),
            Some(step)
        );
        assert_eq!(
            matching_step(&secret, &code, now, step).ok().flatten(),
            None
        );
        assert_eq!(
            matching_step(&secret, &code, now + 90, 0).ok().flatten(),
            None
        );
        assert_eq!(matching_step(&secret, "12345", now, 0).ok().flatten(), None);
    }

    #[test]
    fn base32_matches_the_rfc_4648_example() {
        assert_eq!(base32(b"foobar"), "MZXW6YTBOI");
    }

    #[test]
    fn backup_codes_are_ten_eight_digit_numbers() {
        let codes = new_backup_codes();
        assert_eq!(codes.len(), 10);
        assert!(
            codes
                .iter()
                .all(|c| c.len() == 8 && c.bytes().all(|b| b.is_ascii_digit()))
        );
    }

    #[test]
    fn the_qr_code_is_a_png_data_uri() {
        let uri = qr_data_uri("otpauth://totp/keel:ada?secret=ABC").unwrap_or_default();
        let b64 = uri
            .strip_prefix("data:image/png;base64,")
            .unwrap_or_default();
        let png = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap_or_default();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }
}
