//! GitHub Actions' environment files and workflow commands, written at the edge: the job
//! summary (`$GITHUB_STEP_SUMMARY`), step outputs (`$GITHUB_OUTPUT`) and annotations (stderr).
//! What is written is core's ([`stackbot_core::report::github`]: the annotation's text, the
//! summary's addition within GitHub's limit, the output's heredoc form).

use std::io::Write;

use stackbot_core::report::github::{
    Actions, Annotation, check_output_name, output_entry, summary_addition,
};

/// What the program writes under GitHub Actions; each is a no-op outside it and says whether
/// it wrote.
pub trait ActionsFiles {
    /// Print an annotation (to stderr, which the runner reads like stdout).
    fn annotate(&self, a: &Annotation) -> bool;
    /// Append Markdown to the job summary, within GitHub's 1 MiB limit (cut with a note).
    fn append_summary(&self, markdown: &str) -> std::io::Result<bool>;
    /// Set a step output (multi-line values in the heredoc form).
    fn set_output(&self, key: &str, value: &str) -> std::io::Result<bool>;
}

impl ActionsFiles for Actions {
    fn annotate(&self, a: &Annotation) -> bool {
        if self.enabled {
            eprintln!("{a}");
        }
        self.enabled
    }

    fn append_summary(&self, markdown: &str) -> std::io::Result<bool> {
        let Some(path) = &self.step_summary else {
            return Ok(false);
        };
        let used = std::fs::metadata(path).map_or(0, |m| m.len() as usize);
        append(path, &summary_addition(markdown, used))?;
        Ok(true)
    }

    fn set_output(&self, key: &str, value: &str) -> std::io::Result<bool> {
        let Some(path) = &self.output else {
            return Ok(false);
        };
        check_output_name(key)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        append(path, &output_entry(key, value))?;
        Ok(true)
    }
}

fn append(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(text.as_bytes())
}
