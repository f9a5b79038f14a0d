//! Record ids shaped like the original document store's: 24 lower-case hex
//! characters (4 bytes of seconds since the epoch, then 8 random bytes), so
//! they sort by creation time.

use rand::RngCore;

use crate::error::{self, Error};

pub fn new_id() -> String {
    let secs = u32::try_from(chrono::Utc::now().timestamp()).unwrap_or(u32::MAX);
    let mut bytes = [0u8; 12];
    bytes[..4].copy_from_slice(&secs.to_be_bytes());
    rand::rng().fill_bytes(&mut bytes[4..]);
    hex::encode(bytes)
}

/// Checks a path id; anything but 24 hex characters is a 400 naming `field`.
pub fn parse_id(field: &str, raw: &str) -> Result<String, Error> {
    if raw.len() == 24 && raw.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(raw.to_ascii_lowercase())
    } else {
        Err(error::invalid_id(field))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_24_hex_and_sort_by_time() {
        let a = new_id();
        assert_eq!(a.len(), 24);
        assert!(parse_id("x", &a).is_ok());
        assert!(parse_id("x", "nothex-nothex-nothex-123").is_err());
        assert!(parse_id("x", "abc").is_err());
    }
}
