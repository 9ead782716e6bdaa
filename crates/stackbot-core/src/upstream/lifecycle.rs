//! Kubernetes minor lifecycle from kubernetes/website `data/releases/schedule.yaml`.
//!
//! Older copies write `release: 1.30` unquoted, which YAML reads as the float `1.3`. The
//! parser therefore never trusts a numeric `release`: it quotes such scalars before parsing
//! and cross-checks the minor against the patch lists.

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use crate::model::{KubeVersion, Minor};

/// Release and end-of-life dates of one minor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lifecycle {
    /// The minor, derived from its patch list where possible (never from a YAML float).
    pub minor: Minor,
    /// `releaseDate`: a minor is not "supported" before it is released.
    pub release_date: Option<NaiveDate>,
    /// `endOfLifeDate`: `minors: supported` drops the minor on that day.
    pub end_of_life: Option<NaiveDate>,
}

impl Lifecycle {
    /// Released on or before `now` and not at or past its end of life on `now`
    /// ([`crate::model::scs::supported_on`], the one home of the question).
    pub fn supported_on(&self, now: NaiveDate) -> bool {
        crate::model::scs::supported_on(self.release_date, self.end_of_life, now)
    }
}

/// Quote unquoted numeric `release:` values so `1.30` stays `1.30`.
fn quote_release_scalars(text: &str) -> String {
    static RELEASE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"(?m)^(\s*(?:-\s+)?release:\s*)(\d+(?:\.\d+)*)[ \t]*$"#)
            .expect("static regex")
    });
    RELEASE.replace_all(text, "$1\"$2\"").into_owned()
}

fn date(v: Option<&yaml_serde::Value>) -> Option<NaiveDate> {
    v.and_then(crate::yaml::scalar_text)
        .and_then(|s| NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d").ok())
}

/// Parse `schedule.yaml` into one [`Lifecycle`] per minor, newest minor last. Entries whose
/// minor cannot be determined are skipped with a message in the returned warnings.
///
/// Read within `limits` (`limits.upstream`): a schedule over them is refused naming the limit
/// before any value is built.
pub fn parse_schedule(
    text: &str,
    limits: &crate::config::UpstreamLimits,
) -> Result<(Vec<Lifecycle>, Vec<String>), String> {
    let limits = limits.yaml();
    crate::yaml::check(text, "schedule.yaml", &limits).map_err(|e| e.to_string())?;
    let doc: yaml_serde::Value = yaml_serde::from_str(&quote_release_scalars(text))
        .map_err(|e| format!("schedule.yaml is not valid YAML: {e}"))?;
    let schedules = doc
        .get("schedules")
        .and_then(|s| s.as_sequence())
        .ok_or("schedule.yaml has no `schedules` list")?;
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    for (i, s) in schedules.iter().enumerate() {
        // The minor of any listed patch is authoritative; `release` is the fallback.
        let from_patches = s
            .get("previousPatches")
            .and_then(|p| p.as_sequence())
            .into_iter()
            .flatten()
            .chain(s.get("next"))
            .filter_map(|p| p.get("release").and_then(crate::yaml::scalar_text))
            .find_map(|r| {
                format!("v{}", r.trim_start_matches('v'))
                    .parse::<KubeVersion>()
                    .ok()
            })
            .map(|v| v.minor());
        let from_release = s
            .get("release")
            .and_then(crate::yaml::scalar_text)
            .and_then(|r| r.parse::<Minor>().ok());
        let Some(minor) = from_patches.or(from_release) else {
            warnings.push(format!(
                "schedule.yaml: entry {} has no readable `release`; ignored",
                i + 1
            ));
            continue;
        };
        out.push(Lifecycle {
            minor,
            release_date: date(s.get("releaseDate")),
            end_of_life: date(s.get("endOfLifeDate")),
        });
    }
    out.sort_by_key(|l| l.minor);
    out.dedup_by_key(|l| l.minor);
    Ok((out, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unquoted_release_is_not_read_as_a_float() {
        let text = "schedules:\n- release: 1.30\n  releaseDate: 2024-04-17\n  endOfLifeDate: 2025-06-28\n- release: \"1.31\"\n  endOfLifeDate: \"2025-10-28\"\n";
        let (l, w) = parse_schedule(text, &Default::default()).unwrap();
        assert!(w.is_empty());
        assert_eq!(l[0].minor.to_string(), "1.30");
        assert_eq!(l[0].release_date, NaiveDate::from_ymd_opt(2024, 4, 17));
        assert_eq!(l[1].minor.to_string(), "1.31");
        assert_eq!(l[1].end_of_life, NaiveDate::from_ymd_opt(2025, 10, 28));
    }

    #[test]
    fn fixture_schedule_supports_133_to_136_on_2026_05_01() {
        let text = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/upstream/k8s-schedule.yaml"
        ));
        let (l, _) = parse_schedule(text, &Default::default()).unwrap();
        let now = NaiveDate::from_ymd_opt(2026, 5, 1).unwrap();
        let supported: Vec<String> = l
            .iter()
            .filter(|x| x.supported_on(now))
            .map(|x| x.minor.to_string())
            .collect();
        assert_eq!(supported, ["1.33", "1.34", "1.35", "1.36"]);
        // 1.33 ends on 2026-06-28: supported the day before, not on the day itself.
        let eve = NaiveDate::from_ymd_opt(2026, 6, 27).unwrap();
        assert!(l.iter().any(|x| x.minor.minor == 33 && x.supported_on(eve)));
        let eol_day = NaiveDate::from_ymd_opt(2026, 6, 28).unwrap();
        assert!(
            !l.iter()
                .any(|x| x.minor.minor == 33 && x.supported_on(eol_day))
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(parse_schedule("<html>", &Default::default()).is_err());
        assert!(parse_schedule("schedules: 3", &Default::default()).is_err());
    }
}
