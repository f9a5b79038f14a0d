//! Record ids shaped like the original document store's: 24 lower-case hex
//! characters (4 bytes of seconds since the epoch, then 8 random bytes), so
//! they sort by creation time. Each kind of record has its own type, parsed
//! at the edge: a value of these types is a well-formed id.

use rand::RngCore;

/// An id from a request that is not 24 hexadecimal characters.
#[derive(Debug, thiserror::Error)]
#[error("{field} must be a 24-character hexadecimal id")]
pub struct InvalidId {
    pub field: &'static str,
}

fn new_id() -> String {
    let secs = u32::try_from(chrono::Utc::now().timestamp()).unwrap_or(u32::MAX);
    let mut bytes = [0u8; 12];
    bytes[..4].copy_from_slice(&secs.to_be_bytes());
    rand::rng().fill_bytes(&mut bytes[4..]);
    hex::encode(bytes)
}

fn is_hex24(raw: &str) -> bool {
    raw.len() == 24 && raw.bytes().all(|b| b.is_ascii_hexdigit())
}

/// An id of this shape: platform's path id (24 hexadecimal characters,
/// kept lower-case), plus a new one for a record about to be created and
/// the refusal that names the field.
macro_rules! id_type {
    ($(#[$meta:meta])* $name:ident) => {
        keel_platform::path_id!($(#[$meta])* pub $name, is_hex24, str::to_ascii_lowercase);

        impl $name {
            /// A new id (for a record about to be created).
            pub fn generate() -> Self {
                Self::stored(new_id())
            }

            /// An id sent by a client as `field`.
            pub fn parse_as(field: &'static str, raw: &str) -> Result<Self, InvalidId> {
                Self::parse(raw).ok_or(InvalidId { field })
            }
        }
    };
}

id_type!(
    /// A user's id.
    UserId
);
id_type!(
    /// A weekly or yearly goal's id.
    GoalId
);
id_type!(
    /// A session's id.
    SessionId
);
id_type!(
    /// A passkey's id.
    PasskeyId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_24_hex_and_parse_back() {
        let a = GoalId::generate();
        assert_eq!(a.as_str().len(), 24);
        assert_eq!(GoalId::parse_as("x", a.as_str()).ok(), Some(a));
        assert!(GoalId::parse_as("x", "nothex-nothex-nothex-123").is_err());
        assert!(GoalId::parse_as("x", "abc").is_err());
        assert_eq!(
            SessionId::parse_as("x", "ABCDEF0123456789ABCDEF01")
                .map(SessionId::into_string)
                .ok(),
            Some("abcdef0123456789abcdef01".to_owned())
        );
    }
}
