//! Releases of the local forge: one folder per release with its `release.json` manifest (the
//! source of truth) and its assets, built under a temporary name and renamed whole. Like
//! GitHub, several drafts may carry one tag but only one release of a tag is published, and
//! the *Latest* pin follows `make_latest`.

use std::fs;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::LocalForge;
use super::files::{fs_err, numbered_records, read_record, write_atomic, write_record};
use crate::{AssetInfo, ForgeError, ForgeResult, ReleaseInfo, RepoRef};

/// The manifest of one release, stored as `release.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Manifest {
    id: u64,
    tag: String,
    name: Option<String>,
    draft: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    prerelease: bool,
    body: String,
    assets: Vec<AssetInfo>,
    /// Set when published (absent in manifests written before the forge kept it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    published_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl LocalForge {
    pub(super) fn releases_dir(&self, repo: &RepoRef) -> PathBuf {
        self.root
            .join("releases")
            .join(&repo.owner)
            .join(&repo.name)
    }

    /// The folder of release `id`.
    fn release_dir(&self, repo: &RepoRef, id: u64) -> PathBuf {
        self.releases_dir(repo).join(id.to_string())
    }

    /// The file of asset `name` of release `id`.
    fn asset_path(&self, repo: &RepoRef, id: u64, name: &str) -> PathBuf {
        self.release_dir(repo, id).join("assets").join(name)
    }

    pub(super) fn read_manifest(&self, repo: &RepoRef, id: u64) -> ForgeResult<Manifest> {
        read_record(&self.release_dir(repo, id).join("release.json"), || {
            format!("release {id} of {repo}")
        })
    }

    pub(super) fn write_manifest(&self, repo: &RepoRef, m: &Manifest) -> ForgeResult<()> {
        write_record(&self.release_dir(repo, m.id).join("release.json"), m)
    }

    pub(super) fn manifests(&self, repo: &RepoRef) -> ForgeResult<Vec<Manifest>> {
        // Folders named by the id (temporary ones of interrupted creations start with a dot).
        let mut out = numbered_records(&self.releases_dir(repo), "")?
            .into_iter()
            .map(|id| self.read_manifest(repo, id))
            .collect::<ForgeResult<Vec<_>>>()?;
        // Newest first, like GitHub.
        out.sort_by_key(|m| std::cmp::Reverse(m.id));
        Ok(out)
    }

    pub(super) fn info(&self, repo: &RepoRef, m: &Manifest) -> ReleaseInfo {
        ReleaseInfo {
            id: m.id,
            tag: m.tag.clone(),
            name: m.name.clone(),
            draft: m.draft,
            prerelease: m.prerelease,
            body: m.body.clone(),
            assets: m.assets.clone(),
            html_url: format!("file://{}", self.release_dir(repo, m.id).display()),
            published_at: m.published_at,
        }
    }

    /// `<releases>/latest`: the release pinned as *Latest* (`none`: explicitly none). Without
    /// the file, like GitHub's legacy rule, the newest published release is Latest.
    pub(super) fn latest_pin_path(&self, repo: &RepoRef) -> PathBuf {
        self.releases_dir(repo).join("latest")
    }

    /// The *Latest* release id, ignoring `except` when falling back to the newest.
    pub(super) fn latest_of(
        &self,
        repo: &RepoRef,
        ms: &[Manifest],
        except: Option<u64>,
    ) -> ForgeResult<Option<u64>> {
        // Pre-releases are never Latest, as on GitHub.
        let published = |id: u64| ms.iter().any(|m| m.id == id && !m.draft && !m.prerelease);
        let newest = || {
            ms.iter()
                .filter(|m| !m.draft && !m.prerelease && Some(m.id) != except)
                .map(|m| m.id)
                .max()
        };
        let path = self.latest_pin_path(repo);
        match fs::read_to_string(&path) {
            Ok(s) if s.trim() == "none" => Ok(None),
            Ok(s) => match s.trim().parse::<u64>() {
                Ok(id) if published(id) && Some(id) != except => Ok(Some(id)),
                _ => Ok(newest()),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(newest()),
            Err(e) => Err(fs_err(path.display().to_string(), e)),
        }
    }

    /// Apply `make_latest` for a just-published release (caller holds the repository lock):
    /// `true` pins it; `false` pins whatever else is Latest now, so it cannot become Latest.
    pub(super) fn pin_latest(&self, repo: &RepoRef, id: u64, make_latest: bool) -> ForgeResult<()> {
        let pin = if make_latest {
            Some(id)
        } else {
            self.latest_of(repo, &self.manifests(repo)?, Some(id))?
        };
        let text = pin.map_or_else(|| "none".to_string(), |id| id.to_string());
        let path = self.latest_pin_path(repo);
        write_atomic(&path, format!("{text}\n").as_bytes())
            .map_err(|e| fs_err(path.display().to_string(), e))
    }

    pub(super) fn list_releases_impl(&self, repo: &RepoRef) -> ForgeResult<Vec<ReleaseInfo>> {
        Ok(self
            .manifests(repo)?
            .iter()
            .map(|m| self.info(repo, m))
            .collect())
    }

    pub(super) fn create_draft_release_impl(
        &self,
        repo: &RepoRef,
        tag: &str,
        name: &str,
        body: &str,
        prerelease: bool,
    ) -> ForgeResult<ReleaseInfo> {
        let _g = self.repo_lock(repo)?;
        if self
            .manifests(repo)?
            .iter()
            .any(|m| m.tag == tag && !m.draft)
        {
            return Err(ForgeError::AlreadyExists {
                what: format!("a published release of tag {tag} in {repo}"),
            });
        }
        let id = self.next_id()?;
        let m = Manifest {
            id,
            tag: tag.into(),
            name: Some(name.into()),
            draft: true,
            prerelease,
            body: body.into(),
            assets: Vec::new(),
            published_at: None,
        };
        let dir = self.releases_dir(repo);
        let what = format!("create release {tag} of {repo}");
        let tmp = dir.join(format!(".{id}.tmp"));
        let _ = fs::remove_dir_all(&tmp);
        fs::create_dir_all(tmp.join("assets")).map_err(|e| fs_err(&what, e))?;
        let bytes = serde_json::to_vec_pretty(&m).expect("manifest serializes");
        write_atomic(&tmp.join("release.json"), &bytes).map_err(|e| fs_err(&what, e))?;
        fs::rename(&tmp, dir.join(id.to_string())).map_err(|e| fs_err(&what, e))?;
        Ok(self.info(repo, &m))
    }

    pub(super) fn upload_asset_impl(
        &self,
        repo: &RepoRef,
        release_id: u64,
        name: &str,
        bytes: &[u8],
    ) -> ForgeResult<AssetInfo> {
        let _g = self.repo_lock(repo)?;
        let mut m = self.read_manifest(repo, release_id)?;
        let what = format!("asset {name} of release {} in {repo}", m.tag);
        if name.is_empty() || name.contains('/') || name.starts_with('.') {
            return Err(ForgeError::Rejected {
                what,
                reason: "asset names must be plain file names".into(),
            });
        }
        if m.assets.iter().any(|a| a.name == name) {
            return Err(ForgeError::AlreadyExists { what });
        }
        let id = self.next_id()?;
        let path = self.asset_path(repo, release_id, name);
        write_atomic(&path, bytes).map_err(|e| fs_err(&what, e))?;
        let asset = AssetInfo {
            id,
            name: name.into(),
            size: bytes.len() as u64,
            sha256: None,
        };
        m.assets.push(asset.clone());
        self.write_manifest(repo, &m)?;
        Ok(asset)
    }

    pub(super) fn download_asset_impl(
        &self,
        repo: &RepoRef,
        release_id: u64,
        asset: &AssetInfo,
    ) -> ForgeResult<Vec<u8>> {
        let m = self.read_manifest(repo, release_id)?;
        let Some(a) = m.assets.iter().find(|a| a.id == asset.id) else {
            return Err(ForgeError::NotFound {
                what: format!("asset {} of release {}", asset.name, m.tag),
            });
        };
        let path = self.asset_path(repo, release_id, &a.name);
        fs::read(&path).map_err(|e| fs_err(path.display().to_string(), e))
    }

    pub(super) fn delete_asset_impl(
        &self,
        repo: &RepoRef,
        release_id: u64,
        asset_id: u64,
    ) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let mut m = self.read_manifest(repo, release_id)?;
        let Some(pos) = m.assets.iter().position(|a| a.id == asset_id) else {
            return Err(ForgeError::NotFound {
                what: format!("asset {asset_id} of release {}", m.tag),
            });
        };
        let a = m.assets.remove(pos);
        self.write_manifest(repo, &m)?;
        let _ = fs::remove_file(self.asset_path(repo, release_id, &a.name));
        Ok(())
    }

    pub(super) fn publish_release_impl(
        &self,
        repo: &RepoRef,
        release_id: u64,
        make_latest: bool,
    ) -> ForgeResult<ReleaseInfo> {
        let _g = self.repo_lock(repo)?;
        let mut m = self.read_manifest(repo, release_id)?;
        let make_latest = make_latest && !m.prerelease;
        if !m.draft {
            self.pin_latest(repo, release_id, make_latest)?;
            return Ok(self.info(repo, &m));
        }
        if self
            .manifests(repo)?
            .iter()
            .any(|o| o.tag == m.tag && !o.draft && o.id != m.id)
        {
            return Err(ForgeError::AlreadyExists {
                what: format!("a published release of tag {} in {repo}", m.tag),
            });
        }
        m.draft = false;
        m.published_at = Some(self.clock.now());
        self.write_manifest(repo, &m)?;
        self.pin_latest(repo, release_id, make_latest)?;
        Ok(self.info(repo, &m))
    }

    pub(super) fn latest_release_impl(&self, repo: &RepoRef) -> ForgeResult<Option<ReleaseInfo>> {
        let ms = self.manifests(repo)?;
        let id = self.latest_of(repo, &ms, None)?;
        Ok(ms
            .iter()
            .find(|m| Some(m.id) == id)
            .map(|m| self.info(repo, m)))
    }

    pub(super) fn delete_release_impl(&self, repo: &RepoRef, release_id: u64) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let path = self.release_dir(repo, release_id);
        if !path.exists() {
            return Err(ForgeError::NotFound {
                what: format!("release {release_id} of {repo}"),
            });
        }
        // Rename first (atomic disappearance), then remove the files at leisure.
        let trash = self
            .releases_dir(repo)
            .join(format!(".{release_id}.deleted.{}", fastrand::u64(..)));
        fs::rename(&path, &trash).map_err(|e| fs_err(format!("delete release {release_id}"), e))?;
        let _ = fs::remove_dir_all(&trash);
        Ok(())
    }
}
