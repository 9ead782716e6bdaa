//! Upstream snapshots: `detect --save FILE` writes every fetched source, `--snapshot FILE`
//! replays them with no network. A snapshot is the saved [`UpstreamData`], so replaying it goes
//! through exactly the same pure resolution as the live run that recorded it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Fetch, Fetched, Key, UpstreamData, UpstreamError};

/// A replayed snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SnapshotInfo {
    /// The day it was recorded for (`None`: an older snapshot that does not say).
    pub as_of: Option<chrono::NaiveDate>,
}

/// Format marker of snapshot files; bump when [`Key::id`] or [`Fetched`] change shape.
pub const FORMAT: &str = "stackbot-upstream-snapshot/v1";

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    format: String,
    /// The day it was recorded for (`--now` of the `detect --save` run): a replay is evaluated
    /// as of that day unless `--now` says otherwise, so the demo stays coherent on any date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    as_of: Option<chrono::NaiveDate>,
    #[serde(flatten)]
    data: UpstreamData,
}

/// `data` as snapshot text (pretty JSON, keys sorted, so diffs of re-recorded snapshots are
/// readable), recording the day it is "as of". Writing the file is the edge's
/// (`stackbot::upstream::snapshot::save`): core holds no file I/O.
pub fn print(data: &UpstreamData, as_of: Option<chrono::NaiveDate>) -> String {
    let file = File {
        format: FORMAT.into(),
        as_of,
        data: data.clone(),
    };
    serde_json::to_string_pretty(&file).expect("serializable") + "\n"
}

/// The snapshot text read from `path` (which names it in errors): its data and the day it was
/// recorded for (`None`: an older snapshot that does not say).
pub fn parse(
    text: &str,
    path: &Path,
) -> Result<(UpstreamData, Option<chrono::NaiveDate>), UpstreamError> {
    let file: File = serde_json::from_str(text).map_err(|e| {
        unreadable(
            path,
            format!(
                "not a stackbot upstream snapshot: {e}; record one with `stackbot detect --save FILE`"
            ),
        )
    })?;
    if file.format != FORMAT {
        return Err(unreadable(
            path,
            format!(
                "format `{}` is not `{FORMAT}`; re-record it with `stackbot detect --save FILE`",
                file.format
            ),
        ));
    }
    Ok((file.data, file.as_of))
}

/// The snapshot at `path` cannot be used, and why.
pub fn unreadable(path: &Path, message: String) -> UpstreamError {
    UpstreamError::Snapshot {
        path: path.to_path_buf(),
        message,
    }
}

/// Replays a snapshot. A source the snapshot lacks is an error *for that source* (e.g. the
/// configuration gained a stack after recording), never a network request.
#[derive(Debug)]
pub struct Replay {
    path: PathBuf,
    data: UpstreamData,
    as_of: Option<chrono::NaiveDate>,
}

impl Replay {
    /// Replay the snapshot text read from `path` (`stackbot::upstream::snapshot::open` reads it).
    pub fn parse(text: &str, path: &Path) -> Result<Self, UpstreamError> {
        let (data, as_of) = parse(text, path)?;
        Ok(Replay {
            path: path.to_path_buf(),
            data,
            as_of,
        })
    }
}

impl Replay {
    /// The day the snapshot was recorded for (`None`: an older snapshot that does not say).
    pub fn as_of(&self) -> Option<chrono::NaiveDate> {
        self.as_of
    }

    /// The file it was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Everything the snapshot recorded.
    pub fn data(&self) -> &UpstreamData {
        &self.data
    }

    /// What the snapshot recorded for `key` (shared: a run replays the snapshot it read for
    /// its day, [`Fetch::fetch`] answers the same).
    pub fn answer(&self, key: &Key) -> Fetched {
        self.data
            .get(key)
            .cloned()
            .unwrap_or_else(|| Fetched::Error {
                message: format!(
                    "`{}` is not in snapshot {}; re-record it with `stackbot detect --save FILE`",
                    key.id(),
                    self.path.display()
                ),
            })
    }

    /// Whether the snapshot recorded `key`.
    pub fn has(&self, key: &Key) -> bool {
        self.data.has(key)
    }
}

impl Fetch for Replay {
    fn last_known(&self, key: &Key) -> Option<super::LastKnown> {
        self.data.last_known.get(&key.id()).cloned()
    }

    fn fetch(&mut self, key: &Key) -> Fetched {
        self.answer(key)
    }
}
