use fsguard_policy::LogFormat;

use super::render::{json, text, LINE_CAP};
use super::*;
use fsguard_policy::{Access, Rule};

fn ev<'a>(path: &'a [u8], dest: Option<&'a [u8]>, rule: Rule<'a>) -> Event<'a> {
    Event {
        event: "blocked",
        call: "rename",
        access: Access::Write,
        path,
        dest,
        rule,
        errno: 13,
        hint: None,
    }
}

fn render(e: &Event<'_>, format: LogFormat) -> String {
    let mut l = Line::new();
    match format {
        LogFormat::Text => text(&mut l, e),
        LogFormat::Json => json(&mut l, e, "/usr/bin/x"),
    }
    l.finish();
    String::from_utf8(l.as_bytes().to_vec()).unwrap()
}

#[test]
fn text_lines() {
    assert_eq!(
        render(&ev(b"/ws/a", Some(b"/etc/a"), Rule::Root), LogFormat::Text),
        "[fsguard] blocked rename write path=/ws/a dest=/etc/a rule=root\n"
    );
    assert_eq!(
        render(&ev(b"/ws/a b\"\n", None, Rule::Readonly), LogFormat::Text),
        "[fsguard] blocked rename write path=\"/ws/a b\\\"\\n\" rule=readonly\n"
    );
    assert_eq!(
        render(&ev(b"/ws/\xff", None, Rule::Readonly), LogFormat::Text),
        "[fsguard] blocked rename write path=\"/ws/\\xff\" rule=readonly\n"
    );
}

#[test]
fn json_lines_parse() {
    let s = render(
        &ev(
            b"/ws/\"q\"",
            Some(b"/d"),
            Rule::Deny(Access::Write, "/ws/**"),
        ),
        LogFormat::Json,
    );
    assert!(s.starts_with("{\"event\":\"blocked\",\"call\":\"rename\",\"access\":\"write\",\"path\":\"/ws/\\\"q\\\"\",\"dest\":\"/d\",\"rule\":\"write.deny:\\\"/ws/**\\\"\",\"pid\":"), "{s}");
    assert!(s.ends_with("}\n"));
}

#[test]
fn bytes_that_are_not_utf8_are_kept_apart_from_characters() {
    let raw = render(&ev(b"/ws/\xe9", None, Rule::Root), LogFormat::Json);
    let utf8 = render(&ev("/ws/é".as_bytes(), None, Rule::Root), LogFormat::Json);
    assert!(raw.contains("\"path\":\"/ws/\\udce9\""), "{raw}");
    assert!(utf8.contains("\"path\":\"/ws/é\""), "{utf8}");
    let text = render(&ev(b"/ws/\xe9", None, Rule::Root), LogFormat::Text);
    assert!(text.contains("path=\"/ws/\\xe9\""), "{text}");
}

#[test]
fn long_lines_are_cut_not_overflowed() {
    let long = vec![b'a'; 20000];
    let s = render(&ev(&long, Some(&long), Rule::Root), LogFormat::Text);
    assert!(s.len() <= LINE_CAP + 1 && s.ends_with("…\n"));
}
