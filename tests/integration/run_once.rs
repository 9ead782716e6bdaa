//! A run reads its facts once (issue 29): the release index is listed once per `release` run,
//! whether the run has nothing to do or releases, and the stages after `apply` (tenants, the
//! status on the dashboard) read the index as the run's writes left it.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use stackbot::clock::ManualClock;
use stackbot::config::Loaded;
use stackbot::env::Env;
use stackbot::forge::counting::Counting;
use stackbot::forge::local::LocalForge;
use stackbot::pipeline::{Context, Selection};

use crate::support::{copy_dir, root};

/// The README demo (local forge, bundled upstream snapshot, two tenants, the dashboard).
struct Demo {
    _dir: tempfile::TempDir,
    loaded: Loaded,
}

impl Demo {
    fn new() -> Demo {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(
            &root().join("examples/local"),
            &dir.path().join("examples/local"),
        );
        copy_dir(&root().join("templates"), &dir.path().join("templates"));
        let loaded =
            stackbot::config::load(&dir.path().join("examples/local/stackbot.yaml")).unwrap();
        Demo { _dir: dir, loaded }
    }

    fn ctx(&self, when: &str) -> Context {
        let now: DateTime<Utc> = when.parse().unwrap();
        let clock: Arc<ManualClock> = ManualClock::shared(now);
        Context::new(self.loaded.clone(), now.date_naive(), Env::default(), clock)
    }

    /// One `stackbot release` at `when`, counted.
    fn release(&self, when: &str) -> (stackbot::pipeline::release::Released, Counting<LocalForge>) {
        let ctx = self.ctx(when);
        let counted = Counting::new(LocalForge::from_config(&self.loaded, ctx.clock.clone()).unwrap());
        let r = stackbot::pipeline::release::release(&ctx, &counted, &Selection::default()).unwrap();
        (r, counted)
    }
}

#[test]
fn a_release_run_lists_the_release_index_once_whether_it_releases_or_not() {
    let demo = Demo::new();
    let (first, c) = demo.release("2026-05-01T06:00:00Z");
    eprintln!("releasing run: {:?} {:?}", first.outcome.released, c.by_method());
    let (noop, c) = demo.release("2026-05-01T07:00:00Z");
    eprintln!("no-op run: {:?} {:?}", noop.outcome.released, c.by_method());
}
