//! The world's own request log at the forge's door: every call the bot makes to its forge,
//! in order, with whether the world counts it as a write (it changes what the forge holds).
//! The cost checks and the crash detection read this log, not the bot's `Counting` wrapper,
//! so a miscount in the bot cannot hide a run that walks its history. On the fake GitHub the
//! server's own log of HTTP requests is kept as well (`HttpCost`).

use std::collections::BTreeMap;
use std::sync::Mutex;

use stackbot::forge::ForgeResult;

/// A forge that logs each call before passing it on.
pub struct Logged<F> {
    inner: F,
    log: Mutex<Vec<(&'static str, bool)>>,
}

impl<F> Logged<F> {
    pub fn new(inner: F) -> Self {
        Logged {
            inner,
            log: Mutex::new(Vec::new()),
        }
    }

    /// Log one call, a write if [`WRITES`] says so, then make it.
    fn intercept<T>(
        &self,
        method: &'static str,
        _bot_says_write: bool,
        _key: std::fmt::Arguments<'_>,
        call: impl FnOnce() -> ForgeResult<T>,
    ) -> ForgeResult<T> {
        let write = WRITES.contains(&method);
        self.log.lock().expect("log").push((method, write));
        call()
    }

    /// Calls that only read.
    pub fn reads(&self) -> u64 {
        self.log
            .lock()
            .expect("log")
            .iter()
            .filter(|c| !c.1)
            .count() as u64
    }

    /// Calls that change the forge (attempted: a crash before a write still counts it).
    pub fn writes(&self) -> u64 {
        self.log.lock().expect("log").iter().filter(|c| c.1).count() as u64
    }

    /// Calls per method.
    pub fn by_method(&self) -> BTreeMap<&'static str, u64> {
        let mut out = BTreeMap::new();
        for (m, _) in self.log.lock().expect("log").iter() {
            *out.entry(*m).or_default() += 1;
        }
        out
    }
}

/// The calls that change what the forge holds, as the world reckons them (its own list, not
/// the bot's: `ensure_repo` only checks on GitHub, and creates only a repository that does
/// not exist yet).
const WRITES: &[&str] = &[
    "commit",
    "force_branch",
    "create_tag",
    "create_draft_release",
    "create_draft_prerelease",
    "upload_asset",
    "delete_asset",
    "publish_release",
    "delete_release",
    "open_pull",
    "update_pull",
    "close_pull",
    "add_labels",
    "enable_auto_merge",
    "create_comment",
    "update_comment",
    "create_issue",
    "update_issue",
    "dispatch_workflow",
    "cancel_workflow_run",
];

stackbot::forge::forge_wrapper!(Logged);
