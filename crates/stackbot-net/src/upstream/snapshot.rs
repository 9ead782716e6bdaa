//! Snapshot files: `detect --save FILE` writes one, `--snapshot FILE` replays it. Their text is
//! core's ([`stackbot_core::upstream::snapshot`]: `print`, `parse`); reading and writing the
//! file is here, at the edge, beside the network it stands in for.

use std::path::Path;
use std::sync::Arc;

pub use stackbot_core::upstream::snapshot::*;

use super::{UpstreamData, UpstreamError};

/// Write `data` as a snapshot.
pub fn save(path: &Path, data: &UpstreamData) -> Result<(), UpstreamError> {
    save_as_of(path, data, None)
}

/// [`save`], recording the day the data is "as of". Crash-safe: a replay never reads half a
/// snapshot.
pub fn save_as_of(
    path: &Path,
    data: &UpstreamData,
    as_of: Option<chrono::NaiveDate>,
) -> Result<(), UpstreamError> {
    crate::atomic::write_atomic(path, print(data, as_of).as_bytes()).map_err(|e| {
        UpstreamError::SnapshotWrite {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    })
}

/// Read a snapshot file.
pub fn load(path: &Path) -> Result<UpstreamData, UpstreamError> {
    parse(&read(path)?, path).map(|(data, _)| data)
}

/// Open a snapshot file for replay.
pub fn open(path: &Path) -> Result<Replay, UpstreamError> {
    Replay::parse(&read(path)?, path)
}

/// The snapshot at `path`: `opened` when it is that file (the run read it for its day, and
/// reads it once), else read now.
pub fn opened_or_open(
    opened: Option<&Arc<Replay>>,
    path: &Path,
) -> Result<Arc<Replay>, UpstreamError> {
    match opened {
        Some(replay) if replay.path() == path => Ok(Arc::clone(replay)),
        _ => open(path).map(Arc::new),
    }
}

fn read(path: &Path) -> Result<String, UpstreamError> {
    std::fs::read_to_string(path).map_err(|e| unreadable(path, format!("cannot read: {e}")))
}
