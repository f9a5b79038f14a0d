//! Debian's Chromium, headless, driven through chromedriver (WebDriver,
//! with fantoccini). It resolves no host but 127.0.0.1 and localhost, so
//! nothing reaches the internet. Screenshots go to `$KEEL_ARTIFACTS_DIR`
//! (default `<target>/tmp/browser-artifacts`).

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::harness::{PATIENCE, free_port};

/// A headless Chromium.
pub struct Browser {
    pub client: Client,
    driver_url: String,
    driver: Child,
}

/// A window: a desktop one of `width`×`height`, or a phone's (emulated:
/// its width, pixel ratio and touch).
#[derive(Clone, Copy)]
pub enum Screen {
    Desktop(u32, u32),
    Phone(u32, u32),
}

fn program(var: &str, names: &[&str]) -> String {
    if let Ok(p) = std::env::var(var) {
        return p;
    }
    names
        .iter()
        .map(|n| format!("/usr/bin/{n}"))
        .find(|p| std::path::Path::new(p).exists())
        .unwrap_or_else(|| {
            panic!(
                "{} is not installed: apt-get install chromium chromium-driver (scripts/test does), or set {var}",
                names[0]
            )
        })
}

pub fn artifacts() -> PathBuf {
    let dir = std::env::var("KEEL_ARTIFACTS_DIR").map_or_else(
        |_| PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser-artifacts"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&dir).expect("create the artifacts directory");
    dir
}

impl Browser {
    /// A desktop window of `width`×`height` CSS pixels.
    pub async fn start(width: u32, height: u32) -> Self {
        Self::on(Screen::Desktop(width, height)).await
    }

    pub async fn on(screen: Screen) -> Self {
        let driver_bin = program("KEEL_CHROMEDRIVER", &["chromedriver"]);
        let chromium = program("KEEL_CHROMIUM", &["chromium", "chromium-browser"]);
        let port = free_port();
        let driver = Command::new(driver_bin)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own process group, so that the Chromium it starts goes
            // with it when the browser is dropped (see Drop).
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .expect("start chromedriver");
        let (width, height) = match screen {
            Screen::Desktop(w, h) | Screen::Phone(w, h) => (w, h),
        };
        let mut caps = json!({
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    format!("--window-size={width},{height}"),
                    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--disable-default-apps", "--no-first-run",
                    "--autoplay-policy=no-user-gesture-required",
                    "--lang=en-US",
                ],
            },
        });
        if let Screen::Phone(w, h) = screen {
            caps["goog:chromeOptions"]["mobileEmulation"] = json!({"deviceMetrics": {"width": w, "height": h, "pixelRatio": 2.0, "touch": true}});
        }
        let caps = caps.as_object().cloned().unwrap_or_default();
        let mut last = String::new();
        for _ in 0..100 {
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            match ClientBuilder::new(connector)
                .capabilities(caps.clone())
                .connect(&format!("http://127.0.0.1:{port}"))
                .await
            {
                Ok(client) => {
                    return Self {
                        client,
                        driver_url: format!("http://127.0.0.1:{port}"),
                        driver,
                    };
                }
                Err(e) => last = e.to_string(),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("chromedriver did not answer: {last}");
    }

    pub async fn goto(&self, url: &str) {
        self.client.goto(url).await.expect("navigate");
    }

    pub async fn path(&self) -> String {
        self.client
            .current_url()
            .await
            .expect("the URL")
            .path()
            .to_owned()
    }

    /// Waits until the page is at `path`.
    pub async fn wait_path(&self, path: &str) {
        let at = keel_testkit::eventually_async(PATIENCE, || async {
            (self.path().await == path).then_some(())
        })
        .await;
        assert!(
            at.is_some(),
            "the page is at {}, not {path}",
            self.path().await
        );
    }

    /// The element `css` selects, once the page shows it.
    pub async fn element(&self, css: &str) -> fantoccini::elements::Element {
        self.client
            .wait()
            .at_most(PATIENCE)
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"))
    }

    pub async fn fill(&self, css: &str, text: &str) {
        let el = self.element(css).await;
        el.clear()
            .await
            .unwrap_or_else(|e| panic!("clear {css}: {e}"));
        el.send_keys(text)
            .await
            .unwrap_or_else(|e| panic!("type into {css}: {e}"));
    }

    pub async fn click(&self, css: &str) {
        let el = self.element(css).await;
        el.click()
            .await
            .unwrap_or_else(|e| panic!("click {css}: {e}"));
    }

    /// Types `keys` (text, or `fantoccini::key::Key` characters) into
    /// whatever has the focus, as a keyboard would.
    pub async fn keys(&self, keys: &str) {
        let el = self
            .client
            .active_element()
            .await
            .unwrap_or_else(|e| panic!("the focused element: {e}"));
        el.send_keys(keys)
            .await
            .unwrap_or_else(|e| panic!("type {keys:?}: {e}"));
    }

    /// Presses Tab (Shift+Tab when `back`) until the focus is on an element
    /// matching `css`; fails after 40 presses.
    pub async fn tab_to(&self, css: &str, back: bool) {
        use fantoccini::key::Key;
        let press = if back {
            format!("{}{}", char::from(Key::Shift), char::from(Key::Tab))
        } else {
            char::from(Key::Tab).to_string()
        };
        let here = format!(
            "return !!document.activeElement && document.activeElement.matches({})",
            json!(css)
        );
        for _ in 0..40 {
            if self.js(&here).await == Value::Bool(true) {
                return;
            }
            self.keys(&press).await;
        }
        panic!("Tab never reached {css}");
    }

    /// Runs `script` (a function body) and returns what it returns.
    pub async fn js(&self, script: &str) -> Value {
        self.client
            .execute(script, Vec::new())
            .await
            .unwrap_or_else(|e| panic!("{script}: {e}"))
    }

    /// Waits until `script` returns `true`.
    pub async fn wait_js(&self, script: &str, what: &str) {
        let ok = keel_testkit::eventually_async(PATIENCE, || async {
            (self.js(script).await == Value::Bool(true)).then_some(())
        })
        .await;
        assert!(ok.is_some(), "{what} (waited for: {script})");
    }

    /// The text of the first element matching `css` (empty when none).
    pub async fn text(&self, css: &str) -> String {
        let s = format!(
            "const e = document.querySelector({}); return e ? e.innerText : '';",
            json!(css)
        );
        self.js(&s).await.as_str().unwrap_or_default().to_owned()
    }

    /// Waits until the text of `css` contains `part`.
    pub async fn wait_text(&self, css: &str, part: &str) {
        let s = format!(
            "const e = document.querySelector({}); return !!e && e.offsetParent !== null && e.innerText.includes({});",
            json!(css),
            json!(part)
        );
        self.wait_js(
            &s,
            &format!(
                "{css} never showed {part:?} (it shows {:?})",
                self.text(css).await
            ),
        )
        .await;
    }

    /// Sends a WebDriver command of this session (`path` after
    /// `/session/{id}`) that fantoccini does not wrap; its `value`.
    pub async fn command(&self, path: &str, body: Value) -> Value {
        let session = self
            .client
            .session_id()
            .await
            .ok()
            .flatten()
            .expect("a WebDriver session");
        let url = format!("{}/session/{session}{path}", self.driver_url);
        let r: Value = reqwest::Client::new()
            .post(url)
            .json(&body)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .unwrap_or_else(|e| panic!("{path}: {e}"))
            .json()
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        r["value"].clone()
    }

    /// Runs a Chrome DevTools command through chromedriver.
    async fn cdp(&self, cmd: &str, params: Value) -> Value {
        self.command("/goog/cdp/execute", json!({"cmd": cmd, "params": params}))
            .await
    }

    /// Adds a virtual platform authenticator (WebDriver's WebAuthn
    /// extension): CTAP2, internal, resident keys, the user verified.
    pub async fn add_virtual_authenticator(&self) -> String {
        let id = self
            .command(
                "/webauthn/authenticator",
                json!({
                    "protocol": "ctap2",
                    "transport": "internal",
                    "hasResidentKey": true,
                    "hasUserVerification": true,
                    "isUserVerified": true,
                    "automaticPresenceSimulation": true,
                }),
            )
            .await;
        id.as_str().expect("an authenticator id").to_owned()
    }

    /// Saves a screenshot of the whole page as `<artifacts>/<name>.png`.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        use base64::Engine;
        let size = self.cdp("Page.getLayoutMetrics", json!({})).await["cssContentSize"].clone();
        let shot = self
            .cdp(
                "Page.captureScreenshot",
                json!({
                    "format": "png",
                    "captureBeyondViewport": true,
                    "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1},
                }),
            )
            .await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap_or_default())
            .expect("a PNG");
        let path = artifacts().join(format!("{name}.png"));
        std::fs::write(&path, png).expect("save the screenshot");
        path
    }

    /// Runs axe-core in the page; the serious and critical violations.
    pub async fn accessibility_problems(&self) -> Vec<String> {
        let axe = include_str!("axe.min.js");
        self.client
            .execute(axe, Vec::new())
            .await
            .expect("load axe-core");
        let out = self
            .client
            .execute_async(
                "const done = arguments[arguments.length - 1];
                 axe.run(document, { resultTypes: ['violations'] })
                    .then(r => done(r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(' ')) }))))
                    .catch(e => done([{ id: 'axe-error', impact: 'critical', help: String(e), nodes: [] }]));",
                Vec::new(),
            )
            .await
            .expect("run axe-core");
        out.as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|v| matches!(v["impact"].as_str(), Some("serious" | "critical")))
            .map(|v| {
                format!(
                    "{} ({}): {} at {}",
                    v["id"], v["impact"], v["help"], v["nodes"]
                )
            })
            .collect()
    }

    pub async fn close(self) {
        let _ = self.client.clone().close().await;
    }
}

/// chromedriver and every Chromium process it started, however the test
/// ends (a failed test never reaches `close`, and a Chromium outlives its
/// killed driver).
impl Drop for Browser {
    fn drop(&mut self) {
        use nix::sys::signal::{Signal, killpg};
        use nix::unistd::Pid;
        if let Some(pid) = self.driver.id().and_then(|p| i32::try_from(p).ok()) {
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
}
