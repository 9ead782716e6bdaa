//! Release names (the tags): whatever parses formats back to a name that parses to the same
//! value, and the formatted name is exactly the input (one spelling per release).
#![no_main]

use libfuzzer_sys::fuzz_target;
use stackbot::model::ReleaseName;

fuzz_target!(|s: &str| {
    if let Ok(r) = ReleaseName::parse(s) {
        let text = r.to_string();
        assert_eq!(
            ReleaseName::parse(&text).as_ref(),
            Ok(&r),
            "round trip of {s:?}"
        );
        assert_eq!(text, s, "one spelling per release name");
    }
});
