//! The mail outbox. A message is enqueued as a job in the same transaction
//! as the change that causes it, and delivered by the job: through SMTP when
//! `KEEL_SMTP_URL` is set, otherwise written as `<message id>.eml` into
//! `$KEEL_DATA_DIR/mail/` (a retried delivery rewrites the same file).
//! With a DKIM key configured every message is signed ([`dkim`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lettre::message::header::{ContentType, HeaderName, HeaderValue};
use lettre::message::{Mailbox, MultiPart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use sea_orm::{ConnectionTrait, DbErr};
use serde::{Deserialize, Serialize};

use crate::config::MailConfig;
use crate::jobs::{self, Job, JobError, JobRegistry};

/// One outgoing message: plain text, and an HTML alternative when given.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Mail {
    /// The sender's display name (the app's name); the address is always
    /// `KEEL_MAIL_FROM`'s. None: `KEEL_MAIL_FROM`'s own name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_name: Option<String>,
    pub to: String,
    pub subject: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub html: Option<String>,
    /// Extra headers, e.g. `List-Unsubscribe` (names from [`HEADERS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
}

/// The extra headers a mail may carry.
pub const HEADERS: &[&str] = &["List-Unsubscribe", "List-Unsubscribe-Post"];

#[derive(Debug, Serialize, Deserialize)]
struct DeliverMail {
    id: String,
    mail: Mail,
}

impl Job for DeliverMail {
    const KIND: &'static str = "platform.mail";
    const MAX_ATTEMPTS: u32 = 10;
}

/// A mail to someone whose account is gone (the one saying so): its row is
/// erased from the disk once it is sent or given up ([`Job::ERASE`]).
#[derive(Debug, Serialize, Deserialize)]
struct DeliverLastMail(DeliverMail);

impl Job for DeliverLastMail {
    const KIND: &'static str = "platform.mail.last";
    const MAX_ATTEMPTS: u32 = 10;
    const ERASE: bool = true;
}

/// Enqueues `mail` on `conn` (pass the transaction of the causing change).
pub async fn enqueue<C: ConnectionTrait>(conn: &C, mail: Mail) -> Result<(), DbErr> {
    enqueue_at(conn, mail, chrono::Utc::now()).await
}

/// Enqueues `mail` for delivery at `at`.
pub async fn enqueue_at<C: ConnectionTrait>(
    conn: &C,
    mail: Mail,
    at: chrono::DateTime<chrono::Utc>,
) -> Result<(), DbErr> {
    let job = DeliverMail {
        id: uuid::Uuid::new_v4().simple().to_string(),
        mail,
    };
    jobs::enqueue_at(conn, &job, at).await
}

/// Enqueues the last mail to someone whose account was deleted in the same
/// transaction: once sent (or given up) nothing of it stays on disk.
pub async fn enqueue_last<C: ConnectionTrait>(conn: &C, mail: Mail) -> Result<(), DbErr> {
    let job = DeliverLastMail(DeliverMail {
        id: uuid::Uuid::new_v4().simple().to_string(),
        mail,
    });
    jobs::enqueue(conn, &job).await
}

/// Forgets the mails to any of `addresses` not sent yet (an account that
/// is deleted takes its queued mail with it); how many.
pub async fn forget<C: ConnectionTrait>(conn: &C, addresses: &[&str]) -> Result<u64, DbErr> {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QuerySelect};
    let wanted: Vec<String> = addresses.iter().map(|a| a.to_lowercase()).collect();
    let queued: Vec<(i64, String)> = jobs::entity::Entity::find()
        .select_only()
        .column(jobs::entity::Column::Id)
        .column(jobs::entity::Column::Payload)
        .filter(jobs::entity::Column::Kind.is_in([DeliverMail::KIND, DeliverLastMail::KIND]))
        .into_tuple()
        .all(conn)
        .await?;
    let ids: Vec<i64> = queued
        .into_iter()
        .filter(|(_, payload)| {
            let to = serde_json::from_str::<DeliverMail>(payload)
                .or_else(|_| serde_json::from_str::<DeliverLastMail>(payload).map(|l| l.0))
                .map(|d| d.mail.to.to_lowercase());
            to.is_ok_and(|to| wanted.contains(&to))
        })
        .map(|(id, _)| id)
        .collect();
    if ids.is_empty() {
        return Ok(0);
    }
    let res = jobs::entity::Entity::delete_many()
        .filter(jobs::entity::Column::Id.is_in(ids))
        .exec(conn)
        .await?;
    Ok(res.rows_affected)
}

/// Delivers outbox messages.
#[derive(Clone)]
pub struct Mailer {
    from: Mailbox,
    transport: Transport,
    dkim: Option<Arc<crate::dkim::DkimSigner>>,
}

#[derive(Clone)]
enum Transport {
    Smtp(Arc<AsyncSmtpTransport<Tokio1Executor>>),
    Files(PathBuf),
}

#[derive(Debug, thiserror::Error)]
pub enum MailError {
    #[error("KEEL_MAIL_FROM is not a mailbox")]
    From(#[source] lettre::address::AddressError),
    #[error("KEEL_SMTP_URL is not a usable SMTP URL")]
    Smtp(#[source] lettre::transport::smtp::Error),
    #[error("KEEL_DKIM_PRIVATE_KEY cannot sign")]
    Dkim(#[source] crate::dkim::DkimKeyError),
}

impl Mailer {
    pub fn new(cfg: &MailConfig) -> Result<Self, MailError> {
        let from = cfg.from.parse::<Mailbox>().map_err(MailError::From)?;
        match &cfg.smtp_url {
            Some(_) => tracing::info!("mail is sent over SMTP (KEEL_SMTP_URL)"),
            None => tracing::warn!(
                dir = %cfg.dir.display(),
                "mail is written to files, not sent: no one receives it (set KEEL_SMTP_URL)"
            ),
        }
        let transport = match &cfg.smtp_url {
            Some(url) => Transport::Smtp(Arc::new(
                AsyncSmtpTransport::<Tokio1Executor>::from_url(url.expose())
                    .map_err(MailError::Smtp)?
                    .build(),
            )),
            None => Transport::Files(cfg.dir.clone()),
        };
        let dkim = cfg
            .dkim
            .as_ref()
            .map(|d| {
                crate::dkim::DkimSigner::from_pem(&d.domain, &d.selector, d.private_key.expose())
            })
            .transpose()
            .map_err(MailError::Dkim)?
            .map(Arc::new);
        Ok(Self {
            from,
            transport,
            dkim,
        })
    }

    /// Registers the delivery job.
    pub fn register(&self, registry: &mut JobRegistry) {
        let mailer = self.clone();
        registry.register(move |job: DeliverMail, _ctx| {
            let mailer = mailer.clone();
            async move { mailer.deliver(&job.id, &job.mail).await }
        });
        let mailer = self.clone();
        registry.register(move |DeliverLastMail(job), _ctx| {
            let mailer = mailer.clone();
            async move { mailer.deliver(&job.id, &job.mail).await }
        });
    }

    async fn deliver(&self, id: &str, mail: &Mail) -> Result<(), JobError> {
        let to: Mailbox = mail
            .to
            .parse()
            .map_err(|e| JobError::fail(format!("bad recipient: {e}")))?;
        let domain = self.from.email.domain().to_owned();
        let from = match &mail.from_name {
            Some(name) => Mailbox::new(Some(name.clone()), self.from.email.clone()),
            None => self.from.clone(),
        };
        let mut builder = Message::builder()
            .from(from)
            .to(to)
            .subject(mail.subject.clone())
            .message_id(Some(format!("<{id}@{domain}>")));
        for (name, value) in &mail.headers {
            let Some(name) = HEADERS.iter().find(|h| h.eq_ignore_ascii_case(name)) else {
                return Err(JobError::fail(format!(
                    "header {name} is not one a mail may carry"
                )));
            };
            builder = builder.raw_header(HeaderValue::new(
                HeaderName::new_from_ascii_str(name),
                value.clone(),
            ));
        }
        let built = match &mail.html {
            Some(html) => builder.multipart(MultiPart::alternative_plain_html(
                mail.text.clone(),
                html.clone(),
            )),
            None => builder
                .header(ContentType::TEXT_PLAIN)
                .body(mail.text.clone()),
        };
        let message = built.map_err(|e| JobError::fail(format!("cannot build message: {e}")))?;
        let raw = match &self.dkim {
            Some(signer) => signer.sign(&message.formatted(), chrono::Utc::now().timestamp()),
            None => message.formatted(),
        };
        match &self.transport {
            Transport::Smtp(smtp) => {
                let envelope = message.envelope();
                let sent = crate::observe::call(crate::observe::Call::smtp(), |_| {
                    smtp.send_raw(envelope, &raw)
                })
                .await;
                match &sent {
                    Ok(_) => crate::observe::answers::record("smtp", true, "accepted"),
                    Err(e) => crate::observe::answers::record("smtp", false, smtp_failure(e)),
                }
                sent.map(|_| ()).map_err(|e| {
                    if e.is_permanent() {
                        JobError::fail(e)
                    } else {
                        JobError::retry(e)
                    }
                })
            }
            Transport::Files(dir) => write_eml(dir, id, &raw).await.map_err(JobError::retry),
        }
    }
}

/// An SMTP failure in words (the relay's code, when it answered).
fn smtp_failure(e: &lettre::transport::smtp::Error) -> String {
    match e.status() {
        Some(code) => format!("refused ({code})"),
        None if e.is_timeout() => "timed out".to_owned(),
        None => "could not deliver".to_owned(),
    }
}

async fn write_eml(dir: &Path, id: &str, bytes: &[u8]) -> std::io::Result<()> {
    tokio::fs::create_dir_all(dir).await?;
    let tmp = dir.join(format!(".{id}.tmp"));
    tokio::fs::write(&tmp, bytes).await?;
    tokio::fs::rename(&tmp, dir.join(format!("{id}.eml"))).await
}
