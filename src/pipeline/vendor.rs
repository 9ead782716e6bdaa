//! `helm dependency update` for one release set: the chart archives a set pins that the
//! templates vendor in another version only are fetched from their chart repository, checked
//! against the index's digest (and the set's), and put into the templates. The one path by
//! which both `render --release-set` (which writes them into the template directory) and
//! `plan`/`release` (whose release commit adds them to the templates in the repository) bring
//! another minor's archives; see docs/adopt.md, "Vendored chart archives".

use std::collections::BTreeMap;

use crate::model::ReleaseSet;
use crate::render::{self, TemplateTree};

use super::{Context, Error};

/// One archive brought into the templates.
#[derive(Debug, Clone)]
pub struct Brought {
    /// Path inside the template directory (`cluster-addon/charts/<chart>-<version>.tgz`).
    pub path: String,
    pub bytes: Vec<u8>,
    /// Where it came from and what vouches for it, for the run's output.
    pub line: String,
}

/// Fetch every archive `set` needs that `templates` lack (nothing when none is needed: no
/// network then), checked, into `templates` in memory. The set records each archive's digest
/// and, when it had none, the moment it was locked (now, as Helm writes `generated`), so the
/// lock that records the set renders the same `Chart.lock` offline ever after.
pub fn bring_archives(
    ctx: &Context,
    mirrors: &[(String, String)],
    templates: &mut TemplateTree,
    set: &mut ReleaseSet,
) -> Result<Vec<Brought>, Error> {
    let needed = render::archives_to_fetch(templates, set);
    if needed.is_empty() {
        return Ok(Vec::new());
    }
    let limits = &ctx.loaded.config.limits.upstream;
    let opts = crate::upstream::http::HttpOptions {
        mirrors: mirrors.to_vec(),
        clock: Some(ctx.clock.clone()),
        max_bytes: limits.max_bytes,
        ..Default::default()
    };
    let http = crate::upstream::http::HttpClient::new(opts).map_err(|e| {
        Error::from(Box::new(crate::charts::FetchError::Unreachable {
            what: "preparing to fetch",
            chart: needed[0].chart.clone(),
            version: needed[0].version.clone(),
            source: e,
        }))
    })?;
    let bound = crate::upstream::http::Bound {
        bytes: limits.max_bytes,
        setting: "limits.upstream.max_bytes",
    };
    let yaml = limits.yaml();
    let now = crate::package::chart::go_time(&ctx.clock.now().fixed_offset());
    let mut indexes = BTreeMap::new();
    let mut out = Vec::new();
    for need in needed {
        let fetched = crate::charts::fetch_archive(&http, &need, bound, &yaml, &mut indexes)
            .map_err(|e| {
                Error::from(e).context(format!(
                    "fetching the chart archive {} for {} {}",
                    need.path(),
                    set.stack,
                    set.kubernetes
                ))
            })?;
        if let Some(c) = need
            .component
            .as_ref()
            .and_then(|k| set.components.get_mut(k))
        {
            c.digest.get_or_insert_with(|| fetched.digest.clone());
            c.locked_at.get_or_insert_with(|| now.clone());
        }
        templates.files.insert(need.path(), fetched.bytes.clone());
        out.push(Brought {
            path: need.path(),
            line: format!(
                "fetched {} from {} (sha256 {}, the index's digest)",
                need.path(),
                fetched.url,
                fetched.digest
            ),
            bytes: fetched.bytes,
        });
    }
    Ok(out)
}
