//! Helm repository indexes: which chart versions are really published (a git tag is not a
//! chart; `helm dependency build` reads only `index.yaml`).
//!
//! Selection is by parsed semver, never by string prefix (`2.3.0` is not in the `2.33` series),
//! and pre-releases are skipped: the cloud-provider-openstack index carries `2.33.0-alpha.*`
//! charts whose `appVersion` is the *previous* Kubernetes minor.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::VersionRule;
use crate::model::Minor;

/// One published chart version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChartVersion {
    /// Parsed strictly, so ordering and series matching are numeric.
    pub version: semver::Version,
    /// sha256 of the chart archive, recorded in the release set.
    pub digest: Option<String>,
    /// When the chart was added to the index (`created`), if the index says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<chrono::DateTime<chrono::Utc>>,
    /// Marked `deprecated: true` by its maintainers: never chosen.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deprecated: bool,
}

/// Chart name → published versions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HelmIndex {
    /// Chart name → every published version with a semver version.
    pub charts: BTreeMap<String, Vec<ChartVersion>>,
}

/// The index URL of a repository.
pub fn index_url(repository: &str) -> String {
    format!("{}/index.yaml", repository.trim_end_matches('/'))
}

/// Parse `index.yaml` leniently into every chart's versions: entries whose version is not
/// semver are ignored (they can never match a rule), but a document without `entries` is an
/// error. Holds every entry: for tests and the fuzzer; a run asks [`search`], which keeps only
/// the answers.
pub fn parse_index(text: &str) -> Result<HelmIndex, String> {
    let limits = crate::config::UpstreamLimits::default().yaml();
    let mut charts: BTreeMap<String, Vec<ChartVersion>> = BTreeMap::new();
    walk(text, "index.yaml", &limits, &|_| true, &mut |name, e| {
        let versions = charts.entry(name.to_string()).or_default();
        versions.extend(e.and_then(Listed::chart_version));
    })?;
    Ok(HelmIndex { charts })
}

/// Where an index says a chart version's archive is, and its digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveEntry {
    /// The entry's `urls`, resolved against the repository URL as Helm resolves them.
    pub urls: Vec<String>,
    /// The entry's `digest`: the sha256 (hex) of the archive.
    pub digest: Option<String>,
}

/// The index entry of `chart` at exactly `version`, `None` when the index does not list it.
/// `Err` when `text` is no Helm index, or is over `limits`. Read as it streams, like
/// [`search`]: an index is megabytes from a repository nobody here controls, so it is never
/// built whole.
pub fn archive_entry(
    text: &str,
    repository: &str,
    chart: &str,
    version: &str,
    limits: &crate::yaml::Limits,
) -> Result<Option<ArchiveEntry>, String> {
    let mut found: Option<Listed> = None;
    walk(
        text,
        "index.yaml",
        limits,
        &|name| name == chart,
        &mut |_, e| {
            if found.is_none() {
                found = e.filter(|e| e.version.as_deref() == Some(version));
            }
        },
    )?;
    let base = repository.trim_end_matches('/');
    Ok(found.map(|e| ArchiveEntry {
        urls: (e.urls.into_iter())
            .map(|u| {
                if u.contains("://") {
                    u
                } else {
                    format!("{base}/{}", u.trim_start_matches('/'))
                }
            })
            .collect(),
        digest: e.digest,
    }))
}

/// One question a run asks of an index: the best version of `chart` for `rule` at `minor`.
#[derive(Debug, Clone, Copy)]
pub struct Query<'a> {
    pub chart: &'a str,
    pub rule: &'a VersionRule,
    pub minor: Minor,
}

/// Answer `queries` in one pass over the index `text` (read from `source`, for messages),
/// as the events stream past: nothing of the document is kept but the best version so far per
/// query, so a million entries cost no more memory than ten. Each answer is what [`select`]
/// would say of the whole parsed index; `Err` for the whole index when it is not one (or is
/// over `limits`), per query for a rule that cannot be interpreted.
pub fn search(
    text: &str,
    source: &str,
    queries: &[Query<'_>],
    as_of: Option<chrono::NaiveDate>,
    limits: &crate::yaml::Limits,
) -> Result<Vec<Result<Option<ChartVersion>, String>>, String> {
    let matchers: Vec<Result<Matcher, String>> = queries
        .iter()
        .map(|q| Matcher::new(q.rule, q.minor, as_of))
        .collect();
    let mut best: Vec<Option<ChartVersion>> = vec![None; queries.len()];
    let wanted = |name: &str| queries.iter().any(|q| q.chart == name);
    walk(text, source, limits, &wanted, &mut |name, e| {
        let Some(v) = e.and_then(Listed::chart_version) else {
            return;
        };
        for (i, q) in queries.iter().enumerate() {
            if q.chart == name
                && let Ok(m) = &matchers[i]
                && m.accepts(&v)
                && best[i].as_ref().is_none_or(|b| v.version >= b.version)
            {
                best[i] = Some(v.clone());
            }
        }
    })?;
    Ok(matchers
        .into_iter()
        .zip(best)
        .map(|(m, b)| m.map(|_| b))
        .collect())
}

/// What the index lists for one entry of a chart, its fields as `yaml_serde` would type
/// them (a field that is not a string is absent).
struct Listed {
    version: Option<String>,
    digest: Option<String>,
    created: Option<String>,
    deprecated: bool,
    urls: Vec<String>,
}

/// A chart's entries as they come past: `None` once per chart before its entries, so a chart
/// listed empty is still seen.
type Found<'a> = dyn FnMut(&str, Option<Listed>) + 'a;

impl Listed {
    /// The entry as a published version; `None` without a semver version.
    fn chart_version(self) -> Option<ChartVersion> {
        let version = semver::Version::parse(self.version.as_deref()?).ok()?;
        Some(ChartVersion {
            version,
            digest: self.digest,
            created: (self.created)
                .and_then(|c| chrono::DateTime::parse_from_rfc3339(&c).ok())
                .map(|c| c.with_timezone(&chrono::Utc)),
            deprecated: self.deprecated,
        })
    }
}

/// Walk the index's events, handing `found` every entry of a chart `wanted` names. Everything
/// else is skipped as it streams, counted against `limits` all the same.
fn walk(
    text: &str,
    source: &str,
    limits: &crate::yaml::Limits,
    wanted: &dyn Fn(&str) -> bool,
    found: &mut Found<'_>,
) -> Result<(), String> {
    use crate::yaml::Event;
    let mut r = crate::yaml::Reader::streaming(text, source, limits).map_err(|e| e.to_string())?;
    let next = |r: &mut crate::yaml::Reader<'_>| match r.next_event() {
        Some(e) => e.map_err(|e| e.to_string()),
        None => Err(format!("{source}: the document ends early")),
    };
    let mut seen_entries = false;
    let mut documents = 0;
    loop {
        match next(&mut r)? {
            Event::StreamEnd => break,
            Event::DocumentStart => documents += 1,
            Event::MappingStart { .. } if r.depth() == 1 && documents == 1 => {
                seen_entries |= root(&mut r, source, wanted, found)?;
            }
            start => r.skip_node(&start).map_err(|e| e.to_string())?,
        }
    }
    if documents > 1 {
        return Err(format!(
            "{source} holds {documents} YAML documents, not one index"
        ));
    }
    if !seen_entries {
        return Err("index.yaml has no `entries` map (not a Helm repository index?)".into());
    }
    Ok(())
}

/// The root mapping: `entries` walked, every other key skipped. Whether `entries` was there.
fn root(
    r: &mut crate::yaml::Reader<'_>,
    source: &str,
    wanted: &dyn Fn(&str) -> bool,
    found: &mut Found<'_>,
) -> Result<bool, String> {
    let mut seen = false;
    while let Some((key, value)) = pair(r, source)? {
        match (key.as_deref(), &value) {
            (Some("entries"), crate::yaml::Event::MappingStart { .. }) => {
                seen = true;
                while let Some((chart, list)) = pair(r, source)? {
                    match (chart, &list) {
                        (Some(c), crate::yaml::Event::SequenceStart { .. }) if wanted(&c) => {
                            versions(r, source, &c, found)?;
                        }
                        (Some(c), _) if wanted(&c) => {
                            // Listed, with no versions to read: seen all the same.
                            found(&c, None);
                            skip(r, &list)?;
                        }
                        _ => skip(r, &list)?,
                    }
                }
            }
            _ => skip(r, &value)?,
        }
    }
    Ok(seen)
}

/// The next key (as text when it is a scalar) and the start of its value, or `None` at the
/// mapping's end. A key that is a collection is skipped whole.
fn pair(
    r: &mut crate::yaml::Reader<'_>,
    source: &str,
) -> Result<Option<(Option<String>, crate::yaml::Event)>, String> {
    use crate::yaml::Event;
    let ev = |r: &mut crate::yaml::Reader<'_>| match r.next_event() {
        Some(e) => e.map_err(|e| e.to_string()),
        None => Err(format!("{source}: the document ends inside a mapping")),
    };
    let key = match ev(r)? {
        Event::MappingEnd => return Ok(None),
        Event::Scalar { value, .. } => Some(String::from_utf8_lossy(&value).into_owned()),
        Event::Alias { anchor } => return Err(alias(r, source, &anchor)),
        other => {
            skip(r, &other)?;
            None
        }
    };
    Ok(Some((key, ev(r)?)))
}

fn skip(r: &mut crate::yaml::Reader<'_>, start: &crate::yaml::Event) -> Result<(), String> {
    r.skip_node(start).map_err(|e| e.to_string())
}

/// Aliases are never followed where the charts are read: `helm repo index` writes none, and
/// following one would repeat what it names.
fn alias(r: &crate::yaml::Reader<'_>, source: &str, anchor: &[u8]) -> String {
    format!(
        "{source}:{}: alias `*{}` where the index lists charts; a Helm index has no aliases",
        r.line(),
        String::from_utf8_lossy(anchor)
    )
}

/// The entries of one wanted chart, each handed to `found` as it is read.
fn versions(
    r: &mut crate::yaml::Reader<'_>,
    source: &str,
    chart: &str,
    found: &mut Found<'_>,
) -> Result<(), String> {
    use crate::yaml::Event;
    // The chart is listed even when it has no entry.
    found(chart, None);
    loop {
        match r.next_event() {
            None => return Err(format!("{source}: the document ends inside `{chart}`")),
            Some(e) => match e.map_err(|e| e.to_string())? {
                Event::SequenceEnd => return Ok(()),
                Event::MappingStart { .. } => found(chart, entry(r, source)?),
                Event::Alias { anchor } => return Err(alias(r, source, &anchor)),
                other => skip(r, &other)?,
            },
        }
    }
}

/// One entry's fields, read as `yaml_serde` would type them: a version is a string, a plain
/// `true` is a boolean, a plain number is no digest.
fn entry(r: &mut crate::yaml::Reader<'_>, source: &str) -> Result<Option<Listed>, String> {
    use crate::yaml::Event;
    let mut e = Listed {
        version: None,
        digest: None,
        created: None,
        deprecated: false,
        urls: Vec::new(),
    };
    while let Some((key, value)) = pair(r, source)? {
        if let (Some("urls"), Event::SequenceStart { .. }) = (key.as_deref(), &value) {
            e.urls = strings(r, source)?;
            continue;
        }
        let Event::Scalar {
            value: v,
            plain,
            tagged,
            ..
        } = &value
        else {
            if let Event::Alias { anchor } = &value {
                return Err(alias(r, source, anchor));
            }
            skip(r, &value)?;
            continue;
        };
        let text = String::from_utf8_lossy(v).into_owned();
        let string = string_typed(text, *plain, *tagged);
        match key.as_deref() {
            Some("version") => e.version = string,
            Some("digest") => e.digest = string,
            Some("created") => e.created = string,
            Some("deprecated") => {
                e.deprecated =
                    *plain && !*tagged && matches!(v.as_slice(), b"true" | b"True" | b"TRUE");
            }
            _ => {}
        }
    }
    Ok(Some(e))
}

/// The scalar `text` when `yaml_serde` would read it as a string.
fn string_typed(text: String, plain: bool, tagged: bool) -> Option<String> {
    (!plain || tagged || !resolves_to_non_string(&text)).then_some(text)
}

/// The string items of a sequence (`urls`), up to its end; other items are skipped.
fn strings(r: &mut crate::yaml::Reader<'_>, source: &str) -> Result<Vec<String>, String> {
    use crate::yaml::Event;
    let mut out = Vec::new();
    loop {
        match r.next_event() {
            None => return Err(format!("{source}: the document ends inside `urls`")),
            Some(e) => match e.map_err(|e| e.to_string())? {
                Event::SequenceEnd => return Ok(out),
                Event::Scalar {
                    value,
                    plain,
                    tagged,
                    ..
                } => out.extend(string_typed(
                    String::from_utf8_lossy(&value).into_owned(),
                    plain,
                    tagged,
                )),
                Event::Alias { anchor } => return Err(alias(r, source, &anchor)),
                other => skip(r, &other)?,
            },
        }
    }
}

/// Whether a plain scalar reads as null, a boolean or a number (as `yaml_serde` resolves it),
/// not as a string.
fn resolves_to_non_string(s: &str) -> bool {
    matches!(
        s,
        "" | "~"
            | "null"
            | "Null"
            | "NULL"
            | "true"
            | "True"
            | "TRUE"
            | "false"
            | "False"
            | "FALSE"
    ) || s.parse::<f64>().is_ok()
        || [".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"]
            .iter()
            .any(|x| s.trim_start_matches(['+', '-']) == *x)
        || ["0x", "0o", "0b"]
            .iter()
            .any(|p| s.strip_prefix(p).is_some_and(|d| !d.is_empty()))
}

/// What a rule asks for, in words (for "waiting for …" messages).
pub fn describe_rule(rule: &VersionRule, minor: Minor) -> String {
    match rule {
        VersionRule::Series(p) => format!("{}.x", expand_series(p, minor)),
        VersionRule::Pin(v) => v.clone(),
        VersionRule::Range(r) => r.clone(),
    }
}

fn expand_series(pattern: &str, minor: Minor) -> String {
    pattern
        .replace("{minor}", &minor.minor.to_string())
        .replace("{major}", &minor.major.to_string())
}

/// Which entries a rule accepts for a minor: the one decision behind [`select`] and
/// [`search`]. Pre-releases only when pinned, never a deprecated entry, and with `as_of` never
/// an entry the index says was created after that day (entries without `created` cannot be
/// dated and count as published).
struct Matcher {
    matches: Box<dyn Fn(&semver::Version) -> bool>,
    is_pin: bool,
    as_of: Option<chrono::NaiveDate>,
}

impl Matcher {
    /// Errors only for a rule that cannot be interpreted.
    fn new(
        rule: &VersionRule,
        minor: Minor,
        as_of: Option<chrono::NaiveDate>,
    ) -> Result<Self, String> {
        let matches: Box<dyn Fn(&semver::Version) -> bool> = match rule {
            VersionRule::Series(p) => {
                let series = expand_series(p, minor);
                let nums: Vec<u64> = series
                    .split('.')
                    .map(|n| n.parse::<u64>())
                    .collect::<Result<_, _>>()
                    .map_err(|_| format!("series `{series}` is not `<major>.<minor>`"))?;
                let [maj, min] = nums[..] else {
                    return Err(format!("series `{series}` is not `<major>.<minor>`"));
                };
                Box::new(move |v| v.major == maj && v.minor == min)
            }
            VersionRule::Pin(p) => {
                let pin = semver::Version::parse(p).map_err(|e| format!("pin `{p}`: {e}"))?;
                Box::new(move |v| *v == pin)
            }
            VersionRule::Range(r) => {
                let req = semver::VersionReq::parse(r).map_err(|e| format!("range `{r}`: {e}"))?;
                Box::new(move |v| req.matches(v))
            }
        };
        Ok(Matcher {
            matches,
            is_pin: matches!(rule, VersionRule::Pin(_)),
            as_of,
        })
    }

    fn accepts(&self, c: &ChartVersion) -> bool {
        (c.version.pre.is_empty() || self.is_pin)
            && (self.matches)(&c.version)
            && !c.deprecated
            && self
                .as_of
                .is_none_or(|day| c.created.is_none_or(|t| t.date_naive() <= day))
    }
}

/// The highest GA version of `chart` matching `rule` for Kubernetes `minor` in a parsed
/// index, `Ok(None)` when none is published yet ([`Matcher`] says which entries count).
pub fn select(
    index: &HelmIndex,
    chart: &str,
    rule: &VersionRule,
    minor: Minor,
    as_of: Option<chrono::NaiveDate>,
) -> Result<Option<ChartVersion>, String> {
    let m = Matcher::new(rule, minor, as_of)?;
    Ok(index
        .charts
        .get(chart)
        .into_iter()
        .flatten()
        .filter(|c| m.accepts(c))
        .max_by(|a, b| a.version.cmp(&b.version))
        .cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> HelmIndex {
        let text = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/upstream/helm-index-cpo.yaml"
        ));
        parse_index(text).unwrap()
    }

    fn m(s: &str) -> Minor {
        s.parse().unwrap()
    }

    #[test]
    fn series_picks_highest_ga_by_semver_not_prefix() {
        let idx = fixture();
        let rule = VersionRule::Series("2.{minor}".into());
        let pick = |chart: &str, minor: &str| {
            select(&idx, chart, &rule, m(minor), None)
                .unwrap()
                .map(|c| c.version.to_string())
        };
        assert_eq!(
            pick("openstack-cinder-csi", "1.34").as_deref(),
            Some("2.34.3")
        );
        assert_eq!(
            pick("openstack-cinder-csi", "1.33").as_deref(),
            Some("2.33.1")
        );
        // 2.3.0 exists (legacy) but is not the 2.33 series, and not 1.3's either when asked for 1.36.
        assert_eq!(pick("openstack-cinder-csi", "1.36"), None);
        assert_eq!(pick("openstack-cloud-controller-manager", "1.36"), None);
        assert_eq!(
            pick("openstack-cinder-csi", "1.3").as_deref(),
            Some("2.3.0")
        );
        let d = select(&idx, "openstack-cinder-csi", &rule, m("1.35"), None)
            .unwrap()
            .unwrap();
        assert_eq!(
            d.digest.as_deref(),
            Some("f32351c3efabec9bf1d99024b2f4e03b44d830725d22ef5604afbe36c0746a0c")
        );
    }

    #[test]
    fn prereleases_are_skipped() {
        let mut idx = HelmIndex::default();
        idx.charts.insert(
            "c".into(),
            ["2.37.0-alpha.1", "2.36.0-rc.1"]
                .iter()
                .map(|v| ChartVersion {
                    version: semver::Version::parse(v).unwrap(),
                    digest: None,
                    created: None,
                    deprecated: false,
                })
                .collect(),
        );
        let rule = VersionRule::Series("2.{minor}".into());
        assert_eq!(select(&idx, "c", &rule, m("1.36"), None).unwrap(), None);
        let range = VersionRule::Range(">=2.0.0".into());
        assert_eq!(select(&idx, "c", &range, m("1.36"), None).unwrap(), None);
    }

    #[test]
    fn pin_and_range() {
        let idx = fixture();
        let pin = VersionRule::Pin("2.34.1".into());
        let got = select(&idx, "openstack-cinder-csi", &pin, m("1.36"), None)
            .unwrap()
            .unwrap();
        assert_eq!(got.version.to_string(), "2.34.1");
        let missing = VersionRule::Pin("2.34.2".into());
        assert_eq!(
            select(&idx, "openstack-cinder-csi", &missing, m("1.36"), None).unwrap(),
            None
        );
        let range = VersionRule::Range(">=2.32.0, <2.34.0".into());
        let got = select(&idx, "openstack-cinder-csi", &range, m("1.36"), None)
            .unwrap()
            .unwrap();
        assert_eq!(got.version.to_string(), "2.33.1");
    }

    #[test]
    fn deprecated_entries_are_never_chosen_and_as_of_skips_later_charts() {
        let idx = parse_index(
            "entries:\n  c:\n  - version: 2.34.3\n    deprecated: true\n    created: \"2026-04-20T10:00:00.123456789Z\"\n  - version: 2.34.2\n    created: \"2026-04-10T10:00:00Z\"\n  - version: 2.34.1\n    created: \"2026-03-01T10:00:00+02:00\"\n  - version: 2.34.0\n",
        )
        .unwrap();
        let rule = VersionRule::Series("2.{minor}".into());
        let pick = |as_of: Option<&str>| {
            select(
                &idx,
                "c",
                &rule,
                m("1.34"),
                as_of.map(|d| d.parse().unwrap()),
            )
            .unwrap()
            .map(|c| c.version.to_string())
        };
        assert_eq!(
            pick(None).as_deref(),
            Some("2.34.2"),
            "2.34.3 is deprecated"
        );
        assert_eq!(pick(Some("2026-04-10")).as_deref(), Some("2.34.2"));
        assert_eq!(pick(Some("2026-04-09")).as_deref(), Some("2.34.1"));
        // Undated entries cannot be filtered: they count as published.
        assert_eq!(pick(Some("2020-01-01")).as_deref(), Some("2.34.0"));
        let pin = VersionRule::Pin("2.34.3".into());
        assert_eq!(select(&idx, "c", &pin, m("1.34"), None).unwrap(), None);
    }

    #[test]
    fn search_answers_as_select_does_on_the_whole_index() {
        let text = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/upstream/helm-index-cpo.yaml"
        ));
        let idx = parse_index(text).unwrap();
        let rules = [
            VersionRule::Series("2.{minor}".into()),
            VersionRule::Pin("2.34.1".into()),
            VersionRule::Range(">=2.32.0, <2.34.0".into()),
            VersionRule::Series("bad".into()),
        ];
        let mut queries = Vec::new();
        for chart in [
            "openstack-cinder-csi",
            "openstack-cloud-controller-manager",
            "none",
        ] {
            for rule in &rules {
                for minor in ["1.3", "1.33", "1.34", "1.36"] {
                    queries.push(Query {
                        chart,
                        rule,
                        minor: m(minor),
                    });
                }
            }
        }
        let limits = crate::config::UpstreamLimits::default().yaml();
        let day = Some("2026-01-01".parse().unwrap());
        let got = search(text, "https://h/index.yaml", &queries, day, &limits).unwrap();
        for (q, answer) in queries.iter().zip(got) {
            assert_eq!(answer, select(&idx, q.chart, q.rule, q.minor, day), "{q:?}");
        }
    }

    #[test]
    fn search_refuses_aliases_among_the_charts_and_names_limits() {
        let limits = crate::config::UpstreamLimits::default().yaml();
        let rule = VersionRule::Series("2.{minor}".into());
        let q = [Query {
            chart: "c",
            rule: &rule,
            minor: m("1.34"),
        }];
        let text = "x: &e {version: 2.34.0}\nentries:\n  c:\n  - *e\n";
        let e = search(text, "https://h/index.yaml", &q, None, &limits).unwrap_err();
        assert!(e.contains("https://h/index.yaml:4: alias `*e`"), "{e}");
        // Aliases elsewhere are skipped, but what they repeat still counts.
        let small = crate::yaml::Limits {
            max_nodes: 50,
            ..limits
        };
        let bomb = format!(
            "x: &a [{}]\ny: [{}]\nentries: {{}}\n",
            vec!["1"; 20].join(","),
            ["*a"; 5].join(",")
        );
        let e = search(&bomb, "https://h/index.yaml", &q, None, &small).unwrap_err();
        assert!(e.contains("limits.upstream.max_nodes"), "{e}");
        assert_eq!(
            search(&bomb, "https://h/index.yaml", &q, None, &limits).unwrap()[0],
            Ok(None)
        );
    }

    /// Every entry of the real indexes among the fixtures is found as the whole parsed
    /// document lists it (the first entry of that version, its URLs resolved against the
    /// repository as Helm does), without the document ever being built whole.
    #[test]
    fn archive_entry_streams_what_the_parsed_index_lists() {
        let limits = crate::config::UpstreamLimits::default().yaml();
        let repo = "https://kubernetes.github.io/cloud-provider-openstack/";
        let mut checked = 0;
        macro_rules! fixture {
            ($file:literal) => {
                (
                    $file,
                    include_str!(concat!(
                        env!("CARGO_MANIFEST_DIR"),
                        "/../../tests/fixtures/",
                        $file
                    )),
                )
            };
        }
        for (file, text) in [
            fixture!("helm-indexes/cloud-provider-openstack-2026-05-13.yaml"),
            fixture!("helm-indexes/metrics-server-2026-06-11.yaml"),
            fixture!("upstream/helm-index-cilium.yaml"),
        ] {
            let doc: yaml_serde::Value = yaml_serde::from_str(text).unwrap();
            for (chart, list) in doc["entries"].as_mapping().unwrap() {
                let (chart, list) = (chart.as_str().unwrap(), list.as_sequence().unwrap());
                for e in list {
                    let version = e["version"].as_str().unwrap();
                    let got = archive_entry(text, repo, chart, version, &limits);
                    let got = got.unwrap().unwrap();
                    let first = list.iter().find(|x| x["version"].as_str() == Some(version));
                    let first = first.unwrap();
                    assert_eq!(got.digest.as_deref(), first["digest"].as_str());
                    let urls: Vec<&str> = (first["urls"].as_sequence().into_iter().flatten())
                        .filter_map(|u| u.as_str())
                        .collect();
                    assert_eq!(got.urls.len(), urls.len(), "{file}: {chart} {version}");
                    for (g, u) in got.urls.iter().zip(urls) {
                        assert!(g.starts_with("https://") && g.ends_with(u), "{g} for {u}");
                    }
                    checked += 1;
                }
            }
            let missing = archive_entry(text, repo, "openstack-cinder-csi", "9.9.9", &limits);
            assert_eq!(missing, Ok(None), "{file}");
        }
        assert!(checked > 100, "the fixtures list many entries ({checked})");
    }

    #[test]
    fn archive_entry_resolves_relative_urls_and_refuses_what_is_no_index() {
        let limits = crate::config::UpstreamLimits::default().yaml();
        let text = "entries:\n  c:\n  - version: 1.2.3\n    digest: abc\n    urls: [charts/c-1.2.3.tgz, /d/c.tgz, \"https://m/c.tgz\", 7]\n  - version: 1.2.3\n    digest: second\n";
        let e = archive_entry(text, "https://h/r/", "c", "1.2.3", &limits)
            .unwrap()
            .unwrap();
        assert_eq!(e.digest.as_deref(), Some("abc"), "the first entry wins");
        assert_eq!(
            e.urls,
            [
                "https://h/r/charts/c-1.2.3.tgz",
                "https://h/r/d/c.tgz",
                "https://m/c.tgz"
            ],
            "a plain number is no URL"
        );
        assert!(archive_entry("apiVersion: v1\n", "https://h", "c", "1", &limits).is_err());
        let aliased = "x: &u [a.tgz]\nentries:\n  c:\n  - version: 1.0.0\n    urls: *u\n";
        let e = archive_entry(aliased, "https://h", "c", "1.0.0", &limits).unwrap_err();
        assert!(e.contains("alias `*u`"), "{e}");
        let small = crate::yaml::Limits {
            max_bytes: 10,
            ..limits
        };
        let e = archive_entry(text, "https://h", "c", "1.2.3", &small).unwrap_err();
        assert!(e.contains("limits.upstream.max_bytes"), "{e}");
    }

    #[test]
    fn non_index_documents_are_errors() {
        assert!(parse_index("<html></html>").is_err());
        assert!(parse_index("apiVersion: v1\n").is_err());
    }
}
