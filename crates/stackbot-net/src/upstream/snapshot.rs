//! Snapshot files: `detect --save FILE` writes one, `--snapshot FILE` replays it. Their text is
//! core's ([`stackbot_core::upstream::snapshot`]: `print`, `parse`); reading and writing the
//! file is here, at the edge, beside the network it stands in for.

use std::path::Path;

pub use stackbot_core::upstream::snapshot::*;

use super::{UpstreamData, UpstreamError};

/// Write `data` as a snapshot.
pub fn save(path: &Path, data: &UpstreamData) -> Result<(), UpstreamError> {
    save_as_of(path, data, None)
}

/// [`save`], recording the day the data is "as of".
pub fn save_as_of(
    path: &Path,
    data: &UpstreamData,
    as_of: Option<chrono::NaiveDate>,
) -> Result<(), UpstreamError> {
    std::fs::write(path, print(data, as_of)).map_err(|e| UpstreamError::SnapshotWrite {
        path: path.to_path_buf(),
        message: e.to_string(),
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

fn read(path: &Path) -> Result<String, UpstreamError> {
    std::fs::read_to_string(path).map_err(|e| unreadable(path, format!("cannot read: {e}")))
}
