use super::*;

const L: Limits = Limits {
    max_bytes: 1 << 20,
    max_depth: 16,
    max_nodes: 10_000,
    setting: Some("limits.test"),
};

/// One anchor of `width` scalars, referenced `refs` times: few references, many nodes.
fn wide_bomb(width: usize, refs: usize) -> String {
    let items = vec!["x"; width].join(", ");
    let aliases = vec!["*a"; refs].join(", ");
    format!("anchor: &a [{items}]\nrefs: [{aliases}]\n")
}

#[test]
fn ordinary_documents_pass_and_parse() {
    let text = "a: &x {b: [1, 2]}\nc: *x\n---\nd: e\n";
    check(text, "t.yaml", &L).unwrap();
    let v: yaml_serde::Value = from_str("a: [1, 2]\n", "t.yaml", &L).unwrap();
    assert_eq!(v["a"][1], yaml_serde::Value::from(2));
}

#[test]
fn the_wide_alias_bomb_is_refused_by_nodes_produced_not_references() {
    // 100 references to a 200-scalar anchor: 20,000 nodes from 100 aliases.
    let e = check(&wide_bomb(200, 100), "t.yaml", &L).unwrap_err();
    assert_eq!(e.limit, Some(Limit::Nodes));
    assert_eq!(e.line, Some(2));
    assert!(e.message.contains("alias `*a` repeats 201 nodes"), "{e}");
    assert!(e.to_string().contains("limits.test.max_nodes"), "{e}");
    assert!(e.to_string().starts_with("t.yaml:2: "), "{e}");
    // The same nodes written out are no more (and no less) acceptable.
    assert!(check(&wide_bomb(200, 40), "t.yaml", &L).is_ok());
}

#[test]
fn the_classic_billion_laughs_is_refused_early() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    let e = check(&text, "t.yaml", &L).unwrap_err();
    assert_eq!(e.limit, Some(Limit::Nodes));
    assert!(
        e.line.unwrap() <= 5,
        "refused at the first level over the budget: {e}"
    );
}

#[test]
fn deep_nesting_is_refused_at_the_first_level_past_the_limit() {
    for text in [
        format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
        format!("{}x{}", "{a: ".repeat(50_000), "}".repeat(50_000)),
        format!("{}x\n", "- ".repeat(50_000)),
    ] {
        let e = check(&text, "t.yaml", &L).unwrap_err();
        assert_eq!(e.limit, Some(Limit::Depth), "{e}");
        assert!(e.message.contains("nested deeper than 16 levels"), "{e}");
    }
    let ok = format!("{}{}", "[".repeat(16), "]".repeat(16));
    check(&ok, "t.yaml", &L).unwrap();
    let over = format!("{}{}", "[".repeat(17), "]".repeat(17));
    assert!(check(&over, "t.yaml", &L).is_err());
}

#[test]
fn an_alias_counts_at_the_depth_its_content_reaches() {
    let deep = format!("{}x{}", "[".repeat(10), "]".repeat(10));
    let text = format!("a: &d {deep}\nb: [[[[[[[*d]]]]]]]\n");
    let e = check(&text, "t.yaml", &L).unwrap_err();
    assert_eq!(e.limit, Some(Limit::Depth));
    assert!(e.message.contains("alias `*d` nests deeper"), "{e}");
}

#[test]
fn an_alias_inside_its_own_anchor_is_refused() {
    let e = check("a: &a [x, *a]\n", "t.yaml", &L).unwrap_err();
    assert!(e.message.contains("inside the node it names"), "{e}");
}

#[test]
fn size_is_refused_before_parsing_and_names_the_limit() {
    let small = Limits { max_bytes: 10, ..L };
    let e = check("a: 12345678901\n", "https://h/x.yaml", &small).unwrap_err();
    assert_eq!(e.limit, Some(Limit::Bytes));
    assert_eq!(e.line, None);
    assert!(
        e.to_string().starts_with("https://h/x.yaml: 15 bytes"),
        "{e}"
    );
    assert!(
        e.to_string().contains("`limits.test.max_bytes` (10)"),
        "{e}"
    );
}

#[test]
fn anchors_are_scoped_to_their_document() {
    // The second document's `*a` names nothing (an error for the parser), and repeats nothing.
    let text = format!("{}---\nb: *a\n", wide_bomb(200, 10));
    check(&text, "t.yaml", &L).unwrap();
}

#[test]
fn syntax_errors_name_the_line_like_the_parser_does() {
    let mut r = Reader::new("a: 1\nb: [\n", "t.yaml", &L).unwrap();
    let err = std::iter::from_fn(|| r.next_event())
        .find_map(Result::err)
        .unwrap();
    assert_eq!(err.limit, None);
    assert!(err.line.unwrap() >= 2, "{err}");
    let serde = yaml_serde::from_str::<yaml_serde::Value>("a: 1\nb: [\n").unwrap_err();
    let words = err.message.strip_prefix("not valid YAML: ").unwrap();
    assert!(
        serde.to_string().starts_with(&words[..20]),
        "{serde} / {err}"
    );
    // `check` leaves it to the value's parser, which reports it in its own words.
    assert!(check("a: 1\nb: [\n", "t.yaml", &L).is_ok());
    let e = from_str::<yaml_serde::Value>("a: 1\nb: [\n", "t.yaml", &L).unwrap_err();
    assert!(e.message.starts_with("not valid YAML"), "{e}");
}

#[test]
fn skip_node_counts_what_it_skips() {
    let text = wide_bomb(200, 100);
    let mut r = Reader::new(&text, "t.yaml", &L).unwrap();
    let mut err = None;
    while let Some(e) = r.next_event() {
        match e {
            Ok(start @ Event::SequenceStart { .. }) => {
                if let Err(e) = r.skip_node(&start) {
                    err = Some(e);
                    break;
                }
            }
            Ok(_) => {}
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    assert_eq!(err.unwrap().limit, Some(Limit::Nodes));
}

#[test]
fn reading_time_is_linear_in_nesting_refused() {
    // 100,000 flow levels: refused at level 17 after reading a few bytes, not after the
    // scanner's quadratic walk over all of them (a minute and more).
    let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let mut r = Reader::new(&text, "t.yaml", &L).unwrap();
    let mut events = 0;
    while let Some(e) = r.next_event() {
        events += 1;
        if e.is_err() {
            break;
        }
    }
    assert!(events < 40, "{events} events read before the refusal");
}

#[test]
fn a_streaming_reader_counts_only_what_aliases_repeat() {
    let many = format!("a: [{}]\n", vec!["x"; 50_000].join(","));
    assert_eq!(
        check(&many, "t.yaml", &L).unwrap_err().limit,
        Some(Limit::Nodes)
    );
    let mut r = Reader::streaming(&many, "t.yaml", &L).unwrap();
    while let Some(e) = r.next_event() {
        e.unwrap();
    }
    let bomb = wide_bomb(200, 100);
    let mut r = Reader::streaming(&bomb, "t.yaml", &L).unwrap();
    let err = std::iter::from_fn(|| r.next_event())
        .find_map(Result::err)
        .unwrap();
    assert_eq!(err.limit, Some(Limit::Nodes));
}
