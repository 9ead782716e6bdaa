//! Upstream snapshots: `detect --save FILE` writes every fetched source, `--snapshot FILE`
//! replays them with no network. A snapshot is the saved [`UpstreamData`], so replaying it goes
//! through exactly the same pure resolution as the live run that recorded it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Fetch, Fetched, Key, UpstreamData, UpstreamError};

/// Format marker of snapshot files; bump when [`Key::id`] or [`Fetched`] change shape.
pub const FORMAT: &str = "stackbot-upstream-snapshot/v1";

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    format: String,
    #[serde(flatten)]
    data: UpstreamData,
}

/// Write `data` as a snapshot (pretty JSON, keys sorted, so diffs of re-recorded snapshots
/// are readable).
pub fn save(path: &Path, data: &UpstreamData) -> Result<(), UpstreamError> {
    let file = File {
        format: FORMAT.into(),
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
    Ok(file.data)
}

/// Replays a snapshot. A source the snapshot lacks is an error *for that source* (e.g. the
/// configuration gained a stack after recording), never a network request.
pub struct Replay {
    path: PathBuf,
    data: UpstreamData,
}

impl Replay {
    /// Open a snapshot for replay.
    pub fn open(path: &Path) -> Result<Self, UpstreamError> {
        Ok(Replay {
            path: path.to_path_buf(),
            data: load(path)?,
        })
    }
}

impl Replay {
    /// Whether the snapshot recorded `key`.
    pub fn has(&self, key: &Key) -> bool {
        self.data.has(key)
    }
}

impl Fetch for Replay {
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
