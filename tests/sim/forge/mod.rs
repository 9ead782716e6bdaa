//! The two forges a world can live on, behind one interface: what the bot gets for a run (the
//! forge `stackbot release` would open, metered and optionally crashing), what people do
//! between runs, and what the invariant checks read back. People and checks never go through
//! the bot's metered handle, so a run's request count is the bot's alone.

pub mod fake;
pub mod local;
pub mod log;

use std::collections::BTreeMap;

use stackbot::clock::SharedClock;
use stackbot::config::Loaded;
use stackbot::env::Env;
use stackbot::forge::Forge;
use stackbot::forge::faulty::FaultMode;

/// Path → bytes.
pub type Files = BTreeMap<String, Vec<u8>>;

/// How a pull request is merged (GitHub's three buttons).
pub use stackbot::forge::local::MergeMethod;

/// A person: `(name, e-mail)`.
pub type Who = (&'static str, &'static str);

/// A pull request's state as the web UI shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PrState {
    Open,
    Closed,
    Merged,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pull {
    pub number: u64,
    pub head: String,
    pub base: String,
    pub title: String,
    pub body: String,
    pub state: PrState,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    pub sha: String,
    pub parents: Vec<String>,
    pub author_email: String,
    pub message: String,
}

/// A release of the cluster-stacks repository (asset bytes are read on demand).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    pub id: u64,
    pub tag: String,
    pub draft: bool,
    pub assets: Vec<String>,
}

/// A crash of the bot's process at its k-th write (1-based), before or after the write.
#[derive(Debug, Clone, Copy)]
pub struct Crash {
    pub at_write: u64,
    pub mode: FaultMode,
}

/// What the forge's own request log says a run cost (the fake GitHub: HTTP requests).
#[derive(Debug, Clone, Default)]
pub struct HttpCost {
    pub requests: usize,
    pub writes: usize,
    /// Primary rate-limit units (304s are free).
    pub units: usize,
    pub not_modified: usize,
}

/// The bot's handle for one run: a forge whose calls the world logs ([`log::Logged`]).
pub trait Metered: Forge {
    fn reads(&self) -> u64;
    fn writes(&self) -> u64;
    fn by_method(&self) -> BTreeMap<&'static str, u64>;
}

impl<F: Forge> Metered for log::Logged<F> {
    fn reads(&self) -> u64 {
        log::Logged::reads(self)
    }
    fn writes(&self) -> u64 {
        log::Logged::writes(self)
    }
    fn by_method(&self) -> BTreeMap<&'static str, u64> {
        log::Logged::by_method(self)
    }
}

/// A forge a world lives on.
pub trait Backend {
    /// `local` or `github`.
    fn kind(&self) -> &'static str;
    /// The `forge:` section of `stackbot.yaml` (kind and connection; the world adds the rest).
    fn forge_yaml(&self) -> String;
    /// The environment a run sees (the token, for GitHub).
    fn env(&self) -> Env;
    /// The forge `stackbot release` opens for `loaded`, counted, crashing as `crash` says.
    fn bot(&self, loaded: &Loaded, clock: SharedClock, crash: Option<Crash>) -> Box<dyn Metered>;
    /// The forge's API as a person uses it between runs (the dashboard issue in the web UI):
    /// the bot's client without its answer cache.
    fn person(&self, loaded: &Loaded, clock: SharedClock) -> Box<dyn Forge> {
        self.bot(loaded, clock, None)
    }
    /// Before a run: reset the forge's own counters; `flaky` turns on seeded random failures
    /// (only the fake GitHub has them: 5xx, dropped connections, secondary rate limits).
    fn begin_run(&self, flaky: Option<u64>);
    /// After a run: what the forge's request log says it cost.
    fn end_run(&self) -> Option<HttpCost>;

    // ---- reading back ----
    fn tags(&self, repo: &str) -> BTreeMap<String, String>;
    fn releases(&self, repo: &str) -> Vec<Release>;
    fn asset(&self, repo: &str, release: &Release, name: &str) -> Option<Vec<u8>>;
    fn head(&self, repo: &str, branch: &str) -> Option<String>;
    fn files_at(&self, repo: &str, commit: &str) -> Files;
    fn file_at(&self, repo: &str, commit: &str, path: &str) -> Option<Vec<u8>>;
    fn commit(&self, repo: &str, sha: &str) -> Option<Commit>;
    fn is_ancestor(&self, repo: &str, ancestor: &str, of: &str) -> bool;
    fn merge_base(&self, repo: &str, a: &str, b: &str) -> Option<String>;
    /// Every pull request, in number order.
    fn pulls(&self, repo: &str) -> Vec<Pull>;
    /// `(id, body)` of the comments on an issue or pull request, oldest first.
    fn comments(&self, repo: &str, number: u64) -> Vec<(u64, String)>;

    // ---- what people do ----
    fn create_repo(&self, repo: &str, files: &Files);
    /// Take a repository away (the local forge: deleted, kept aside; GitHub: archived,
    /// read-only) or bring it back as it was.
    fn take_away(&self, repo: &str, gone: bool);
    /// Commit `changes` (`None` deletes) on `branch` (created from the default branch if
    /// missing) as `who`.
    fn push(
        &self,
        repo: &str,
        branch: &str,
        changes: &BTreeMap<String, Option<Vec<u8>>>,
        message: &str,
        who: Who,
    ) -> Result<String, String>;
    fn merge(&self, repo: &str, number: u64, kind: MergeMethod, who: Who)
    -> Result<String, String>;
    /// "Update branch": merge the base into the head of an open pull request.
    fn update_branch(&self, repo: &str, number: u64, who: Who) -> Result<String, String>;
    fn close_pull(&self, repo: &str, number: u64);
    /// Delete a branch (its open pull requests are closed, as GitHub does).
    fn delete_branch(&self, repo: &str, branch: &str);
    fn delete_tag(&self, repo: &str, tag: &str);
    /// Delete every release of `tag` (the tag stays).
    fn delete_release(&self, repo: &str, tag: &str);
}

/// The commits on `head` that `base` does not have, oldest first (first-parent order is not
/// needed: the checks only look at authors and messages).
pub fn commits_between(b: &dyn Backend, repo: &str, base: &str, head: &str) -> Vec<Commit> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut stack = vec![head.to_string()];
    while let Some(s) = stack.pop() {
        if !seen.insert(s.clone()) || b.is_ancestor(repo, &s, base) {
            continue;
        }
        if let Some(c) = b.commit(repo, &s) {
            stack.extend(c.parents.iter().cloned());
            out.push(c);
        }
        if out.len() > 500 {
            break;
        }
    }
    out.reverse();
    out
}
