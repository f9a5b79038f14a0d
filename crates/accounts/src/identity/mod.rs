//! Identity: access and refresh tokens, two-factor codes, devices and
//! locations of sessions, and the cache of live sessions.

pub mod cache;
pub mod device;
pub mod geo;
pub mod tokens;
pub mod webauthn;
