//! channel configuration (see docs/channel.md).

use std::time::Duration;

use croner::Cron;
use keel_platform::config::{ConfigError, Secret, Source};
use url::Url;

// The names of the variables read here.
const BTTV_URL: &str = "KEEL_BTTV_URL";
const CHANNEL_ALLOWED_ORIGINS: &str = "KEEL_CHANNEL_ALLOWED_ORIGINS";
const CHANNEL_API_ADDR: &str = "KEEL_CHANNEL_API_ADDR";
const CHANNEL_API_URL: &str = "KEEL_CHANNEL_API_URL";
const CHANNEL_CALL_ID: &str = "KEEL_CHANNEL_CALL_ID";
const CHANNEL_COOKIE_DOMAIN: &str = "KEEL_CHANNEL_COOKIE_DOMAIN";
const CHANNEL_EMOTE_CRON: &str = "KEEL_CHANNEL_EMOTE_CRON";
const CHANNEL_LIVE_NOTIFY_DELAY_SECS: &str = "KEEL_CHANNEL_LIVE_NOTIFY_DELAY_SECS";
const CHANNEL_LIVE_NOTIFY_SKIP_WITHIN_SECS: &str = "KEEL_CHANNEL_LIVE_NOTIFY_SKIP_WITHIN_SECS";
const CHANNEL_LIVE_WEBHOOK_URL: &str = "KEEL_CHANNEL_LIVE_WEBHOOK_URL";
const CHANNEL_MEDIA_ORIGINS: &str = "KEEL_CHANNEL_MEDIA_ORIGINS";
const CHANNEL_PROXY_TIMEOUT_SECS: &str = "KEEL_CHANNEL_PROXY_TIMEOUT_SECS";
const CHANNEL_PUBLIC_URL: &str = "KEEL_CHANNEL_PUBLIC_URL";
const CHANNEL_SAMPLER_CRON: &str = "KEEL_CHANNEL_SAMPLER_CRON";
const CHANNEL_SESSION_TTL_SECS: &str = "KEEL_CHANNEL_SESSION_TTL_SECS";
const CHANNEL_SETUP_CODE: &str = "KEEL_CHANNEL_SETUP_CODE";
const CHANNEL_TRPC_MAX_BATCH: &str = "KEEL_CHANNEL_TRPC_MAX_BATCH";
const CHANNEL_TRPC_TRANSFORMER: &str = "KEEL_CHANNEL_TRPC_TRANSFORMER";
const CHANNEL_TWITCH_ID: &str = "KEEL_CHANNEL_TWITCH_ID";
const CHANNEL_VIEWER_TOKENS_PER_MINUTE: &str = "KEEL_CHANNEL_VIEWER_TOKENS_PER_MINUTE";
const FFZ_URL: &str = "KEEL_FFZ_URL";
const STREAM_API_KEY: &str = "KEEL_STREAM_API_KEY";
const STREAM_API_SECRET: &str = "KEEL_STREAM_API_SECRET";
const STREAM_URL: &str = "KEEL_STREAM_URL";
const VAR_7TV_URL: &str = "KEEL_7TV_URL";

/// The streaming provider (GetStream) credentials; each may be missing, and
/// the procedures that need them answer PRECONDITION_FAILED naming them.
#[derive(Debug, Clone)]
pub struct StreamConfig {
    pub api_key: Option<String>,
    pub api_secret: Option<Secret>,
    /// Base URL (`KEEL_STREAM_URL`).
    pub url: String,
    /// The livestream call's id.
    pub call_id: String,
}

impl StreamConfig {
    /// The variables still missing.
    pub fn missing(&self) -> Vec<&'static str> {
        let mut m = Vec::new();
        if self.api_key.is_none() {
            m.push(STREAM_API_KEY);
        }
        if self.api_secret.is_none() {
            m.push(STREAM_API_SECRET);
        }
        m
    }
}

/// Where the emote sources are.
#[derive(Debug, Clone)]
pub struct EmoteConfig {
    pub twitch_id: Option<String>,
    pub seventv_url: String,
    pub bttv_url: String,
    pub ffz_url: String,
}

/// The live notification.
#[derive(Debug, Clone)]
pub struct NotifyConfig {
    /// A Discord webhook URL; unset: no notification.
    pub webhook_url: Option<Secret>,
    /// Wait this long after the live start (default 0).
    pub delay: Duration,
    /// Skip the notification when the previous stream ended less than this
    /// long ago (default 0: never skip).
    pub skip_within: Duration,
}

/// channel-web's own settings.
#[derive(Debug, Clone)]
pub struct WebConfig {
    /// How long a forwarded `/api/*` request may take.
    pub proxy_timeout: Duration,
    /// Origins the pages may load video and connect to besides this one and
    /// the provider's API (the provider's HLS hosts).
    pub media_origins: Vec<String>,
    /// `KEEL_CHANNEL_API_ADDR` as configured: where the API is when it is
    /// not served by this process and `KEEL_CHANNEL_API_URL` is unset.
    pub api_addr: String,
}

/// The provider's hosts for HLS playback, allowed by default.
pub const DEFAULT_MEDIA_ORIGINS: &[&str] = &[
    "https://*.stream-io-cdn.com",
    "https://*.stream-io-video.com",
    "https://*.getstream.io",
];

#[derive(Debug, Clone)]
pub struct Config {
    /// Where viewers reach the channel (the web origin).
    pub public_url: Url,
    /// Other origins allowed to send cookie-authenticated requests.
    pub allowed_origins: Vec<String>,
    /// `Domain=` of the session cookie (custom domains with an API subdomain).
    pub cookie_domain: Option<String>,
    pub session_ttl: Duration,
    /// `KEEL_CHANNEL_SETUP_CODE`: the set-up code, instead of one keel
    /// makes up and prints at start.
    pub setup_code: Option<Secret>,
    /// `superjson`: inputs and outputs wrapped as `{"json": ...}`.
    pub superjson: bool,
    /// The most procedures one tRPC batch may call.
    pub max_batch: usize,
    /// `stream.viewerToken` calls a minute from one client address.
    pub viewer_tokens_per_minute: u64,
    pub stream: StreamConfig,
    pub emotes: EmoteConfig,
    pub notify: NotifyConfig,
    /// The emote refresh schedule (default `0 */12 * * *`).
    pub emote_cron: Cron,
    /// The analytics sampler schedule (default `* * * * *`).
    pub sampler_cron: Cron,
    /// The channel-api base URL channel-web forwards `/api/*` to.
    pub api_url: Option<Url>,
    pub web: WebConfig,
}

fn url(src: &Source, name: &str, default: &str) -> Result<Url, ConfigError> {
    let raw = src.string_or(name, default);
    let u =
        Url::parse(&raw).map_err(|e| ConfigError::invalid(name, format!("{e} (got {raw:?})")))?;
    if !matches!(u.scheme(), "http" | "https") {
        return Err(ConfigError::invalid(name, "must be an http(s) URL"));
    }
    Ok(u)
}

/// A Discord webhook URL, pinned to API v10 when it names no version:
/// Discord hands out `…/api/webhooks/{id}/{token}`, which it serves at its
/// deprecated default version; discord.js posts to `…/api/v10/webhooks/…`,
/// and so does keel. A URL naming a version keeps it. The URL is a secret
/// (its token posts as the webhook), so errors never show it.
fn discord_webhook(src: &Source, name: &str) -> Result<Option<Secret>, ConfigError> {
    let Some(raw) = src.secret(name) else {
        return Ok(None);
    };
    let mut u = Url::parse(raw.expose())
        .map_err(|e| ConfigError::invalid(name, format!("not a URL ({e})")))?;
    if !matches!(u.scheme(), "http" | "https") {
        return Err(ConfigError::invalid(name, "must be an http(s) URL"));
    }
    if let Some(rest) = u.path().strip_prefix("/api/webhooks/") {
        let versioned = format!("/api/v10/webhooks/{rest}");
        u.set_path(&versioned);
    }
    Ok(Some(Secret::new(u.into())))
}

fn positive(src: &Source, name: &str, default: usize) -> Result<usize, ConfigError> {
    let n: usize = src.parse_or(name, default)?;
    if n == 0 {
        return Err(ConfigError::invalid(name, "must be at least 1"));
    }
    Ok(n)
}

impl Config {
    pub fn from_source(src: &Source) -> Result<Self, ConfigError> {
        let public_url = url(src, CHANNEL_PUBLIC_URL, "http://127.0.0.1:8083")?;
        let transformer = src.string_or(CHANNEL_TRPC_TRANSFORMER, "json");
        let superjson = match transformer.as_str() {
            "json" => false,
            "superjson" => true,
            other => {
                return Err(ConfigError::invalid(
                    CHANNEL_TRPC_TRANSFORMER,
                    format!("must be json or superjson (got {other:?})"),
                ));
            }
        };
        let call_id = src.string_or(CHANNEL_CALL_ID, "channel");
        if call_id.is_empty()
            || call_id.len() > 64
            || !call_id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(ConfigError::invalid(
                CHANNEL_CALL_ID,
                "must be 1 to 64 of a-z A-Z 0-9 _ -",
            ));
        }
        Ok(Self {
            public_url,
            allowed_origins: src.list(CHANNEL_ALLOWED_ORIGINS),
            cookie_domain: src.get(CHANNEL_COOKIE_DOMAIN).map(str::to_owned),
            session_ttl: src.secs_or(
                CHANNEL_SESSION_TTL_SECS,
                Duration::from_secs(30 * 24 * 3600),
            )?,
            setup_code: src.secret(CHANNEL_SETUP_CODE),
            superjson,
            max_batch: positive(src, CHANNEL_TRPC_MAX_BATCH, 16)?,
            viewer_tokens_per_minute: u64::try_from(positive(
                src,
                CHANNEL_VIEWER_TOKENS_PER_MINUTE,
                120,
            )?)
            .unwrap_or(u64::MAX),
            stream: StreamConfig {
                api_key: src.get(STREAM_API_KEY).map(str::to_owned),
                api_secret: src.secret(STREAM_API_SECRET),
                url: url(src, STREAM_URL, "https://chat.stream-io-api.com")?
                    .as_str()
                    .trim_end_matches('/')
                    .to_owned(),
                call_id,
            },
            emotes: EmoteConfig {
                twitch_id: src.get(CHANNEL_TWITCH_ID).map(str::to_owned),
                seventv_url: base(src, VAR_7TV_URL, "https://7tv.io")?,
                bttv_url: base(src, BTTV_URL, "https://api.betterttv.net")?,
                ffz_url: base(src, FFZ_URL, "https://api.frankerfacez.com")?,
            },
            notify: NotifyConfig {
                webhook_url: discord_webhook(src, CHANNEL_LIVE_WEBHOOK_URL)?,
                delay: src.secs_or(CHANNEL_LIVE_NOTIFY_DELAY_SECS, Duration::ZERO)?,
                skip_within: src.secs_or(CHANNEL_LIVE_NOTIFY_SKIP_WITHIN_SECS, Duration::ZERO)?,
            },
            emote_cron: keel_platform::jobs::cron::var(src, CHANNEL_EMOTE_CRON, "0 */12 * * *")?,
            sampler_cron: keel_platform::jobs::cron::var(src, CHANNEL_SAMPLER_CRON, "* * * * *")?,
            api_url: match src.get(CHANNEL_API_URL) {
                None => None,
                Some(_) => Some(url(src, CHANNEL_API_URL, "")?),
            },
            web: WebConfig {
                proxy_timeout: src.secs_or(CHANNEL_PROXY_TIMEOUT_SECS, Duration::from_secs(25))?,
                media_origins: {
                    let l = src.list(CHANNEL_MEDIA_ORIGINS);
                    if l.is_empty() {
                        DEFAULT_MEDIA_ORIGINS
                            .iter()
                            .map(|s| (*s).to_owned())
                            .collect()
                    } else {
                        l
                    }
                },
                api_addr: src.string_or(CHANNEL_API_ADDR, "127.0.0.1:8084"),
            },
        })
    }

    /// The public origin (`scheme://host[:port]`).
    pub fn public_origin(&self) -> String {
        self.public_url.origin().ascii_serialization()
    }

    /// Cookies get `Secure` when viewers come over HTTPS.
    pub fn secure_cookies(&self) -> bool {
        self.public_url.scheme() == "https"
    }
}

fn base(src: &Source, name: &str, default: &str) -> Result<String, ConfigError> {
    Ok(url(src, name, default)?
        .as_str()
        .trim_end_matches('/')
        .to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn webhook(raw: &str) -> Result<Option<String>, String> {
        let src = Source::from_pairs([("W", raw)]);
        discord_webhook(&src, "W")
            .map(|s| s.map(|s| s.expose().to_owned()))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_webhook_url_as_discord_hands_it_out_is_pinned_to_api_v10() {
        assert_eq!(
            webhook("https://discord.com/api/webhooks/1/abc?thread_id=7").unwrap(),
            Some("https://discord.com/api/v10/webhooks/1/abc?thread_id=7".into())
        );
    }

    #[test]
    fn a_webhook_url_naming_a_version_keeps_it() {
        assert_eq!(
            webhook("https://discord.com/api/v9/webhooks/1/abc").unwrap(),
            Some("https://discord.com/api/v9/webhooks/1/abc".into())
        );
    }

    #[test]
    fn a_webhook_url_that_is_not_one_is_refused_without_showing_it() {
        let e = webhook("discord.com/api/webhooks/1/s3cret").unwrap_err();
        assert!(e.contains("W") && !e.contains("s3cret"), "{e}");
        let e = webhook("ftp://discord.com/api/webhooks/1/s3cret").unwrap_err();
        assert!(!e.contains("s3cret"), "{e}");
    }
}
