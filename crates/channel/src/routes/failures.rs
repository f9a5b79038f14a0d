//! Failure answers several routes share, documented once: each route lists
//! these by name in its `responses(...)` beside its own.

keel_platform::failures! {
    /// A mutation sent from another site (its Origin or Sec-Fetch-Site).
    pub CrossSite {
        403 => "FORBIDDEN: cross-site",
    }

    /// An owner's mutation without the owner.
    pub NotOwner {
        401 => "UNAUTHORIZED: not signed in",
        403 => "FORBIDDEN: cross-site",
    }
}
