//! The Helm index reader on arbitrary text: an error or an index whose versions are all
//! strict semver that re-parse to themselves, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stackbot::upstream::helm::parse_index;

fuzz_target!(|text: &str| {
    if let Ok(index) = parse_index(text) {
        for versions in index.charts.values() {
            for v in versions {
                let s = v.version.to_string();
                assert_eq!(semver::Version::parse(&s).ok().as_ref(), Some(&v.version));
            }
        }
    }
});
