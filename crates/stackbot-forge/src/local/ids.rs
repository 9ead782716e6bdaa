//! The forge-wide id counter: releases, assets, pull requests, issues and comments draw from
//! one sequence, like GitHub, where an issue and a pull request never share a number.

use std::fs;

use super::LocalForge;
use super::files::{fs_err, io_err, write_atomic};
use super::lock::FileLock;
use crate::ForgeResult;

impl LocalForge {
    /// Next id from the forge-wide counter (crash-safe; an id is never handed out twice).
    pub(super) fn next_id(&self) -> ForgeResult<u64> {
        let _g = FileLock::acquire(&self.root.join("ids.lock"))?;
        let path = self.root.join("ids");
        let cur = match fs::read_to_string(&path) {
            Ok(s) => s.trim().parse::<u64>().map_err(|e| io_err("ids", e))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(e) => return Err(fs_err("ids", e)),
        };
        let next = cur + 1;
        write_atomic(&path, format!("{next}\n").as_bytes()).map_err(|e| fs_err("ids", e))?;
        Ok(next)
    }
}
