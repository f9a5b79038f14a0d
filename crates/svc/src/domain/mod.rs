//! What svc does, without HTTP: the host site (users, sessions, settings,
//! forms, submissions, audit), App Check, and push.

pub mod admin;
pub mod appcheck;
pub mod csv_out;
pub mod forms;
pub mod hooks;
pub mod params;
pub mod push;
pub mod settings;
pub mod site;
pub mod values;
