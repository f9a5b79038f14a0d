//! Identity: tokens, passwords, two-factor codes, devices and locations,
//! and the extractor that authenticates a request.

pub mod cache;
pub mod device;
pub mod extract;
pub mod geo;
pub mod limits;
pub mod tokens;
pub mod totp;
