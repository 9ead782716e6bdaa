//! The local forge: bare git repositories and release folders in the world's directory. People
//! act through the forge's own API, with their own identity: commits, closing pull requests,
//! deleting releases, and its web-UI stand-ins (`forge::local::human`: the three merge
//! buttons, "Update branch", deleting a branch); only deleting a tag is plain git2.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Repository};
use stackbot::clock::SharedClock;
use stackbot::config::Loaded;
use stackbot::env::Env;
use stackbot::forge::counting::Counting;
use stackbot::forge::faulty::{FaultMode, Faulty};
use stackbot::forge::local::LocalForge;
use stackbot::forge::{Forge, PullInfo, PullState, RepoRef};

use super::{
    Backend, Commit, Crash, Files, HttpCost, MergeMethod, Metered, PrState, Pull, Release, Who,
};

pub struct Local {
    root: PathBuf,
    clock: SharedClock,
}

fn rr(repo: &str) -> RepoRef {
    RepoRef::parse(repo).expect("owner/name")
}

impl Local {
    /// A forge in `root` (created on first use). `clock` dates what people commit.
    pub fn new(root: &Path, clock: SharedClock) -> Self {
        Local {
            root: root.to_path_buf(),
            clock,
        }
    }

    /// The forge's API as a person uses it (their commits carry their identity).
    fn as_person(&self, who: Who) -> LocalForge {
        LocalForge::new(&self.root, who.0, who.1).with_clock(self.clock.clone())
    }

    fn reader(&self) -> LocalForge {
        self.as_person(("reader", "reader@example.invalid"))
    }

    fn git(&self, repo: &str) -> Repository {
        Repository::open_bare(self.reader().repo_path(&rr(repo))).expect("bare repository")
    }

    fn pull_path(&self, repo: &str, number: u64) -> PathBuf {
        let r = rr(repo);
        self.root
            .join("pulls")
            .join(&r.owner)
            .join(&r.name)
            .join(format!("{number}.json"))
    }

    fn read_pull(&self, repo: &str, number: u64) -> Option<PullInfo> {
        let bytes = std::fs::read(self.pull_path(repo, number)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

impl Backend for Local {
    fn kind(&self) -> &'static str {
        "local"
    }

    fn forge_yaml(&self) -> String {
        format!(
            "  kind: local\n  local:\n    path: {}\n",
            self.root.display()
        )
    }

    fn env(&self) -> Env {
        Env::default()
    }

    fn bot(&self, loaded: &Loaded, clock: SharedClock, crash: Option<Crash>) -> Box<dyn Metered> {
        let forge = LocalForge::from_config(loaded, clock).expect("local forge");
        let (k, mode) = crash.map_or((0, FaultMode::Before), |c| (c.at_write, c.mode));
        Box::new(Counting::new(Faulty::new(forge, k, mode)))
    }

    fn begin_run(&self, _flaky: Option<u64>) {}

    fn end_run(&self) -> Option<HttpCost> {
        None
    }

    fn tags(&self, repo: &str) -> BTreeMap<String, String> {
        let r = self.git(repo);
        let mut out = BTreeMap::new();
        for reference in r.references_glob("refs/tags/*").expect("tags").flatten() {
            let Some(name) = reference.shorthand().ok().map(str::to_string) else {
                continue;
            };
            if let Ok(c) = reference.peel(ObjectType::Commit) {
                out.insert(name, c.id().to_string());
            }
        }
        out
    }

    fn releases(&self, repo: &str) -> Vec<Release> {
        self.reader()
            .list_releases(&rr(repo))
            .expect("releases")
            .into_iter()
            .map(|r| Release {
                id: r.id,
                tag: r.tag,
                draft: r.draft,
                assets: r.assets.into_iter().map(|a| a.name).collect(),
            })
            .collect()
    }

    fn asset(&self, repo: &str, release: &Release, name: &str) -> Option<Vec<u8>> {
        let f = self.reader();
        let info = f
            .list_releases(&rr(repo))
            .ok()?
            .into_iter()
            .find(|r| r.id == release.id)?;
        let a = info.assets.iter().find(|a| a.name == name)?;
        f.download_asset(&rr(repo), release.id, a).ok()
    }

    fn head(&self, repo: &str, branch: &str) -> Option<String> {
        self.reader().branch_head(&rr(repo), branch).ok().flatten()
    }

    fn files_at(&self, repo: &str, commit: &str) -> Files {
        let r = self.git(repo);
        let mut out = Files::new();
        let Some(tree) = Oid::from_str(commit)
            .ok()
            .and_then(|o| r.find_commit(o).ok())
            .and_then(|c| c.tree().ok())
        else {
            return out;
        };
        let _ = tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(ObjectType::Blob)
                && let Ok(b) = r.find_blob(entry.id())
            {
                out.insert(
                    format!("{dir}{}", entry.name().unwrap_or_default()),
                    b.content().to_vec(),
                );
            }
            git2::TreeWalkResult::Ok
        });
        out
    }

    fn file_at(&self, repo: &str, commit: &str, path: &str) -> Option<Vec<u8>> {
        let r = self.git(repo);
        let tree = r
            .find_commit(Oid::from_str(commit).ok()?)
            .ok()?
            .tree()
            .ok()?;
        let entry = tree.get_path(Path::new(path)).ok()?;
        Some(r.find_blob(entry.id()).ok()?.content().to_vec())
    }

    fn commit(&self, repo: &str, sha: &str) -> Option<Commit> {
        let r = self.git(repo);
        let c = r.find_commit(Oid::from_str(sha).ok()?).ok()?;
        Some(Commit {
            sha: sha.to_string(),
            parents: c.parent_ids().map(|p| p.to_string()).collect(),
            author_email: c.author().email().unwrap_or_default().to_string(),
            message: c.message().unwrap_or_default().to_string(),
        })
    }

    fn is_ancestor(&self, repo: &str, ancestor: &str, of: &str) -> bool {
        let r = self.git(repo);
        let (Ok(a), Ok(b)) = (Oid::from_str(ancestor), Oid::from_str(of)) else {
            return false;
        };
        a == b || r.graph_descendant_of(b, a).unwrap_or(false)
    }

    fn merge_base(&self, repo: &str, a: &str, b: &str) -> Option<String> {
        let r = self.git(repo);
        r.merge_base(Oid::from_str(a).ok()?, Oid::from_str(b).ok()?)
            .ok()
            .map(|o| o.to_string())
    }

    fn pulls(&self, repo: &str) -> Vec<Pull> {
        let r = rr(repo);
        let dir = self.root.join("pulls").join(&r.owner).join(&r.name);
        let mut out: Vec<Pull> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .filter_map(|e| serde_json::from_slice::<PullInfo>(&std::fs::read(e.path()).ok()?).ok())
            .map(|p| Pull {
                number: p.number,
                head: p.head,
                base: p.base,
                title: p.title,
                body: p.body,
                state: match p.state {
                    PullState::Open => PrState::Open,
                    PullState::Closed => PrState::Closed,
                    PullState::Merged => PrState::Merged,
                },
            })
            .collect();
        out.sort_by_key(|p| p.number);
        out
    }

    fn comments(&self, repo: &str, number: u64) -> Vec<(u64, String)> {
        self.reader()
            .list_comments(&rr(repo), number)
            .unwrap_or_default()
            .into_iter()
            .map(|c| (c.id, c.body))
            .collect()
    }

    fn create_repo(&self, repo: &str, files: &Files) {
        let seed = self.root.join("seeds").join(repo);
        for (p, b) in files {
            let f = seed.join(p);
            std::fs::create_dir_all(f.parent().expect("parent")).expect("seed dir");
            std::fs::write(f, b).expect("seed file");
        }
        self.as_person(("Seed", "seed@example.com"))
            .with_seed(rr(repo), &seed)
            .ensure_repo(&rr(repo), "main")
            .expect("create repository");
    }

    fn push(
        &self,
        repo: &str,
        branch: &str,
        changes: &BTreeMap<String, Option<Vec<u8>>>,
        message: &str,
        who: Who,
    ) -> Result<String, String> {
        let f = self.as_person(who);
        let r = rr(repo);
        let head = f.branch_head(&r, branch).map_err(|e| e.to_string())?;
        let parent = match &head {
            Some(h) => h.clone(),
            None => f
                .branch_head(&r, "main")
                .map_err(|e| e.to_string())?
                .ok_or("no main branch")?,
        };
        f.commit(&r, branch, &parent, head.as_deref(), changes, message)
            .map_err(|e| e.to_string())
    }

    fn merge(
        &self,
        repo: &str,
        number: u64,
        kind: MergeMethod,
        who: Who,
    ) -> Result<String, String> {
        self.as_person(who)
            .merge_pull_with(&rr(repo), number, kind)
            .map_err(|e| e.to_string())
    }

    fn update_branch(&self, repo: &str, number: u64, who: Who) -> Result<String, String> {
        let f = self.as_person(who);
        let head = self
            .read_pull(repo, number)
            .ok_or("no such pull request")?
            .head;
        let before = f.branch_head(&rr(repo), &head).map_err(|e| e.to_string())?;
        match f
            .update_pull_branch(&rr(repo), number)
            .map_err(|e| e.to_string())?
        {
            new if Some(&new) == before.as_ref() => Err("already up to date".into()),
            new => Ok(new),
        }
    }

    fn close_pull(&self, repo: &str, number: u64) {
        let _ = self
            .as_person(("Maintainer", "maintainer@example.com"))
            .close_pull(&rr(repo), number);
    }

    fn delete_branch(&self, repo: &str, branch: &str) {
        let _ = self
            .as_person(("Maintainer", "maintainer@example.com"))
            .delete_branch(&rr(repo), branch);
        for p in self.pulls(repo) {
            if p.head == branch && p.state == PrState::Open {
                self.close_pull(repo, p.number);
            }
        }
    }

    fn delete_tag(&self, repo: &str, tag: &str) {
        let _ = self.git(repo).tag_delete(tag);
    }

    fn delete_release(&self, repo: &str, tag: &str) {
        let f = self.as_person(("Maintainer", "maintainer@example.com"));
        for r in f.list_releases(&rr(repo)).unwrap_or_default() {
            if r.tag == tag {
                let _ = f.delete_release(&rr(repo), r.id);
            }
        }
    }
}
