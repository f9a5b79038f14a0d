//! Passkey (WebAuthn) settings: the relying party, the origins allowed to
//! use its passkeys (web pages and native apps), and the association files
//! iOS and Android read. Off unless `KEEL_ACCOUNTS_WEBAUTHN_RP_ID` is set;
//! every value is checked at start, with the variable named.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use keel_platform::config::{ConfigError, Source};
use url::Url;

// The names of the variables read here.
const ACCOUNTS_WEBAUTHN_RP_NAME: &str = "KEEL_ACCOUNTS_WEBAUTHN_RP_NAME";

const RP_ID: &str = "KEEL_ACCOUNTS_WEBAUTHN_RP_ID";
const ORIGINS: &str = "KEEL_ACCOUNTS_WEBAUTHN_ORIGINS";
const APPLE: &str = "KEEL_ACCOUNTS_APPLE_APP_IDS";
const ANDROID: &str = "KEEL_ACCOUNTS_ANDROID_APPS";
const TIMEOUT: &str = "KEEL_ACCOUNTS_WEBAUTHN_TIMEOUT_SECS";
const TOP_ORIGINS: &str = "KEEL_ACCOUNTS_WEBAUTHN_TOP_ORIGINS";

/// Why a value of the passkey settings is refused (after the variable's
/// name in the start's error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
struct Invalid(String);

impl From<Invalid> for String {
    fn from(e: Invalid) -> Self {
        e.0
    }
}

#[derive(Debug, Clone)]
pub struct Passkeys {
    /// The relying party id: the domain passkeys are bound to.
    pub rp_id: String,
    /// Shown by the authenticator (`KEEL_ACCOUNTS_WEBAUTHN_RP_NAME`, else
    /// the app's name).
    pub rp_name: String,
    /// Where a ceremony may come from: web origins, then the Android apps'.
    pub origins: Vec<Url>,
    /// iOS apps (`TEAMID.bundle.id`) for `apple-app-site-association`.
    pub apple_app_ids: Vec<String>,
    /// Android apps for `assetlinks.json`.
    pub android_apps: Vec<AndroidApp>,
    /// How long the authenticator may take, and a ceremony lives.
    pub timeout: Duration,
    /// The sites whose pages may frame a passkey sign-in (WebAuthn's
    /// `topOrigin`); none by default, so a sign-in made inside another
    /// site's frame is refused.
    pub top_origins: Vec<Url>,
}

#[derive(Debug, Clone)]
pub struct AndroidApp {
    pub package: String,
    /// The signing certificate's SHA-256, `AB:CD:...` (32 bytes).
    pub fingerprint: String,
    /// `android:apk-key-hash:<base64url of the same 32 bytes>`.
    pub origin: Url,
}

impl Passkeys {
    /// The settings, or `None` when no relying party is set (then no app
    /// may be named either).
    pub fn from_source(src: &Source, app_name: &str) -> Result<Option<Self>, ConfigError> {
        let apple_app_ids = src.list(APPLE);
        let android = src.list(ANDROID);
        let framing = src.list(TOP_ORIGINS);
        let Some(rp_id) = src.get(RP_ID).map(str::trim).filter(|s| !s.is_empty()) else {
            if let Some(var) = [
                (APPLE, &apple_app_ids),
                (ANDROID, &android),
                (TOP_ORIGINS, &framing),
            ]
            .iter()
            .find_map(|(var, l)| (!l.is_empty()).then_some(*var))
            {
                return Err(ConfigError::invalid(var, format!("needs {RP_ID}")));
            }
            return Ok(None);
        };
        let rp_id = rp_id.to_ascii_lowercase();
        check_rp_id(&rp_id).map_err(|why| ConfigError::invalid(RP_ID, why))?;
        for id in &apple_app_ids {
            check_apple_app_id(id).map_err(|why| ConfigError::invalid(APPLE, why))?;
        }
        let android_apps = android
            .iter()
            .map(|a| AndroidApp::parse(a).map_err(|why| ConfigError::invalid(ANDROID, why)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut origins = web_origins(src, &rp_id)?;
        for app in &android_apps {
            if !origins.contains(&app.origin) {
                origins.push(app.origin.clone());
            }
        }
        let top_origins = framing
            .iter()
            .map(|o| parse_top_origin(o).map_err(|why| ConfigError::invalid(TOP_ORIGINS, why)))
            .collect::<Result<Vec<_>, _>>()?;
        let timeout = src.secs_or(TIMEOUT, Duration::from_secs(300))?;
        if timeout.is_zero() || timeout > Duration::from_secs(600) {
            return Err(ConfigError::invalid(TIMEOUT, "must be 1 to 600 seconds"));
        }
        Ok(Some(Self {
            rp_name: src.string_or(ACCOUNTS_WEBAUTHN_RP_NAME, app_name),
            rp_id,
            origins,
            apple_app_ids,
            android_apps,
            timeout,
            top_origins,
        }))
    }
}

/// A domain name: lower-case labels of letters, digits and hyphens.
fn check_rp_id(rp_id: &str) -> Result<(), Invalid> {
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    if rp_id.len() <= 253
        && rp_id.split('.').all(label_ok)
        && rp_id.parse::<std::net::Ipv4Addr>().is_err()
    {
        Ok(())
    } else {
        Err(Invalid(format!(
            "{rp_id:?} is not a domain name (e.g. example.com: no scheme, port, path or IP address)"
        )))
    }
}

/// The web origins: `KEEL_ACCOUNTS_WEBAUTHN_ORIGINS` (comma-separated) or
/// `https://<rp id>`. Each is https (http only on localhost) on the relying
/// party's domain or a subdomain of it; `android:apk-key-hash:` origins
/// may be listed here too.
fn web_origins(src: &Source, rp_id: &str) -> Result<Vec<Url>, ConfigError> {
    let listed = src.list(ORIGINS);
    let listed = if listed.is_empty() {
        vec![format!("https://{rp_id}")]
    } else {
        listed
    };
    let origins = listed
        .iter()
        .map(|o| parse_origin(o, rp_id).map_err(|why| ConfigError::invalid(ORIGINS, why)))
        .collect::<Result<Vec<_>, _>>()?;
    if !origins.iter().any(|o| o.scheme().starts_with("http")) {
        return Err(ConfigError::invalid(
            ORIGINS,
            "must name at least one web origin (https://...)",
        ));
    }
    Ok(origins)
}

fn parse_origin(raw: &str, rp_id: &str) -> Result<Url, Invalid> {
    if let Some(hash) = raw.strip_prefix("android:apk-key-hash:") {
        return match URL_SAFE_NO_PAD.decode(hash) {
            Ok(bytes) if bytes.len() == 32 => {
                Url::parse(raw).map_err(|e| Invalid(format!("{raw}: {e}")))
            }
            _ => Err(Invalid(format!(
                "{raw}: the hash must be the signing certificate's SHA-256 in base64url without padding"
            ))),
        };
    }
    let url = Url::parse(raw).map_err(|e| Invalid(format!("{raw}: {e}")))?;
    let host = url.host_str().unwrap_or_default();
    let secure = url.scheme() == "https" || (url.scheme() == "http" && host == "localhost");
    if !secure {
        return Err(Invalid(format!(
            "{raw}: must be https:// (http:// only on localhost)"
        )));
    }
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(Invalid(format!(
            "{raw}: an origin has no path, query or fragment"
        )));
    }
    if host != rp_id && !host.ends_with(&format!(".{rp_id}")) {
        return Err(Invalid(format!(
            "{raw}: the host must be {rp_id} or a subdomain of it (the relying party id)"
        )));
    }
    Ok(url)
}

/// A site that may frame a sign-in: an https origin (http only on
/// localhost), on any host.
fn parse_top_origin(raw: &str) -> Result<Url, Invalid> {
    let url = Url::parse(raw).map_err(|e| Invalid(format!("{raw}: {e}")))?;
    let host = url.host_str().unwrap_or_default();
    let secure = url.scheme() == "https" || (url.scheme() == "http" && host == "localhost");
    if !secure || host.is_empty() {
        return Err(Invalid(format!(
            "{raw}: must be https:// (http:// only on localhost)"
        )));
    }
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(Invalid(format!(
            "{raw}: an origin has no path, query or fragment"
        )));
    }
    Ok(url)
}

/// `TEAMID.bundle.id`: a 10-character team id, a dot, a bundle id.
fn check_apple_app_id(id: &str) -> Result<(), Invalid> {
    let ok = id.split_once('.').is_some_and(|(team, bundle)| {
        team.len() == 10
            && team
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
            && !bundle.is_empty()
            && bundle
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
    });
    if ok {
        Ok(())
    } else {
        Err(Invalid(format!(
            "{id:?} is not TEAMID.bundle.id (a 10-character team id, e.g. ABCDE12345.com.example.app)"
        )))
    }
}

impl AndroidApp {
    /// `package=AB:CD:...` (the signing certificate's SHA-256 fingerprint
    /// as `keytool` prints it).
    fn parse(raw: &str) -> Result<Self, Invalid> {
        let bad = || {
            Invalid(format!(
                "{raw:?} is not package=FINGERPRINT (e.g. com.example.app=14:6D:E9:...: 32 bytes of hex)"
            ))
        };
        let (package, fingerprint) = raw.split_once('=').ok_or_else(bad)?;
        let package_ok = !package.is_empty()
            && package
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_');
        let bytes = fingerprint
            .split(':')
            .map(|h| {
                if h.len() == 2 {
                    u8::from_str_radix(h, 16).ok()
                } else {
                    None
                }
            })
            .collect::<Option<Vec<u8>>>()
            .filter(|b| b.len() == 32);
        let (true, Some(bytes)) = (package_ok, bytes) else {
            return Err(bad());
        };
        let origin = Url::parse(&format!(
            "android:apk-key-hash:{}",
            URL_SAFE_NO_PAD.encode(&bytes)
        ))
        .map_err(|_| bad())?;
        Ok(Self {
            package: package.to_owned(),
            fingerprint: fingerprint.to_ascii_uppercase(),
            origin,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(pairs: &[(&str, &str)]) -> Result<Option<Passkeys>, String> {
        Passkeys::from_source(&Source::from_pairs(pairs.iter().copied()), "App")
            .map_err(|e| e.to_string())
    }

    fn fingerprint() -> String {
        (0..32)
            .map(|i| format!("{i:02x}"))
            .collect::<Vec<_>>()
            .join(":")
    }

    #[test]
    fn without_a_relying_party_passkeys_are_off() {
        assert!(matches!(load(&[]), Ok(None)));
    }

    #[test]
    fn the_origin_defaults_to_https_on_the_relying_party_and_apps_add_theirs() {
        let android = format!("com.example.app={}", fingerprint());
        let p = load(&[(RP_ID, "Example.com"), (ANDROID, &android)])
            .ok()
            .flatten()
            .expect("valid");
        assert_eq!(p.rp_id, "example.com");
        assert_eq!(p.rp_name, "App");
        let origins: Vec<&str> = p.origins.iter().map(Url::as_str).collect();
        assert_eq!(origins[0], "https://example.com/");
        assert!(
            origins[1].starts_with("android:apk-key-hash:"),
            "{origins:?}"
        );
        assert_eq!(
            p.android_apps[0].fingerprint,
            fingerprint().to_ascii_uppercase()
        );
        assert!(crate::identity::webauthn::RelyingParty::new(&p).is_ok());
    }

    #[test]
    fn every_bad_value_is_refused_naming_its_variable() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[(RP_ID, "https://example.com")], RP_ID),
            (&[(RP_ID, "example.com:443")], RP_ID),
            (&[(RP_ID, "10.0.0.1")], RP_ID),
            (
                &[(RP_ID, "example.com"), (ORIGINS, "http://example.com")],
                ORIGINS,
            ),
            (
                &[(RP_ID, "example.com"), (ORIGINS, "https://example.org")],
                ORIGINS,
            ),
            (
                &[(RP_ID, "example.com"), (ORIGINS, "https://badexample.com")],
                ORIGINS,
            ),
            (
                &[
                    (RP_ID, "example.com"),
                    (ORIGINS, "https://example.com/login"),
                ],
                ORIGINS,
            ),
            (
                &[
                    (RP_ID, "example.com"),
                    (ORIGINS, "android:apk-key-hash:abc"),
                ],
                ORIGINS,
            ),
            (&[(RP_ID, "example.com"), (APPLE, "com.example.app")], APPLE),
            (
                &[(RP_ID, "example.com"), (ANDROID, "com.example.app")],
                ANDROID,
            ),
            (
                &[(RP_ID, "example.com"), (ANDROID, "com.example.app=AB:CD")],
                ANDROID,
            ),
            (&[(RP_ID, "example.com"), (TIMEOUT, "0")], TIMEOUT),
            (&[(APPLE, "ABCDE12345.com.example.app")], APPLE),
            (&[(TOP_ORIGINS, "https://portal.example.org")], TOP_ORIGINS),
            (
                &[
                    (RP_ID, "example.com"),
                    (TOP_ORIGINS, "http://portal.example.org"),
                ],
                TOP_ORIGINS,
            ),
            (
                &[
                    (RP_ID, "example.com"),
                    (TOP_ORIGINS, "https://portal.example.org/app"),
                ],
                TOP_ORIGINS,
            ),
        ];
        for (pairs, var) in cases {
            let err = load(pairs).err().unwrap_or_default();
            assert!(err.contains(var), "{pairs:?}: {err:?}");
        }
    }

    #[test]
    fn http_is_allowed_on_localhost_and_subdomains_are_allowed() {
        let p = load(&[
            (RP_ID, "localhost"),
            (ORIGINS, "http://localhost:5173, https://app.localhost"),
        ]);
        assert_eq!(p.ok().flatten().map(|p| p.origins.len()), Some(2));
    }

    #[test]
    fn no_site_may_frame_a_sign_in_unless_listed() {
        let none = load(&[(RP_ID, "example.com")]).ok().flatten();
        assert_eq!(none.map(|p| p.top_origins.len()), Some(0));
        let listed = load(&[
            (RP_ID, "example.com"),
            (TOP_ORIGINS, "https://portal.example.org"),
        ])
        .ok()
        .flatten()
        .expect("valid");
        let origins: Vec<&str> = listed.top_origins.iter().map(Url::as_str).collect();
        assert_eq!(origins, ["https://portal.example.org/"]);
    }
}
