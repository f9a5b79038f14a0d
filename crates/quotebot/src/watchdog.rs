//! The last word on a stop that hangs.

use std::io::Write;

/// Ends the process after `after` unless it ended first: the last word on
/// a stop that hangs. Runs on its own thread, so a blocked runtime cannot
/// hold it up.
pub fn arm(after: std::time::Duration, what: &'static str, code: i32) {
    std::thread::spawn(move || {
        std::thread::sleep(after);
        tracing::error!("{what}: still running {after:?} after the stop; exiting now");
        // Not eprintln!: it panics when stderr is gone (a manager killed
        // with its output pipe closed), and a panic here would end this
        // thread instead of the process.
        let _ = writeln!(
            std::io::stderr(),
            "quotebot: {what}: still running {after:?} after the stop; exiting now"
        );
        std::process::exit(code);
    });
}
