//! The fake GitHub: the bot talks to it over HTTP with the real GitHub client (retries, pacing,
//! redirects, the OpenAPI conformance checks of every exchange); people press its buttons
//! through its admin interface, which costs no request.

use std::collections::BTreeMap;

use stackbot::clock::SharedClock;
use stackbot::config::Loaded;
use stackbot::env::Env;
use stackbot::forge::Forge;
use stackbot::forge::faulty::{FaultMode, Faulty};
use stackbot::forge::github::GithubForge;

use super::{
    Backend, Commit, Crash, Files, HttpCost, MergeMethod, Metered, PrState, Pull, Release, Who,
};
use crate::support::fake_github::{FakeGithub, FakeOptions, Faults, RandomFaults};

/// The token the fake accepts and the environment variable that carries it.
const TOKEN: &str = "ghp_STACKBOTworldSIMtoken_0123456789";
const TOKEN_ENV: &str = "STACKBOT_SIM_GITHUB_TOKEN";

pub struct Fake {
    pub fake: FakeGithub,
}

impl Fake {
    pub fn start() -> Self {
        Fake {
            fake: FakeGithub::start_with(
                FakeOptions::default()
                    .with_token(TOKEN)
                    .with_conformance(crate::support::fake_github::Conformance::Requests),
            ),
        }
    }
}

impl Backend for Fake {
    fn kind(&self) -> &'static str {
        "github"
    }

    fn forge_yaml(&self) -> String {
        format!(
            "  kind: github\n  github:\n    api_url: {}\n    upload_url: {}\n    token_env: {TOKEN_ENV}\n    max_retries: 4\n    cache_dir: github-cache\n",
            self.fake.api_url(),
            self.fake.upload_url()
        )
    }

    fn env(&self) -> Env {
        Env::default().with(TOKEN_ENV, TOKEN)
    }

    fn bot(&self, loaded: &Loaded, clock: SharedClock, crash: Option<Crash>) -> Box<dyn Metered> {
        let c = &loaded.config.forge;
        // The answer cache of the command line (`forge::open`): ETags kept between runs in
        // the world's `github-cache/`, so a quiet run revalidates for free.
        let forge = stackbot::forge::with_cache(
            GithubForge::new(&c.github, Some(TOKEN.into()), clock).expect("GitHub client"),
            loaded,
        )
        .with_committer(&c.committer);
        let (k, mode) = crash.map_or((0, FaultMode::Before), |c| (c.at_write, c.mode));
        Box::new(super::log::Logged::new(Faulty::new(forge, k, mode)))
    }

    fn person(&self, loaded: &Loaded, clock: SharedClock) -> Box<dyn Forge> {
        // A person in the web UI: no answer cache of the bot's.
        Box::new(
            GithubForge::new(&loaded.config.forge.github, Some(TOKEN.into()), clock)
                .expect("GitHub client"),
        )
    }

    fn begin_run(&self, flaky: Option<u64>) {
        // Every simulated run is an hour after the previous one: a new rate-limit window.
        self.fake.reset_rate_limit();
        self.fake.reset_counts();
        match flaky {
            Some(seed) => self
                .fake
                .set_faults(Faults::random(RandomFaults::flaky(seed))),
            None => self.fake.clear_faults(),
        }
    }

    fn end_run(&self) -> Option<HttpCost> {
        self.fake.clear_faults();
        let c = self.fake.counts();
        Some(HttpCost {
            requests: c.total(),
            writes: c.writes,
            units: c.units,
            not_modified: c.not_modified,
        })
    }

    fn tags(&self, repo: &str) -> BTreeMap<String, String> {
        self.fake.tags(repo)
    }

    fn releases(&self, repo: &str) -> Vec<Release> {
        self.fake
            .releases(repo)
            .into_iter()
            .map(|r| Release {
                id: r.id,
                tag: r.tag,
                draft: r.draft,
                assets: r.assets.into_keys().collect(),
            })
            .collect()
    }

    fn asset(&self, repo: &str, release: &Release, name: &str) -> Option<Vec<u8>> {
        self.fake
            .releases(repo)
            .into_iter()
            .find(|r| r.id == release.id)?
            .assets
            .remove(name)
    }

    fn head(&self, repo: &str, branch: &str) -> Option<String> {
        self.fake.branch_head(repo, branch)
    }

    fn files_at(&self, repo: &str, commit: &str) -> Files {
        self.fake.files_at(repo, commit)
    }

    fn file_at(&self, repo: &str, commit: &str, path: &str) -> Option<Vec<u8>> {
        self.fake.files_at(repo, commit).remove(path)
    }

    fn commit(&self, repo: &str, sha: &str) -> Option<Commit> {
        self.fake.commit_view(repo, sha).map(|c| Commit {
            sha: c.sha,
            parents: c.parents,
            author_email: c.author_email,
            message: c.message,
        })
    }

    fn is_ancestor(&self, repo: &str, ancestor: &str, of: &str) -> bool {
        self.fake.is_ancestor(repo, ancestor, of)
    }

    fn merge_base(&self, repo: &str, a: &str, b: &str) -> Option<String> {
        self.fake.merge_base(repo, a, b)
    }

    fn pulls(&self, repo: &str) -> Vec<Pull> {
        self.fake
            .pulls(repo)
            .into_iter()
            .map(|p| Pull {
                number: p.number,
                head: p.head,
                base: p.base,
                title: p.title,
                body: p.body,
                state: match (p.state.as_str(), p.merged) {
                    ("open", _) => PrState::Open,
                    (_, true) => PrState::Merged,
                    _ => PrState::Closed,
                },
            })
            .collect()
    }

    fn comments(&self, repo: &str, number: u64) -> Vec<(u64, String)> {
        self.fake
            .comments(repo)
            .into_iter()
            .filter(|(_, issue, _)| *issue == number)
            .map(|(id, _, body)| (id, body))
            .collect()
    }

    fn take_away(&self, repo: &str, gone: bool) {
        if gone {
            self.fake.archive_repo(repo);
        } else {
            self.fake.unarchive_repo(repo);
        }
    }

    fn create_repo(&self, repo: &str, files: &Files) {
        self.fake.create_repo_tree(repo, "main", files);
    }

    fn push(
        &self,
        repo: &str,
        branch: &str,
        changes: &BTreeMap<String, Option<Vec<u8>>>,
        message: &str,
        who: Who,
    ) -> Result<String, String> {
        let list: Vec<(&str, Option<&[u8]>)> = changes
            .iter()
            .map(|(p, b)| (p.as_str(), b.as_deref()))
            .collect();
        Ok(self.fake.push_commit(repo, branch, &list, message, who))
    }

    fn merge(
        &self,
        repo: &str,
        number: u64,
        kind: MergeMethod,
        who: Who,
    ) -> Result<String, String> {
        self.fake.try_merge_pull(repo, number, kind, who)
    }

    fn update_branch(&self, repo: &str, number: u64, who: Who) -> Result<String, String> {
        let head = self
            .fake
            .pulls(repo)
            .into_iter()
            .find(|p| p.number == number)
            .and_then(|p| self.fake.branch_head(repo, &p.head));
        match self.fake.try_update_branch(repo, number, who)? {
            new if Some(&new) == head.as_ref() => Err("already up to date".into()),
            new => Ok(new),
        }
    }

    fn close_pull(&self, repo: &str, number: u64) {
        self.fake.close_pull(repo, number);
    }

    fn delete_branch(&self, repo: &str, branch: &str) {
        self.fake.delete_branch(repo, branch);
    }

    fn delete_tag(&self, repo: &str, tag: &str) {
        self.fake.delete_tag(repo, tag);
    }

    fn delete_release(&self, repo: &str, tag: &str) {
        self.fake.delete_releases_of(repo, tag);
    }
}
