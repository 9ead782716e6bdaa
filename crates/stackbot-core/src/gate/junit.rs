//! A conformance result in JUnit XML (what sonobuoy's e2e plugin writes as
//! `plugins/e2e/results/global/junit_01.xml`, and what most test runners emit): the passed,
//! failed and skipped counts and the names of the failed tests.
//!
//! Counted from the `<testcase>` elements themselves, not from the `tests=`/`failures=`
//! attributes of the suites (writers disagree on whether `failures` includes `errors`, and a
//! count that disagrees with the cases is not evidence). A case is failed when it holds a
//! `<failure>` or an `<error>`, skipped when it holds a `<skipped>`, passed otherwise. Input
//! is bounded by the caller ([`MAX_BYTES`]); names are cut at [`MAX_NAME`] characters and at
//! most [`MAX_FAILED_NAMES`] are kept (the count stays exact).

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use super::Summary;

/// The most bytes of one result file the gate reads.
pub const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// The most failed test names a summary keeps.
pub const MAX_FAILED_NAMES: usize = 200;
/// The longest test name kept, in characters.
pub const MAX_NAME: usize = 300;

/// Why a result file is no evidence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JunitError {
    #[error("not well-formed XML at byte {at}: {reason}")]
    Xml { at: u64, reason: String },
    #[error("no <testcase> in it: not a JUnit result")]
    NoCases,
}

/// The summary of one JUnit XML document.
pub fn parse(xml: &[u8]) -> Result<Summary, JunitError> {
    let mut r = Reader::from_reader(xml);
    r.config_mut().trim_text(true);
    let mut buf = Vec::new();
    let mut sum = Summary::default();
    let mut cases = 0u64;
    // The case being read: its name and whether it failed or was skipped so far.
    let mut open: Option<(String, Verdict)> = None;
    loop {
        let ev = r.read_event_into(&mut buf).map_err(|e| JunitError::Xml {
            at: r.buffer_position(),
            reason: e.to_string(),
        })?;
        match ev {
            Event::Start(e) if e.local_name().as_ref() == b"testcase" => {
                open = Some((case_name(&e), Verdict::Passed));
            }
            Event::Empty(e) if e.local_name().as_ref() == b"testcase" => {
                cases += 1;
                sum.add(&case_name(&e), Verdict::Passed);
            }
            Event::Start(e) | Event::Empty(e) => {
                if let Some((_, v)) = open.as_mut() {
                    v.see(e.local_name().as_ref());
                }
            }
            Event::End(e) if e.local_name().as_ref() == b"testcase" => {
                if let Some((name, v)) = open.take() {
                    cases += 1;
                    sum.add(&name, v);
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if cases == 0 {
        return Err(JunitError::NoCases);
    }
    Ok(sum)
}

/// `classname name` (or the name alone), as sonobuoy's reports show a case.
fn case_name(e: &BytesStart<'_>) -> String {
    let attr = |key: &[u8]| {
        e.attributes()
            .flatten()
            .find(|a| a.key.local_name().as_ref() == key)
            .and_then(|a| a.unescape_value().ok().map(|v| v.trim().to_string()))
            .filter(|v| !v.is_empty())
    };
    let name = match (attr(b"classname"), attr(b"name")) {
        (Some(c), Some(n)) => format!("{c} {n}"),
        (None, Some(n)) => n,
        (Some(c), None) => c,
        (None, None) => "(unnamed test case)".to_string(),
    };
    crate::body::truncate_str(&name, MAX_NAME).to_string()
}

/// What one case came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Passed,
    Skipped,
    Failed,
}

impl Verdict {
    /// A child element of the case: a failure outweighs a skip.
    fn see(&mut self, element: &[u8]) {
        match element {
            b"failure" | b"error" => *self = Verdict::Failed,
            b"skipped" if *self == Verdict::Passed => *self = Verdict::Skipped,
            _ => {}
        }
    }
}

impl Summary {
    fn add(&mut self, name: &str, v: Verdict) {
        match v {
            Verdict::Passed => self.passed += 1,
            Verdict::Skipped => self.skipped += 1,
            Verdict::Failed => {
                self.failed += 1;
                if self.failed_tests.len() < MAX_FAILED_NAMES {
                    self.failed_tests.push(name.to_string());
                }
            }
        }
    }

    /// Another document's counts added to these (sonobuoy writes one file per plugin).
    pub fn merge(&mut self, other: Summary) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.skipped += other.skipped;
        for n in other.failed_tests {
            if self.failed_tests.len() < MAX_FAILED_NAMES {
                self.failed_tests.push(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_are_counted_by_what_they_hold() {
        let xml = br#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="Kubernetes e2e suite" tests="5" failures="9" skipped="1">
    <testcase name="[sig-network] DNS should provide DNS for services [Conformance]" classname="Kubernetes e2e suite" time="12.1"></testcase>
    <testcase name="[sig-apps] Deployment should roll &amp; update [Conformance]" classname="Kubernetes e2e suite">
      <failure type="Failure">timed out</failure>
      <system-out>...</system-out>
    </testcase>
    <testcase name="[sig-storage] CSI mount" classname="Kubernetes e2e suite"><skipped message="not conformance"/></testcase>
    <testcase name="[sig-node] Pods crash" classname="Kubernetes e2e suite"><error message="panic"/></testcase>
    <testcase name="lonely" />
  </testsuite>
</testsuites>"#;
        let s = parse(xml).unwrap();
        assert_eq!((s.passed, s.failed, s.skipped), (2, 2, 1));
        assert_eq!(
            s.failed_tests,
            vec![
                "Kubernetes e2e suite [sig-apps] Deployment should roll & update [Conformance]",
                "Kubernetes e2e suite [sig-node] Pods crash",
            ]
        );
    }

    #[test]
    fn no_cases_or_broken_xml_is_no_evidence() {
        assert_eq!(
            parse(b"<testsuites><testsuite tests=\"0\"/></testsuites>"),
            Err(JunitError::NoCases)
        );
        assert!(matches!(
            parse(b"<testsuite><testcase name=\"a\"></testsuite>"),
            Err(JunitError::Xml { .. })
        ));
        assert_eq!(parse(b"plain text, no xml"), Err(JunitError::NoCases));
    }

    #[test]
    fn the_names_kept_are_bounded_but_the_count_is_exact() {
        let mut xml = String::from("<testsuite>");
        for i in 0..(MAX_FAILED_NAMES + 5) {
            xml.push_str(&format!("<testcase name=\"t{i}\"><failure/></testcase>"));
        }
        xml.push_str("</testsuite>");
        let s = parse(xml.as_bytes()).unwrap();
        assert_eq!(s.failed as usize, MAX_FAILED_NAMES + 5);
        assert_eq!(s.failed_tests.len(), MAX_FAILED_NAMES);
    }
}
