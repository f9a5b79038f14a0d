//! Failure answers several routes share, documented once: each route lists
//! these by name in its `responses(...)` beside its own.

keel_platform::failures! {
    /// A body field is missing or of the wrong shape.
    pub InvalidField {
        400 => "Missing or invalid field (named in the error)",
    }

    /// The token names none of this user's devices.
    pub NoSuchDevice {
        404 => "No such device of this user",
    }
}
