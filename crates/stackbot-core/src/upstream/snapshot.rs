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

/// Write `data` as a snapshot (pretty JSON, keys sorted, so diffs of re-recorded snapshots
/// are readable).
pub fn save(path: &Path, data: &UpstreamData) -> Result<(), UpstreamError> {
    save_as_of(path, data, None)
}

/// [`save`], recording the day the data is "as of".
pub fn save_as_of(
    path: &Path,
    data: &UpstreamData,
    as_of: Option<chrono::NaiveDate>,
) -> Result<(), UpstreamError> {
    let file = File {
        format: FORMAT.into(),
        as_of,
        data: data.clone(),
    };
    let text = serde_json::to_string_pretty(&file).expect("serializable") + "\n";
    std::fs::write(path, text).map_err(|e| UpstreamError::SnapshotWrite {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Read a snapshot file.
pub fn load(path: &Path) -> Result<UpstreamData, UpstreamError> {
    load_file(path).map(|(data, _)| data)
}

fn load_file(path: &Path) -> Result<(UpstreamData, Option<chrono::NaiveDate>), UpstreamError> {
    let err = |message: String| UpstreamError::Snapshot {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(format!("cannot read: {e}")))?;
    let file: File = serde_json::from_str(&text).map_err(|e| {
        err(format!(
            "not a stackbot upstream snapshot: {e}; record one with `stackbot detect --save FILE`"
        ))
    })?;
    if file.format != FORMAT {
        return Err(err(format!(
            "format `{}` is not `{FORMAT}`; re-record it with `stackbot detect --save FILE`",
            file.format
        )));
    }
    Ok((file.data, file.as_of))
}

/// The day a snapshot was recorded for, if it says (older snapshots do not). Unreadable files
/// answer `None`: reading them properly reports the problem.
pub fn recorded_on(path: &Path) -> Option<chrono::NaiveDate> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str::<File>(&text).ok()?.as_of
}

/// Replays a snapshot. A source the snapshot lacks is an error *for that source* (e.g. the
/// configuration gained a stack after recording), never a network request.
pub struct Replay {
    path: PathBuf,
    data: UpstreamData,
    as_of: Option<chrono::NaiveDate>,
}

impl Replay {
    /// Open a snapshot for replay.
    pub fn open(path: &Path) -> Result<Self, UpstreamError> {
        let (data, as_of) = load_file(path)?;
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
}
