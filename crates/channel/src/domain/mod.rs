//! What the channel does, without HTTP.

pub mod analytics;
pub mod channel;
pub mod emotes;
pub mod live;
pub mod logo;
pub mod owner;
pub mod panels;
pub mod playlist;
pub mod setup_code;
pub mod snapshot;
pub mod values;
pub mod webhook;
