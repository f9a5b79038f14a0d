//! The accounts jobs, one per file: the weekly goals mail.

pub mod weekly_mail;
