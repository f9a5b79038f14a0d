//! Ids that travel in paths, parsed at the edge into their own types: a
//! handler that holds a `SendId` holds a well-formed one, and a malformed
//! id is answered as the id of nothing (the service's own not-found)
//! before anything is looked up.

/// Declares an id newtype checked by `$valid: fn(&str) -> bool` (and kept
/// as `$keep: fn(&str) -> String` makes it, as sent by default):
/// `parse` (a client's, `None` when malformed), `stored` (the
/// database's), `as_str`, `into_string`, `Display`.
#[macro_export]
macro_rules! path_id {
    ($(#[$meta:meta])* $vis:vis $name:ident, $valid:expr) => {
        $crate::path_id!($(#[$meta])* $vis $name, $valid, str::to_owned);
    };
    ($(#[$meta:meta])* $vis:vis $name:ident, $valid:expr, $keep:expr) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        $vis struct $name(String);

        impl $name {
            /// An id sent by a client; `None` when it is malformed.
            pub fn parse(raw: &str) -> Option<Self> {
                let valid: fn(&str) -> bool = $valid;
                let keep: fn(&str) -> String = $keep;
                valid(raw).then(|| Self(keep(raw)))
            }

            /// An id read from the database.
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

/// A UUID in its hyphenated text form, as keel writes them (any version).
pub fn is_uuid(raw: &str) -> bool {
    raw.len() == 36 && uuid::Uuid::try_parse(raw).is_ok()
}
