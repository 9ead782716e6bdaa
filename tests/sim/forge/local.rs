//! The local forge: bare git repositories and release folders in the world's directory. People
//! act through the forge's own API, with their own identity: commits, closing pull requests,
//! deleting releases, and its web-UI stand-ins (`forge::local::human`: the three merge
//! buttons, "Update branch", deleting a branch); only deleting a tag is plain git2. The checks
//! read the forge's folder directly (git2 on the bare repositories, the JSON records of
//! releases, pull requests and comments), never through the forge's API.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Repository};
use stackbot::clock::SharedClock;
use stackbot::config::Loaded;
use stackbot::env::Env;
use stackbot::forge::faulty::{FaultMode, Faulty};
use stackbot::forge::local::LocalForge;
use stackbot::forge::{Forge, RepoRef};

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

    /// `<forge>/repos/<owner>/<name>.git`, opened with git2 directly.
    fn git(&self, repo: &str) -> Repository {
        let (owner, name) = repo.split_once('/').expect("owner/name");
        Repository::open_bare(
            self.root
                .join("repos")
                .join(owner)
                .join(format!("{name}.git")),
        )
        .expect("bare repository")
    }

    /// `<forge>/<kind>/<owner>/<name>`: where the forge keeps a repository's releases, pull
    /// requests and comments on disk.
    fn dir(&self, kind: &str, repo: &str) -> PathBuf {
        let (owner, name) = repo.split_once('/').expect("owner/name");
        self.root.join(kind).join(owner).join(name)
    }
}

/// The JSON records in `dir`: `<n>.json` files, or with `nested` `<id>/release.json`.
fn json_files(dir: &Path, nested: bool) -> Vec<serde_json::Value> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let p = if nested {
                e.path().join("release.json")
            } else if e.file_name().to_string_lossy().ends_with(".json") {
                e.path()
            } else {
                return None;
            };
            serde_json::from_slice(&std::fs::read(p).ok()?).ok()
        })
        .collect()
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
        Box::new(super::log::Logged::new(Faulty::new(forge, k, mode)))
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
        // `releases/<owner>/<name>/<id>/release.json`, read as plain JSON.
        let mut out: Vec<Release> = json_files(&self.dir("releases", repo), true)
            .into_iter()
            .filter_map(|v| {
                Some(Release {
                    id: v["id"].as_u64()?,
                    tag: v["tag"].as_str()?.to_string(),
                    draft: v["draft"].as_bool()?,
                    assets: v["assets"]
                        .as_array()?
                        .iter()
                        .filter_map(|a| Some(a["name"].as_str()?.to_string()))
                        .collect(),
                })
            })
            .collect();
        out.sort_by_key(|r| r.id);
        out
    }

    fn asset(&self, repo: &str, release: &Release, name: &str) -> Option<Vec<u8>> {
        std::fs::read(
            self.dir("releases", repo)
                .join(release.id.to_string())
                .join("assets")
                .join(name),
        )
        .ok()
    }

    fn head(&self, repo: &str, branch: &str) -> Option<String> {
        let (owner, name) = repo.split_once('/').expect("owner/name");
        if !self
            .root
            .join("repos")
            .join(owner)
            .join(format!("{name}.git"))
            .exists()
        {
            return None; // deleted
        }
        let r = self.git(repo);
        let b = r.find_branch(branch, git2::BranchType::Local).ok()?;
        Some(b.get().peel_to_commit().ok()?.id().to_string())
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
        // `pulls/<owner>/<name>/<number>.json`, read as plain JSON.
        let mut out: Vec<Pull> = json_files(&self.dir("pulls", repo), false)
            .into_iter()
            .filter_map(|p| {
                Some(Pull {
                    number: p["number"].as_u64()?,
                    head: p["head"].as_str()?.to_string(),
                    base: p["base"].as_str()?.to_string(),
                    title: p["title"].as_str()?.to_string(),
                    body: p["body"].as_str()?.to_string(),
                    state: match p["state"].as_str()? {
                        "open" => PrState::Open,
                        "merged" => PrState::Merged,
                        _ => PrState::Closed,
                    },
                })
            })
            .collect();
        out.sort_by_key(|p| p.number);
        out
    }

    fn comments(&self, repo: &str, number: u64) -> Vec<(u64, String)> {
        // `comments/<owner>/<name>/<id>.json`: `{id, issue, body}`, oldest (lowest id) first.
        let mut out: Vec<(u64, String)> = json_files(&self.dir("comments", repo), false)
            .into_iter()
            .filter(|c| c["issue"].as_u64() == Some(number))
            .filter_map(|c| Some((c["id"].as_u64()?, c["body"].as_str()?.to_string())))
            .collect();
        out.sort_by_key(|c| c.0);
        out
    }

    fn take_away(&self, repo: &str, gone: bool) {
        let (owner, name) = repo.split_once('/').expect("owner/name");
        let dir = self.root.join("repos").join(owner);
        let (here, aside) = (
            dir.join(format!("{name}.git")),
            dir.join(format!("{name}.gone")),
        );
        let _ = if gone {
            std::fs::rename(here, aside)
        } else {
            std::fs::rename(aside, here)
        };
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
            .pulls(repo)
            .into_iter()
            .find(|p| p.number == number)
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
