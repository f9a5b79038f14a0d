//! Browser tests of channel-web: the real binary, Debian's Chromium.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod chromium;
mod harness;

mod api_docs;
mod channel_page;
mod console;
mod dashboard;
mod passkeys;
mod screenshots;
mod setup;
mod svc_console;
