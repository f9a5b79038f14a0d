//! Reads the `.eml` files the mail outbox writes when no SMTP is configured.

use std::path::Path;

use mail_parser::MessageParser;

/// One delivered message.
#[derive(Debug, Clone)]
pub struct TestMail {
    pub file: String,
    pub from: String,
    pub to: String,
    pub subject: String,
    pub message_id: String,
    pub date: String,
    pub body: String,
    /// The HTML alternative, empty when the mail has none.
    pub html: String,
    pub raw: String,
}

impl TestMail {
    /// A header's value as written (unfolded, trimmed), if the mail has it.
    pub fn header(&self, name: &str) -> Option<String> {
        let msg = MessageParser::default().parse(self.raw.as_bytes())?;
        msg.header_raw(name)
            .map(|v| v.replace("\r\n", "").replace('\n', "").trim().to_owned())
    }
}

pub fn read_mails(dir: &Path) -> Vec<TestMail> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut mails: Vec<(std::time::SystemTime, TestMail)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "eml"))
        .filter_map(|e| {
            let modified = e.metadata().and_then(|m| m.modified()).ok()?;
            let raw = std::fs::read(e.path()).ok()?;
            Some((modified, parse(&e.file_name().to_string_lossy(), &raw)?))
        })
        .collect();
    mails.sort_by_key(|(t, _)| *t);
    mails.into_iter().map(|(_, m)| m).collect()
}

fn parse(file: &str, raw: &[u8]) -> Option<TestMail> {
    let msg = MessageParser::default().parse(raw)?;
    let first_addr = |a: Option<&mail_parser::Address<'_>>| {
        a.and_then(|a| a.first())
            .and_then(|a| a.address())
            .unwrap_or_default()
            .to_owned()
    };
    Some(TestMail {
        file: file.to_owned(),
        from: first_addr(msg.from()),
        to: first_addr(msg.to()),
        subject: msg.subject().unwrap_or_default().to_owned(),
        message_id: msg.message_id().unwrap_or_default().to_owned(),
        date: msg.date().map(|d| d.to_rfc3339()).unwrap_or_default(),
        body: msg.body_text(0).map(|b| b.into_owned()).unwrap_or_default(),
        html: if msg.html_body_count() > 0 && msg.text_body_count() > 0 && msg.parts.len() > 1 {
            msg.body_html(0).map(|b| b.into_owned()).unwrap_or_default()
        } else {
            String::new()
        },
        raw: String::from_utf8_lossy(raw).into_owned(),
    })
}
