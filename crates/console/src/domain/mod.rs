//! What the console does, apart from HTTP.

pub mod operators;
pub mod quotebot;
pub mod sessions;
pub mod sign_in;
