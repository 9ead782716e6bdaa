//! Releases and their assets: drafts, uploads (to the upload host GitHub names), downloads,
//! publishing and deletion.

use http::Method;
use serde_json::{Value, json};

use super::locked;
use super::redirects::Via;
use super::transport::Req;
use super::wire::scope_of;
use super::{GithubForge, enc, str_of, time_of};
use crate::net::Origin;
use crate::{AssetInfo, ForgeError, ForgeResult, ReleaseInfo, RepoRef};

impl GithubForge {
    pub(super) fn release_of(&self, v: &Value) -> ReleaseInfo {
        let id = v["id"].as_u64().unwrap_or_default();
        if let Some(u) = v["upload_url"].as_str() {
            locked(&self.upload_urls).insert(id, u.to_string());
        }
        ReleaseInfo {
            id,
            tag: str_of(&v["tag_name"]),
            name: v["name"].as_str().map(str::to_string),
            draft: v["draft"].as_bool().unwrap_or(false),
            prerelease: v["prerelease"].as_bool().unwrap_or(false),
            body: str_of(&v["body"]),
            assets: v["assets"]
                .as_array()
                .map(|a| a.iter().map(asset_of).collect())
                .unwrap_or_default(),
            html_url: str_of(&v["html_url"]),
            published_at: time_of(&v["published_at"]),
        }
    }

    pub(super) async fn list_releases_a(&self, repo: &RepoRef) -> ForgeResult<Vec<ReleaseInfo>> {
        let what = format!("releases of {repo}");
        let path = format!("{}/releases?per_page=100", Self::repo_path(repo));
        let all = self.get_all(&what, path, None).await?;
        Ok(all.iter().map(|v| self.release_of(v)).collect())
    }

    pub(super) async fn create_draft_a(
        &self,
        repo: &RepoRef,
        tag: &str,
        name: &str,
        body: &str,
        prerelease: bool,
    ) -> ForgeResult<ReleaseInfo> {
        let what = format!("draft release `{tag}` in {repo}");
        let req = Req::json(
            Method::POST,
            format!("{}/releases", Self::repo_path(repo)),
            &json!({"tag_name": tag, "name": name, "body": body, "draft": true,
                    "prerelease": prerelease}),
        );
        self.write_checked(
            &what,
            &req,
            |r| Ok(self.release_of(&r.json(&what)?)),
            async || {
                // Drafts are invisible to get-by-tag: list and take the newest matching draft.
                let mut found: Vec<ReleaseInfo> = self
                    .list_releases_a(repo)
                    .await?
                    .into_iter()
                    .filter(|r| {
                        r.draft
                            && r.prerelease == prerelease
                            && r.tag == tag
                            && r.name.as_deref() == Some(name)
                            && r.body == body
                    })
                    .collect();
                found.sort_by_key(|r| r.id);
                Ok(found.pop())
            },
        )
        .await
    }

    /// Where the upload client sends release `release_id`'s assets (its `upload_url`).
    pub(super) async fn upload_target(
        &self,
        repo: &RepoRef,
        release_id: u64,
    ) -> ForgeResult<String> {
        let what = format!("release {release_id} of {repo}");
        let cached = locked(&self.upload_urls).get(&release_id).cloned();
        let template = match cached {
            Some(t) => t,
            None => {
                let path = format!("{}/releases/{release_id}", Self::repo_path(repo));
                let v = self.get_json(&what, &path).await?;
                self.release_of(&v);
                str_of(&v["upload_url"])
            }
        };
        let url = template.split('{').next().unwrap_or_default();
        let u: http::Uri = url.parse().map_err(|_| ForgeError::Io {
            what: what.clone(),
            reason: format!("GitHub returned an unparsable upload_url `{template}`"),
        })?;
        let path = u.path().to_string();
        let o = Origin::of(&u);
        if o.as_ref() == Some(&self.upload_origin) {
            Ok(path)
        } else if o.as_ref() == Some(&self.api_origin) {
            // GitHub's own API host, outside the configured upload host: send it there as
            // written (an absolute URL, so no API base path such as /api/v3 is prepended).
            Ok(format!("{}{path}", self.api_origin))
        } else {
            let o = o.map_or_else(|| url.to_string(), |o| o.to_string());
            Err(ForgeError::Rejected {
                what,
                reason: format!(
                    "its upload_url points at `{o}`, which is neither the API host nor \
                     `forge.github.upload_url` (`{}`); set `forge.github.upload_url` to that host",
                    self.upload_origin
                ),
            })
        }
    }

    pub(super) async fn release_assets(
        &self,
        repo: &RepoRef,
        release_id: u64,
    ) -> ForgeResult<Vec<Value>> {
        let what = format!("assets of release {release_id} in {repo}");
        let path = format!("{}/releases/{release_id}/assets", Self::repo_path(repo));
        self.get_all(&what, format!("{path}?per_page=100"), None)
            .await
    }

    pub(super) async fn upload_asset_a(
        &self,
        repo: &RepoRef,
        release_id: u64,
        name: &str,
        bytes: &[u8],
    ) -> ForgeResult<AssetInfo> {
        let what = format!("asset `{name}` of release {release_id} in {repo}");
        let path = self.upload_target(repo, release_id).await?;
        let req = Req {
            method: Method::POST,
            body: Some((bytes.to_vec(), "application/octet-stream")),
            target: Via::Upload,
            scope: Some(scope_of(repo)),
            ..Req::get(format!("{path}?name={}", enc(name, false)))
        };
        let uploaded = self
            .write_checked(
                &what,
                &req,
                |r| Ok(asset_of(&r.json(&what)?)),
                async || {
                    let assets = self.release_assets(repo, release_id).await?;
                    let Some(a) = assets.iter().find(|a| a["name"].as_str() == Some(name)) else {
                        return Ok(None);
                    };
                    let complete = a["size"].as_u64() == Some(bytes.len() as u64)
                        && a["state"].as_str().is_none_or(|s| s == "uploaded");
                    if complete {
                        return Ok(Some(asset_of(a)));
                    }
                    // A partial upload blocks the name: remove it, then upload again.
                    let id = a["id"].as_u64().unwrap_or_default();
                    self.delete_asset_a(repo, release_id, id).await?;
                    Ok(None)
                },
            )
            .await?;
        // The bytes of an asset id never change: the next run reads them from the cache.
        if uploaded.size == bytes.len() as u64 {
            self.t
                .remember_immutable(&self.download_req(repo, uploaded.id), bytes);
        }
        Ok(uploaded)
    }

    fn download_req(&self, repo: &RepoRef, asset_id: u64) -> Req {
        Req::download(format!(
            "{}/releases/assets/{asset_id}",
            Self::repo_path(repo)
        ))
    }

    pub(super) async fn download_asset_a(
        &self,
        repo: &RepoRef,
        asset: &AssetInfo,
    ) -> ForgeResult<Vec<u8>> {
        let what = format!("asset `{}` in {repo}", asset.name);
        if asset.size > crate::RELEASE_FILE_CEILING {
            return Err(ForgeError::Rejected {
                what,
                reason: format!(
                    "GitHub lists {} bytes for it, more than the {} bytes a release file may have",
                    asset.size,
                    crate::RELEASE_FILE_CEILING
                ),
            });
        }
        // Read what GitHub lists, no more (a storage host that sends more is refused before
        // the rest is held) and no less (a cut answer is asked again, never kept).
        let req = Req {
            length: super::wire::Length::Listed(asset.size),
            ..self.download_req(repo, asset.id)
        };
        let got = self.read_ok(&what, &req).await;
        got.map(|r| r.body)
            .map_err(|e| super::transport::relabel(&what, e))
    }

    pub(super) async fn delete_asset_a(
        &self,
        repo: &RepoRef,
        _release: u64,
        id: u64,
    ) -> ForgeResult<()> {
        let what = format!("asset {id} in {repo}");
        let path = format!("{}/releases/assets/{id}", Self::repo_path(repo));
        self.delete(&what, path).await
    }

    /// Publish with `make_latest` said explicitly (GitHub's default, `"true"` for a newly
    /// published release, would put the Latest badge on an older minor's patch).
    pub(super) async fn publish_a(
        &self,
        repo: &RepoRef,
        id: u64,
        make_latest: bool,
    ) -> ForgeResult<ReleaseInfo> {
        let what = format!("release {id} of {repo}");
        let path = format!("{}/releases/{id}", Self::repo_path(repo));
        let body =
            json!({"draft": false, "make_latest": if make_latest { "true" } else { "false" }});
        let r = self.write_json(&what, Method::PATCH, path, &body).await?;
        Ok(self.release_of(&r.json(&what)?))
    }

    pub(super) async fn latest_release_a(
        &self,
        repo: &RepoRef,
    ) -> ForgeResult<Option<ReleaseInfo>> {
        let what = format!("latest release of {repo}");
        let path = format!("{}/releases/latest", Self::repo_path(repo));
        Ok(self
            .get_opt(&what, &path)
            .await?
            .map(|v| self.release_of(&v)))
    }

    pub(super) async fn delete_release_a(&self, repo: &RepoRef, id: u64) -> ForgeResult<()> {
        let what = format!("release {id} of {repo}");
        self.delete(&what, format!("{}/releases/{id}", Self::repo_path(repo)))
            .await
    }
}

fn asset_of(v: &Value) -> AssetInfo {
    AssetInfo {
        id: v["id"].as_u64().unwrap_or_default(),
        name: str_of(&v["name"]),
        size: v["size"].as_u64().unwrap_or_default(),
        sha256: v["digest"]
            .as_str()
            .and_then(|d| d.strip_prefix("sha256:"))
            .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
            .map(str::to_ascii_lowercase),
    }
}
