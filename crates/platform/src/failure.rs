//! Failures as the log shows them: a cause with its whole source chain,
//! and what a panic said. Below every other module, so anything may use it.

/// A cause kept for the log.
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The cause and its sources, `a: b: c`.
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        out.push_str(": ");
        out.push_str(&s.to_string());
        next = s.source();
    }
    out
}

/// What a panic said, when it said it with a string.
pub fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned())
}
