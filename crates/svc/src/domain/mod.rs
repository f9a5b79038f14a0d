//! What svc does, without HTTP: the host site (users, sessions, settings,
//! forms, submissions, audit), App Check, and push.

pub mod admin;
pub mod admins;
pub mod appcheck;
pub mod forms;
pub mod hooks;
pub mod ids;
pub mod params;
pub mod push;
pub mod settings;
mod settings_view;
pub mod site;
pub mod values;
