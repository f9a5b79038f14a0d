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

macro_rules! id_type {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub struct $name(String);

        impl $name {
            /// A new id (for a record about to be created).
            pub fn generate() -> Self {
                Self(new_id())
            }

            /// An id sent by a client, as the path's `field`.
            pub fn parse(field: &'static str, raw: &str) -> Result<Self, InvalidId> {
                if raw.len() == 24 && raw.bytes().all(|b| b.is_ascii_hexdigit()) {
                    Ok(Self(raw.to_ascii_lowercase()))
                } else {
                    Err(InvalidId { field })
                }
            }

            /// An id read from the database or a token keel signed.
            pub fn stored(id: impl Into<String>) -> Self {
                Self(id.into())
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
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
        assert_eq!(GoalId::parse("x", a.as_str()).ok(), Some(a));
        assert!(GoalId::parse("x", "nothex-nothex-nothex-123").is_err());
        assert!(GoalId::parse("x", "abc").is_err());
        assert_eq!(
            SessionId::parse("x", "ABCDEF0123456789ABCDEF01")
                .map(SessionId::into_string)
                .ok(),
            Some("abcdef0123456789abcdef01".to_owned())
        );
    }
}
