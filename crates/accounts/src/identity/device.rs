//! The `device` of a session, from its User-Agent (woothee).

use woothee::parser::Parser;

/// What a session shows about its client; `unknown` where not identifiable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    pub browser: String,
    pub version: String,
    pub platform: String,
    pub os: String,
    /// A developer tool or HTTP library rather than a browser or app.
    pub is_dev: bool,
}

const UNKNOWN: &str = "unknown";

/// HTTP clients used by developers, by User-Agent prefix (lower case).
const DEV_TOOLS: &[&str] = &[
    "curl/",
    "wget/",
    "postmanruntime/",
    "insomnia/",
    "httpie/",
    "python-requests/",
    "python-urllib/",
    "python-httpx/",
    "aiohttp/",
    "go-http-client/",
    "okhttp/",
    "axios/",
    "node-fetch/",
    "undici",
    "reqwest",
    "java/",
    "apache-httpclient/",
    "bruno/",
    "hoppscotch",
];

pub fn parse(user_agent: Option<&str>) -> DeviceInfo {
    let ua = user_agent.unwrap_or("").trim();
    if let Some(tool) = dev_tool(ua) {
        return tool;
    }
    let known = |v: &str| {
        if v.is_empty() || v.eq_ignore_ascii_case("UNKNOWN") {
            UNKNOWN.to_owned()
        } else {
            v.to_owned()
        }
    };
    match Parser::new().parse(ua) {
        Some(r) => DeviceInfo {
            browser: known(r.name),
            version: known(r.version),
            platform: platform(r.category).to_owned(),
            os: known(r.os),
            is_dev: false,
        },
        None => DeviceInfo {
            browser: UNKNOWN.to_owned(),
            version: UNKNOWN.to_owned(),
            platform: UNKNOWN.to_owned(),
            os: UNKNOWN.to_owned(),
            is_dev: false,
        },
    }
}

/// `curl/8.5.0` and the like: the tool's name and version.
fn dev_tool(ua: &str) -> Option<DeviceInfo> {
    let lower = ua.to_ascii_lowercase();
    DEV_TOOLS.iter().find(|t| lower.starts_with(*t))?;
    let first = ua.split_whitespace().next().unwrap_or(ua);
    let (name, version) = first.split_once('/').unwrap_or((first, ""));
    Some(DeviceInfo {
        browser: name.to_owned(),
        version: if version.is_empty() {
            UNKNOWN.to_owned()
        } else {
            version.to_owned()
        },
        platform: UNKNOWN.to_owned(),
        os: UNKNOWN.to_owned(),
        is_dev: true,
    })
}

/// woothee's category as a platform name.
fn platform(category: &str) -> &'static str {
    match category {
        "pc" => "desktop",
        "smartphone" | "mobilephone" => "mobile",
        "appliance" => "appliance",
        "crawler" => "bot",
        _ => UNKNOWN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_desktop_browser_is_identified() {
        let d = parse(Some(
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
        ));
        assert_eq!(d.browser, "Chrome");
        assert_eq!(d.version, "120.0.0.0");
        assert_eq!(d.platform, "desktop");
        assert_eq!(d.os, "Windows 10");
        assert!(!d.is_dev);
    }

    #[test]
    fn a_phone_is_mobile() {
        let d = parse(Some(
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
        ));
        assert_eq!(d.platform, "mobile");
        assert_eq!(d.os, "iPhone");
    }

    #[test]
    fn developer_tools_are_flagged_and_the_unidentifiable_is_unknown() {
        let d = parse(Some("curl/8.5.0"));
        assert!(d.is_dev);
        assert_eq!((d.browser.as_str(), d.version.as_str()), ("curl", "8.5.0"));
        assert!(parse(Some("PostmanRuntime/7.36.0")).is_dev);
        let d = parse(None);
        assert_eq!(
            (
                d.browser.as_str(),
                d.version.as_str(),
                d.platform.as_str(),
                d.os.as_str(),
                d.is_dev
            ),
            ("unknown", "unknown", "unknown", "unknown", false)
        );
    }
}
