//! Fetching a vendored chart's archive from its chart repository, as `helm dependency update`
//! does: the repository's `index.yaml` names the archive's URLs and its sha256 `digest`; the
//! download must hash to it (and to the digest the release set pins, when it pins one).
//!
//! The decisions (which archive, whether the bytes are right) are core's
//! (`render::check_fetched`, `helm::archive_entry`); this is only the network around them.

use std::collections::BTreeMap;

use stackbot_core::render::{ArchiveMismatch, NeededArchive, check_fetched};
use stackbot_core::upstream::helm;

use crate::upstream::http::{Bound, HttpClient, HttpError};

/// Why an archive could not be brought. [`Self::is_invalid_input`] says which a human must
/// look at (exit 2) and which may heal on the next run (exit 1).
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The index or the archive could not be read (no answer, 5xx, 404 of an archive the
    /// index lists): transient.
    #[error(
        "{what} {chart} {version}: {source}\n  hint: the chart repository did not answer; run again later (nothing was written)"
    )]
    Unreachable {
        what: &'static str,
        chart: String,
        version: String,
        #[source]
        source: HttpError,
    },
    /// The index is not one, or does not list the version the release set pins.
    #[error(
        "chart {chart} {version}: {message} ({url})\n  hint: pin a version the repository publishes in the release set, or vendor the archive in the templates yourself (`helm dependency update`)"
    )]
    NotPublished {
        chart: String,
        version: String,
        url: String,
        message: String,
    },
    /// The bytes are not the ones the index (or the lock) vouches for.
    #[error(
        "chart {chart} {version} from {url}: {mismatch}\n  hint: nothing was written; a human must compare the archive with the chart's release (a re-published chart, a tampering mirror, or a wrong pin in the release set), then vendor the right one or correct the pin"
    )]
    Mismatch {
        chart: String,
        version: String,
        url: String,
        mismatch: ArchiveMismatch,
    },
}

impl FetchError {
    /// A wrong pin or wrong bytes: a person must decide (exit 2). An unreachable repository
    /// is transient (exit 1).
    pub fn is_invalid_input(&self) -> bool {
        !matches!(self, FetchError::Unreachable { .. })
    }
}

/// A downloaded, checked archive.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub bytes: Vec<u8>,
    /// sha256 (hex), equal to the index's digest.
    pub digest: String,
    /// Where it was downloaded from (the index's URL, before any mirror).
    pub url: String,
}

/// Read the repository index (once per index URL: `indexes` keeps the ones read, as a set's
/// charts often share one repository and its index can be megabytes) and download `need`'s
/// archive, checked. `bound` limits the archive's size, `limits` how the index is read
/// (`limits.upstream`).
pub fn fetch_archive(
    http: &HttpClient,
    need: &NeededArchive,
    bound: Bound,
    limits: &stackbot_core::yaml::Limits,
    indexes: &mut BTreeMap<String, String>,
) -> Result<Fetched, Box<FetchError>> {
    let unreachable = |what: &'static str| {
        move |source: HttpError| FetchError::Unreachable {
            what,
            chart: need.chart.clone(),
            version: need.version.clone(),
            source,
        }
    };
    let index_url = helm::index_url(&need.repository);
    if !indexes.contains_key(&index_url) {
        let index = http
            .get(&index_url, None)
            .map_err(unreachable("reading the index for"))?;
        indexes.insert(index_url.clone(), index.body);
    }
    let index_body = &indexes[&index_url];
    let not_published = |message: String| FetchError::NotPublished {
        chart: need.chart.clone(),
        version: need.version.clone(),
        url: index_url.clone(),
        message,
    };
    let (chart, version) = (&need.chart, &need.version);
    let entry = helm::archive_entry(index_body, &need.repository, chart, version, limits)
        .map_err(not_published)?
        .ok_or_else(|| not_published("the repository's index does not list this version".into()))?;
    let url = entry
        .urls
        .first()
        .cloned()
        .ok_or_else(|| not_published("the index entry has no `urls`".into()))?;
    let bytes = http
        .get_bytes(&url, bound)
        .map_err(unreachable("downloading"))?;
    let digest = check_fetched(need, entry.digest.as_deref(), &bytes).map_err(|mismatch| {
        FetchError::Mismatch {
            chart: need.chart.clone(),
            version: need.version.clone(),
            url: url.clone(),
            mismatch,
        }
    })?;
    Ok(Fetched { bytes, digest, url })
}
