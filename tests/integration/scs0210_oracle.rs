//! Differential test: stackbot's SCS 0210 verdict equals the standard's own conformance test
//! (`k8s_version_policy.py`, vendored unchanged in `tests/fixtures/scs-standards/`) on many
//! versions × days × CVE sets, through the same raw upstream bodies.
//!
//! Each scenario is a GitHub releases list (the test's own `testdata/releases.json`, and the
//! 2025–2026 list of `tests/fixtures/upstream/`), the test's end-of-life table, and a CVE feed
//! with generated records: CVSS v3.0, v3.1 and v4.0 (and non-CVSS) metrics around the critical
//! score, Kubernetes and other products, `lessThan`, `lessThanOrEqual`, exact versions, the
//! loose `1.30.x` and `a - b` forms, and `unaffected` entries. stackbot reads the same bodies
//! through `compliance::Inputs::from_data`, as a run would.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use chrono::{Days, NaiveDate};
use serde_json::{Value, json};
use stackbot::compliance::{Inputs, Scs0210, Verdict, evaluate};
use stackbot::model::KubeVersion;
use stackbot::upstream::{Fetched, Key, UpstreamData};

fn fixtures() -> PathBuf {
    crate::support::root().join("tests/fixtures")
}

/// A small deterministic generator (no seed file, same cases on every machine).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[(self.next() % xs.len() as u64) as usize]
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// GA versions in a releases list (what both sides would see).
fn ga(releases: &[Value]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = releases
        .iter()
        .filter(|r| r["draft"] == false && r["prerelease"] == false)
        .filter_map(|r| r["tag_name"].as_str()?.parse::<KubeVersion>().ok())
        .map(|v| (v.minor, v.patch))
        .collect();
    out.sort();
    out
}

fn version_info(rng: &mut Lcg, minor: u64, max_patch: u64) -> Value {
    let p = rng.below(max_patch + 2);
    let q = p + 1 + rng.below(4);
    match rng.below(7) {
        0 => {
            json!({"version": format!("1.{minor}.0"), "lessThan": format!("1.{minor}.{q}"), "status": "affected"})
        }
        1 => {
            json!({"version": "0", "lessThanOrEqual": format!("v1.{minor}.{p}"), "status": "affected"})
        }
        2 => json!({"version": format!("1.{minor}.{p}"), "status": "affected"}),
        3 => json!({"version": format!("1.{minor}.x"), "status": "affected"}),
        4 => json!({"version": format!("1.{minor}.{p} - 1.{minor}.{q}"), "status": "affected"}),
        5 => {
            json!({"version": format!("1.{minor}.{p}"), "lessThan": format!("1.{minor}.{q}"), "status": "unaffected"})
        }
        _ => {
            json!({"version": format!("v1.{minor}.{p}"), "lessThan": format!("v1.{minor}.{q}"), "status": "affected"})
        }
    }
}

fn record(rng: &mut Lcg, id: &str, versions: &[(u64, u64)]) -> Value {
    let keys = ["cvssV3_0", "cvssV3_1", "cvssV4_0", "cvssV3_1", "other"];
    let scores = [5.3, 7.9, 8.0, 8.1, 8.8, 9.8];
    let metrics: Vec<Value> = (0..1 + rng.below(2))
        .map(|_| {
            let key = *rng.pick(&keys);
            if key == "other" {
                json!({"other": {"type": "ssvc", "content": {}}})
            } else {
                json!({key: {"version": "3.1", "baseScore": *rng.pick(&scores)}})
            }
        })
        .collect();
    let minors: Vec<u64> = {
        let mut m: Vec<u64> = versions.iter().map(|v| v.0).collect();
        m.dedup();
        m
    };
    let affected: Vec<Value> = (0..1 + rng.below(2))
        .map(|_| {
            let product = *rng.pick(&["Kubernetes", "Kubernetes", "Kubernetes", "ingress-nginx"]);
            let vs: Vec<Value> = (0..1 + rng.below(3))
                .map(|_| {
                    let minor = *rng.pick(&minors);
                    let max = versions.iter().filter(|v| v.0 == minor).map(|v| v.1).max();
                    version_info(rng, minor, max.unwrap_or(0))
                })
                .collect();
            json!({"vendor": "Kubernetes", "product": product, "versions": vs})
        })
        .collect();
    json!({"dataType": "CVE_RECORD", "dataVersion": "5.1",
        "cveMetadata": {"cveId": id, "state": "PUBLISHED"},
        "containers": {"cna": {"metrics": metrics, "affected": affected}}})
}

struct Scenario {
    releases: Vec<Value>,
    feed: Value,
    records: Vec<(String, Value)>,
    eol: Vec<Value>,
    cases: Vec<(KubeVersion, NaiveDate)>,
}

fn eol_rows() -> Vec<Value> {
    let text = std::fs::read_to_string(fixtures().join("scs-standards/k8s-eol-data.yml")).unwrap();
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("- branch: "))
        .zip(
            text.lines()
                .filter_map(|l| l.trim().strip_prefix("end-of-life: ")),
        )
        .map(|(b, e)| json!({"branch": b.trim_matches('\''), "end-of-life": e.trim_matches('\'')}))
        .collect()
}

fn scenarios() -> Vec<Scenario> {
    let lists = [
        std::fs::read_to_string(fixtures().join("scs-standards/testdata/releases.json")).unwrap(),
        std::fs::read_to_string(fixtures().join("upstream/kubernetes-releases.json")).unwrap(),
    ];
    let mut out = Vec::new();
    let mut rng = Lcg(2026);
    for list in lists {
        let releases: Vec<Value> = serde_json::from_str(&list).unwrap();
        let versions = ga(&releases);
        let dates: Vec<NaiveDate> = releases
            .iter()
            .filter_map(|r| r["published_at"].as_str())
            .filter_map(|p| p.get(..10)?.parse().ok())
            .collect();
        let (first, last) = (*dates.iter().min().unwrap(), *dates.iter().max().unwrap());
        for set in 0..8 {
            let n = if set == 0 { 0 } else { 1 + rng.below(5) };
            let records: Vec<(String, Value)> = (0..n)
                .map(|k| {
                    let id = format!("CVE-2099-{}", 1000 + set * 10 + k);
                    let r = record(&mut rng, &id, &versions);
                    (id, r)
                })
                .collect();
            let feed = json!({"version": "https://jsonfeed.org/version/1.1",
                "items": records.iter().map(|(id, _)| json!({"id": id})).collect::<Vec<_>>()});
            let mut cases = Vec::new();
            for _ in 0..400 {
                let (minor, patch) = *rng.pick(&versions);
                let patch = patch.saturating_sub(rng.below(2)) + rng.below(2);
                let span = (last - first).num_days() as u64 + 120;
                let day = first.checked_add_days(Days::new(rng.below(span))).unwrap();
                let v: KubeVersion = format!("v1.{minor}.{patch}").parse().unwrap();
                cases.push((v, day));
            }
            // The boundaries: each release's day + 2/3, 14/15, 31/32.
            for r in releases.iter().filter(|r| r["draft"] == false) {
                let Some(day) = r["published_at"]
                    .as_str()
                    .and_then(|p| p.get(..10)?.parse::<NaiveDate>().ok())
                else {
                    continue;
                };
                let Ok(v) = r["tag_name"].as_str().unwrap().parse::<KubeVersion>() else {
                    continue;
                };
                if v.patch == 0 || rng.below(3) != 0 {
                    continue;
                }
                let older: KubeVersion = format!("v{}.{}.{}", v.major, v.minor, v.patch - 1)
                    .parse()
                    .unwrap();
                for d in [2, 3, 14, 15, 31, 32] {
                    cases.push((older, day.checked_add_days(Days::new(d)).unwrap()));
                }
            }
            out.push(Scenario {
                releases: releases.clone(),
                feed,
                records,
                eol: eol_rows(),
                cases,
            });
        }
    }
    out
}

/// What stackbot reads: the same bodies, under the keys a run stores them.
fn inputs(s: &Scenario) -> Inputs {
    Inputs::from_data(&upstream(s))
}

/// The bodies of [`inputs`], before they are read.
fn upstream(s: &Scenario) -> UpstreamData {
    let mut data = UpstreamData::default();
    let ok = |body: String| Fetched::Ok { body };
    data.insert(
        &Key::Releases,
        ok(serde_json::to_string(&s.releases).unwrap()),
    );
    let schedule: String = s
        .eol
        .iter()
        .map(|e| {
            format!(
                "- release: \"{}\"\n  endOfLifeDate: {}\n",
                e["branch"].as_str().unwrap(),
                e["end-of-life"].as_str().unwrap()
            )
        })
        .collect();
    data.insert(&Key::Schedule, ok(format!("schedules:\n{schedule}")));
    data.insert(&Key::CveFeed, ok(s.feed.to_string()));
    for (id, r) in &s.records {
        data.insert(&Key::CveRecord(id.clone()), ok(r.to_string()));
    }
    data
}

fn oracle(scenarios: &[Scenario]) -> Vec<Vec<String>> {
    let input: Vec<Value> = scenarios
        .iter()
        .map(|s| {
            json!({
                "releases": s.releases,
                "feed": s.feed,
                "records": s.records.iter().cloned().collect::<serde_json::Map<String, Value>>(),
                "eol": s.eol,
                "cases": s.cases.iter().map(|(v, d)| json!({"version": v.to_string(), "now": d.to_string()})).collect::<Vec<_>>(),
            })
        })
        .collect();
    run_oracle(&input)
}

/// The standard's test on scenarios as `oracle.py` reads them (a case's `now` may carry a time).
fn run_oracle(input: &[Value]) -> Vec<Vec<String>> {
    let mut child = Command::new("python3")
        .arg(fixtures().join("scs-standards/oracle.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs the standard's conformance test (installed by .ci/run)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(input).unwrap().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the oracle failed (python3 with PyYAML needed):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn stackbot_agrees_with_the_standards_conformance_test() {
    let scenarios = scenarios();
    let expected = oracle(&scenarios);
    let mut mismatches = Vec::new();
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for (s, verdicts) in scenarios.iter().zip(&expected) {
        let inputs = inputs(s);
        for ((v, day), want) in s.cases.iter().zip(verdicts) {
            *seen.entry(want.clone()).or_default() += 1;
            if want == "abort" {
                continue;
            }
            let got = evaluate(*v, &inputs, *day);
            let word = match got.verdict {
                Verdict::Pass => "pass",
                Verdict::Warn => "warn",
                Verdict::Fail => "fail",
                Verdict::Unknown => "unknown",
            };
            if word != want {
                mismatches.push(format!(
                    "{v} on {day}: test says {want}, stackbot {word} ({:?}); CVEs {}",
                    got.reasons, s.feed
                ));
            }
        }
    }
    eprintln!("oracle verdicts: {seen:?}");
    assert!(
        mismatches.is_empty(),
        "{} of the cases disagree, e.g.:\n{}",
        mismatches.len(),
        mismatches
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // Not vacuous: every verdict the test can give occurred, the CVE warning among them.
    for v in ["pass", "warn", "fail"] {
        assert!(
            seen.get(v).copied().unwrap_or(0) >= 20,
            "too few `{v}`: {seen:?}"
        );
    }
    assert!(seen.get("abort").copied().unwrap_or(0) * 10 < seen.values().sum::<usize>());
}

/// The end-of-life day, asked of the standard's test itself: a cluster at the newest patch of
/// a branch on the day before its end of life, on the day, and the day after. The test fails
/// it from the end-of-life day on (`now < eol` is supported); stackbot's verdict agrees, and
/// the one home that decides whether a minor is supported (tracked by `minors: supported`,
/// not `past_end_of_life` in `status`) says the same on every one of those days.
#[test]
fn the_end_of_life_day_is_decided_as_the_standards_test_decides_it() {
    let releases: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("upstream/kubernetes-releases.json")).unwrap(),
    )
    .unwrap();
    let versions = ga(&releases);
    let eol = eol_rows();
    let mut cases = Vec::new();
    let mut ends = Vec::new();
    for row in &eol {
        let branch = row["branch"].as_str().unwrap();
        let minor: u64 = branch.trim_start_matches("1.").parse().unwrap();
        let Some(&(_, patch)) = versions.iter().rev().find(|(m, _)| *m == minor) else {
            continue;
        };
        let end: NaiveDate = row["end-of-life"].as_str().unwrap().parse().unwrap();
        let v: KubeVersion = format!("v1.{minor}.{patch}").parse().unwrap();
        for day in [end.pred_opt().unwrap(), end, end.succ_opt().unwrap()] {
            cases.push((v, day));
            ends.push(end);
        }
    }
    assert!(
        cases.len() >= 9,
        "at least three branches of the list have an end of life"
    );
    let scenario = Scenario {
        releases,
        feed: json!({"version": "https://jsonfeed.org/version/1.1", "items": []}),
        records: Vec::new(),
        eol,
        cases,
    };
    let expected = oracle(std::slice::from_ref(&scenario)).remove(0);
    let inputs = inputs(&scenario);
    let mut decided = 0;
    for (((v, day), end), want) in scenario.cases.iter().zip(&ends).zip(&expected) {
        if want == "abort" {
            continue;
        }
        decided += 1;
        let got = evaluate(*v, &inputs, *day);
        assert_eq!(got.verdict.word(), want, "{v} on {day} (end of life {end})");
        let past = stackbot::model::scs::past_end_of_life(*end, *day);
        assert_eq!(
            past,
            want == "fail",
            "{v} on {day}: the test says {want}, the one home says past end of life: {past}"
        );
        assert_eq!(
            stackbot::model::scs::supported_on(None, Some(*end), *day),
            !past,
            "tracked exactly while not past end of life"
        );
    }
    assert!(decided >= 6, "the test decided too few cases: {expected:?}");
}

// ---------------------------------------------------------------------------------------------
// Deviations from the standard's test (docs/status.md, "Deviations from the standard's test").
// Each test runs the test on the input that shows the deviation and asserts the difference.

/// A GitHub release object as the API gives it.
fn gh(tag: &str, ga: bool, published: &str) -> Value {
    json!({"tag_name": tag, "draft": false, "prerelease": !ga, "published_at": published})
}

/// A small upstream: 1.33.5, 1.34.0 and 1.34.1 (published 2026-02-10 at 16:28 UTC), 1.35.0.
fn small_releases() -> Vec<Value> {
    vec![
        gh("v1.33.5", true, "2026-01-05T16:28:00Z"),
        gh("v1.34.0", true, "2026-01-10T16:28:00Z"),
        gh("v1.34.1", true, "2026-02-10T16:28:00Z"),
        gh("v1.35.0", true, "2026-01-20T16:28:00Z"),
    ]
}

fn eol(rows: &[(&str, &str)]) -> Vec<Value> {
    rows.iter()
        .map(|(b, e)| json!({"branch": b, "end-of-life": e}))
        .collect()
}

fn empty_feed() -> Value {
    json!({"version": "https://jsonfeed.org/version/1.1", "items": []})
}

fn v(s: &str) -> KubeVersion {
    s.parse().unwrap()
}

fn d(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

/// (a) The end of life comes from the release schedule (`Key::Schedule`), not from the test's
/// bundled `k8s-eol-data.yml`. When the two disagree, stackbot follows the schedule, in both
/// directions: a later date in the schedule keeps the minor supported, an earlier one ends it.
#[test]
fn deviation_end_of_life_follows_the_schedule_not_the_bundled_eol_data() {
    let bundled = eol(&[
        ("1.33", "2026-06-28"),
        ("1.34", "2026-10-27"),
        ("1.35", "2027-02-28"),
    ]);
    let later = eol(&[
        ("1.33", "2026-07-28"),
        ("1.34", "2026-10-27"),
        ("1.35", "2027-02-28"),
    ]);
    let earlier = eol(&[
        ("1.33", "2026-06-01"),
        ("1.34", "2026-10-27"),
        ("1.35", "2027-02-28"),
    ]);
    let cases = vec![
        (v("v1.33.5"), d("2026-07-10")),
        (v("v1.33.5"), d("2026-06-15")),
    ];
    let test = Scenario {
        releases: small_releases(),
        feed: empty_feed(),
        records: Vec::new(),
        eol: bundled,
        cases: cases.clone(),
    };
    let said = oracle(std::slice::from_ref(&test)).remove(0);
    assert_eq!(
        said,
        ["fail", "pass"],
        "the bundled table ends 1.33 on 2026-06-28"
    );
    for (schedule, want) in [(later, ["pass", "pass"]), (earlier, ["fail", "fail"])] {
        let inputs = inputs(&Scenario {
            releases: small_releases(),
            feed: empty_feed(),
            records: Vec::new(),
            eol: schedule,
            cases: Vec::new(),
        });
        let got: Vec<&str> = cases
            .iter()
            .map(|(v, day)| evaluate(*v, &inputs, *day).verdict.word())
            .collect();
        assert_eq!(got, want, "stackbot follows the schedule it read");
    }
}

/// (b) Dates, not times of day: the test compares `now - published_at` (with its time) to 31
/// days, so on the 31st day after a publication at 16:28 it passes at midnight and fails at
/// 18:00. stackbot's verdict is "as of" a day, the test's at that day's midnight: the whole
/// 31st day is in time, the next day fails.
#[test]
fn deviation_dates_are_compared_not_times_of_day() {
    let case = |now: &str| {
        json!({"releases": small_releases(), "feed": empty_feed(), "records": {},
            "eol": eol(&[("1.33", "2026-06-28"), ("1.34", "2026-10-27"), ("1.35", "2027-02-28")]),
            "cases": [{"version": "v1.34.0", "now": now}]})
    };
    let said: Vec<String> = run_oracle(&[
        case("2026-03-13T00:00:00"),
        case("2026-03-13T18:00:00"),
        case("2026-03-14T00:00:00"),
    ])
    .into_iter()
    .flatten()
    .collect();
    assert_eq!(
        said,
        ["pass", "fail", "fail"],
        "v1.34.1 was published 2026-02-10 16:28"
    );
    let inputs = inputs(&Scenario {
        releases: small_releases(),
        feed: empty_feed(),
        records: Vec::new(),
        eol: eol(&[
            ("1.33", "2026-06-28"),
            ("1.34", "2026-10-27"),
            ("1.35", "2027-02-28"),
        ]),
        cases: Vec::new(),
    });
    let on = |day: &str| evaluate(v("v1.34.0"), &inputs, d(day)).verdict.word();
    assert_eq!(on("2026-03-13"), "pass", "the 31st day is in time all day");
    assert_eq!(on("2026-03-14"), "fail");
}

/// (c) The test ABORTs ("critically outdated" EOL data) when fewer than two branches are
/// supported on the day; stackbot gives its verdict from the schedule it read that run: an
/// ended minor fails, a minor still supported is judged on its patches.
#[test]
fn deviation_fewer_than_two_supported_branches_do_not_abort() {
    let table = eol(&[("1.33", "2026-03-01"), ("1.34", "2026-10-27")]);
    let cases = vec![
        (v("v1.34.1"), d("2026-04-01")),
        (v("v1.33.5"), d("2026-04-01")),
    ];
    let s = Scenario {
        releases: small_releases(),
        feed: empty_feed(),
        records: Vec::new(),
        eol: table,
        cases: cases.clone(),
    };
    assert_eq!(
        oracle(std::slice::from_ref(&s)).remove(0),
        ["abort", "abort"]
    );
    let inputs = inputs(&s);
    let got: Vec<&str> = cases
        .iter()
        .map(|(v, day)| evaluate(*v, &inputs, *day).verdict.word())
        .collect();
    assert_eq!(got, ["pass", "fail"]);
}

/// How favourable a verdict word is, as `missing_data` counts it: `unknown` and `fail` are both
/// not compliance, and so are the standard's `error` (it raised) and `abort` (no verdict).
fn favour(word: &str) -> u8 {
    match word {
        "pass" => 2,
        "warn" => 1,
        _ => 0,
    }
}

/// (d) A release with the GA flags (not draft, not prerelease) whose tag is not `vX.Y.Z`:
/// stackbot never counts it as a release (an rc is never released or the patch to update to);
/// the test cuts the tag at its first `-` and counts `v1.34.2-rc.1` as v1.34.2, and raises on a
/// tag it cannot read (`kubernetes-1.35.4`). Where the test's verdict would differ because of
/// it, or the test gives none, stackbot says `unknown` naming the release: never more
/// favourable than the standard. Where it changes nothing, both agree.
#[test]
fn deviation_ga_flagged_tags_that_are_not_a_version_are_unknown_where_the_test_differs() {
    let eol_table = eol(&[
        ("1.33", "2026-06-28"),
        ("1.34", "2026-10-27"),
        ("1.35", "2027-02-28"),
    ]);
    let with = |tag: &str| {
        let mut releases = small_releases();
        releases.push(gh(tag, true, "2026-02-20T16:28:00Z"));
        Scenario {
            releases,
            feed: empty_feed(),
            records: Vec::new(),
            eol: eol_table.clone(),
            // v1.34.1 on the rc's 9th day (within its 31) and on its 40th; v1.33.5, another
            // minor; v1.34.2 itself.
            cases: vec![
                (v("v1.34.1"), d("2026-03-01")),
                (v("v1.34.1"), d("2026-04-01")),
                (v("v1.33.5"), d("2026-04-01")),
                (v("v1.34.2"), d("2026-04-01")),
            ],
        }
    };
    let verdicts = |s: &Scenario| -> Vec<Scs0210> {
        let inputs = inputs(s);
        s.cases
            .iter()
            .map(|(v, day)| evaluate(*v, &inputs, *day))
            .collect()
    };
    let words =
        |got: &[Scs0210]| -> Vec<&'static str> { got.iter().map(|g| g.verdict.word()).collect() };

    // The rc flagged GA: the test counts it as v1.34.2 and fails v1.34.1 on its 40th day.
    let rc = with("v1.34.2-rc.1");
    let said = oracle(std::slice::from_ref(&rc)).remove(0);
    assert_eq!(said, ["pass", "fail", "pass", "pass"]);
    let got = verdicts(&rc);
    assert_eq!(words(&got), ["pass", "unknown", "pass", "pass"]);
    assert!(
        got[1]
            .unknown
            .iter()
            .any(|u| u.contains("v1.34.2-rc.1") && u.contains("v1.34.2")),
        "the verdict names the release: {:?}",
        got[1].unknown
    );

    // The same release under its GA tag: both fail v1.34.1 on the 40th day.
    let ga = with("v1.34.2");
    assert_eq!(
        oracle(std::slice::from_ref(&ga)).remove(0),
        ["pass", "fail", "pass", "pass"]
    );
    assert_eq!(words(&verdicts(&ga)), ["pass", "fail", "pass", "pass"]);

    // A tag the test cannot read: it raises and gives no verdict for any cluster; stackbot
    // says unknown for each, naming the release.
    let unreadable = with("kubernetes-1.35.4");
    assert_eq!(
        oracle(std::slice::from_ref(&unreadable)).remove(0),
        ["error", "error", "error", "error"]
    );
    let got = verdicts(&unreadable);
    assert_eq!(words(&got), ["unknown", "unknown", "unknown", "unknown"]);
    assert!(
        got.iter()
            .all(|g| g.unknown.iter().any(|u| u.contains("kubernetes-1.35.4")))
    );

    // Never more favourable than the standard, on every case.
    for s in [&rc, &ga, &unreadable] {
        let said = oracle(std::slice::from_ref(s)).remove(0);
        for ((case, ours), theirs) in s.cases.iter().zip(words(&verdicts(s))).zip(&said) {
            assert!(
                favour(ours) <= favour(theirs),
                "{case:?}: stackbot {ours}, the standard's test {theirs}"
            );
        }
    }
}

/// (e) A CVE record that answers 404: the test reads MITRE's error body, finds no
/// `containers` and skips the CVE (no CVE: pass); stackbot counts the record as unreadable,
/// so a verdict the CVE could change is `unknown`, naming the record.
#[test]
fn deviation_a_cve_record_that_answers_404_is_unknown_not_no_cve() {
    let id = "CVE-2099-0001";
    let s = Scenario {
        releases: small_releases(),
        feed: json!({"version": "https://jsonfeed.org/version/1.1", "items": [{"id": id}]}),
        records: vec![(
            id.to_string(),
            json!({"error": "CVE_RECORD_DNE", "message": "The cve record for the cve id does not exist."}),
        )],
        eol: eol(&[
            ("1.33", "2026-06-28"),
            ("1.34", "2026-10-27"),
            ("1.35", "2027-02-28"),
        ]),
        cases: vec![(v("v1.34.0"), d("2026-02-20"))],
    };
    assert_eq!(oracle(std::slice::from_ref(&s)).remove(0), ["pass"]);
    let mut data = upstream(&s);
    data.insert(
        &Key::CveRecord(id.to_string()),
        Fetched::Missing {
            url: format!("https://cveawg.mitre.org/api/cve/{id}"),
        },
    );
    let got = evaluate(v("v1.34.0"), &Inputs::from_data(&data), d("2026-02-20"));
    assert_eq!(got.verdict, Verdict::Unknown, "{:?}", got.reasons);
    assert!(
        got.unknown
            .iter()
            .any(|u| u.contains(id) && u.contains("404")),
        "{:?}",
        got.unknown
    );
}
