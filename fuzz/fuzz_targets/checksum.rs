//! The node-image CHECKSUM parser on arbitrary bodies: an error or a 64-character lowercase
//! hex sha256 that appears in the body, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stackbot::upstream::images::parse_checksum;

fuzz_target!(|body: &str| {
    if let Ok(h) = parse_checksum(body, "ubuntu-2404-kube-v1.34.7.qcow2") {
        assert_eq!(h.len(), 64);
        assert!(
            h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
        assert!(body.contains(&h));
        assert!(body.contains("ubuntu-2404-kube-v1.34.7.qcow2"));
    }
});
