//! The journal of a run: every completed write, so that a run stopped by Ctrl-C (or a
//! `SIGTERM` from a CI runner cancelling the job) says what it did and that the next run
//! finishes the job, instead of ending in silence after tags were published.
//!
//! Writers (`apply`, the tenant fan-out) report each completed step as a `tracing` event with
//! [`TARGET`]; the command line installs a layer handing them to [`record`], and [`watch_signals`],
//! which prints them with [`interrupted`] and exits 130 on the first interrupt. Every step is
//! reconciled ("already done?" first), so stopping between two writes is always safe.

use std::sync::Mutex;

/// The `tracing` target of journal events.
pub const TARGET: &str = "stackbot::done";

static DONE: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn done() -> std::sync::MutexGuard<'static, Vec<String>> {
    DONE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Everything recorded so far, in order.
pub fn entries() -> Vec<String> {
    done().clone()
}

/// What an interrupted run prints: what it did, and what the next run does about the rest.
pub fn interrupted(entries: &[String]) -> String {
    if entries.is_empty() {
        return "interrupted before any write: nothing was changed\n".to_string();
    }
    let mut s = format!(
        "interrupted after {} write{}:\n",
        entries.len(),
        if entries.len() == 1 { "" } else { "s" }
    );
    for e in entries {
        s.push_str(&format!("  - {e}\n"));
    }
    s.push_str(
        "the next run finishes the job: run the same command again (every step checks \"already done?\" first, nothing is done twice)\n",
    );
    s
}

/// Keep a journal event's message.
pub fn record(message: String) {
    done().push(message);
}

/// On the first interrupt (Ctrl-C) or termination, print the journal and exit 130: the
/// process is stopped between two writes at worst, and the next run reconciles. A task on the
/// process's one runtime (stackbot_net::runtime); a process that cannot watch signals simply
/// keeps the default.
pub fn watch_signals() {
    let Ok(rt) = stackbot_net::runtime::runtime() else {
        return;
    };
    rt.spawn(async {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let (Ok(mut int), Ok(mut term)) = (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
            ) else {
                return;
            };
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        super::activity::finish();
        eprint!("\n{}", interrupted(&entries()));
        std::process::exit(130);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupted_run_says_what_it_did_and_that_the_next_run_finishes() {
        let text = interrupted(&[
            "openstack-scs2-1-34-v1: tagged".into(),
            "openstack-scs2-1-34-v1: published".into(),
        ]);
        assert!(
            text.starts_with("interrupted after 2 writes:\n  - openstack-scs2-1-34-v1: tagged\n")
        );
        assert!(text.contains("the next run finishes the job"));
        assert_eq!(
            interrupted(&[]),
            "interrupted before any write: nothing was changed\n"
        );
    }
}
