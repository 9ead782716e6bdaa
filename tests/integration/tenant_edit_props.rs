//! Properties of the format-preserving editor over generated tenant files: documents that
//! are not edited stay byte-identical, every comment line survives, and the edited list
//! re-parses to exactly the intended versions.

use proptest::prelude::*;
use stackbot::model::StackId;
use stackbot::tenants::edit::{Edit, TenantFile};
use stackbot::tenants::plan::next_versions;
use stackbot::tenants::scan::split_documents;

fn limits() -> stackbot::yaml::Limits {
    stackbot::config::LimitsConfig::default().tenant_files()
}

#[derive(Debug, Clone)]
struct Shape {
    crlf: bool,
    indent: usize,
    flow: bool,
    quote: u8,
    versions: usize,
    keep: usize,
    comments: Vec<bool>,
    before: usize,
    after: usize,
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        any::<bool>(),
        2usize..=5,
        any::<bool>(),
        0u8..3,
        1usize..5,
        1usize..5,
        proptest::collection::vec(any::<bool>(), 8),
        0usize..3,
        0usize..3,
    )
        .prop_map(
            |(crlf, indent, flow, quote, versions, keep, comments, before, after)| Shape {
                crlf,
                indent,
                flow,
                quote,
                versions,
                keep,
                comments,
                before,
                after,
            },
        )
}

fn q(s: &Shape, v: &str) -> String {
    match s.quote {
        0 => v.to_string(),
        1 => format!("'{v}'"),
        _ => format!("\"{v}\""),
    }
}

fn other_doc(i: usize, s: &Shape) -> String {
    let p = " ".repeat(s.indent);
    format!(
        "---\n# other document {i}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n{p}name: cm-{i}   # keep me\ndata:\n{p}versions: \"[v1, v2]\"\n{p}list:\n{p}- v1\n"
    )
}

fn stack_doc(s: &Shape) -> String {
    let p = " ".repeat(s.indent);
    let c = |i: usize, text: &str| {
        if s.comments[i] {
            format!("{p}# {text}\n")
        } else {
            String::new()
        }
    };
    let versions: Vec<String> = (1..=s.versions).map(|n| q(s, &format!("v{n}"))).collect();
    let list = if s.flow {
        format!("{p}versions: [{}]\n", versions.join(", "))
    } else {
        let mut l = format!("{p}versions:\n");
        for (i, v) in versions.iter().enumerate() {
            l.push_str(&c(4 + (i % 4), &format!("about {v}")));
            l.push_str(&format!("{p}{p}- {v}\n"));
        }
        l
    };
    format!(
        "---\n# the stack\napiVersion: clusterstack.x-k8s.io/v1alpha1\n{}kind: ClusterStack\nmetadata:\n{p}name: openstack-scs2-1-33\n{}spec:\n{p}provider: openstack\n{}{p}name: scs2\n{p}kubernetesVersion: \"1.33\"\n{list}{p}autoSubscribe: false\n",
        c(0, "api"),
        c(1, "spec follows"),
        c(2, "provider")
    )
}

fn file(s: &Shape) -> String {
    let mut out = String::new();
    for i in 0..s.before {
        out.push_str(&other_doc(i, s));
    }
    out.push_str(&stack_doc(s));
    for i in 0..s.after {
        out.push_str(&other_doc(10 + i, s));
    }
    if s.crlf {
        out = out.replace('\n', "\r\n");
    }
    out
}

fn comment_lines(t: &str) -> Vec<&str> {
    t.lines()
        .filter(|l| l.trim_start().starts_with('#'))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn edits_touch_only_the_intended_list(s in shape()) {
        let text = file(&s);
        let f = TenantFile::parse("gen.yaml", text.as_bytes(), &limits()).unwrap();
        let stack = StackId::new("openstack", "scs2").unwrap();
        let docs = f.cluster_stacks(&stack).unwrap();
        prop_assert_eq!(docs.len(), 1);
        let old = docs[0].versions.clone().unwrap();
        let new_version = format!("v{}", s.versions + 1);
        let want = next_versions(&old, &new_version, s.keep);
        let out = f.apply(&[Edit::SetVersions { doc: docs[0].doc, versions: want.clone() }]).unwrap();

        // The edited list says exactly what was intended.
        let g = TenantFile::parse("gen.yaml", out.as_bytes(), &limits()).unwrap();
        prop_assert_eq!(g.cluster_stacks(&stack).unwrap()[0].versions.clone(), Some(want));

        // Every other document is byte-identical.
        let (a, b) = (split_documents(&text), split_documents(&out));
        prop_assert_eq!(a.len(), b.len());
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            if i != docs[0].doc {
                prop_assert_eq!(&text[x.clone()], &out[y.clone()]);
            }
        }

        // Every comment line survives, in order; line endings stay as they were.
        prop_assert_eq!(comment_lines(&text), comment_lines(&out));
        prop_assert_eq!(out.contains("\r\n"), s.crlf);
        if s.crlf {
            prop_assert_eq!(out.matches('\n').count(), out.matches("\r\n").count());
        }
    }
}
