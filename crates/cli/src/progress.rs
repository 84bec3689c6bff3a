//! Progress bars for long phases (hidden with `--quiet`, `--json`, or when stderr is no terminal).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar of `len` steps labelled `msg`, drawn on stderr unless `hidden`.
pub fn bar(len: u64, msg: &str, hidden: bool) -> ProgressBar {
    let pb = ProgressBar::new(len);
    if hidden {
        pb.set_draw_target(ProgressDrawTarget::hidden());
    }
    if let Ok(style) = ProgressStyle::with_template("{msg:>14} [{bar:32}] {pos}/{len} {elapsed}") {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(msg.to_string());
    pb
}
