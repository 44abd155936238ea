//! The forms' checks and their line editing, key by key.

use super::*;
use crate::api::kinds::parse_kind;

fn target(kind: &str) -> Target {
    Target::new(parse_kind(kind).expect("kind"), Some("demo"), "web")
}

fn typed(form: &mut Form, text: &str) {
    form.fields[form.focus].input = TextArea::new(vec![text.to_owned()]);
}

#[test]
fn bad_partitions_are_refused_with_the_reason() {
    let mut form = Form::partition(target("cs"), Some("6"), 6, 10, true);
    for (text, why) in [
        ("abc", "not a number of pods"),
        ("150%", "over 100%"),
        ("-1", "negative"),
        ("11", "more than the 10 replicas"),
    ] {
        typed(&mut form, text);
        let err = form.check().expect_err(text);
        assert!(err.contains(why), "{text}: {err}");
    }
    typed(&mut form, "40%");
    assert_eq!(
        form.check(),
        Ok(Action::Partition {
            value: IntOrString::String("40%".into())
        })
    );
    let mut asts = Form::partition(target("asts"), Some("2"), 2, 3, false);
    typed(&mut asts, "50%");
    assert!(asts.check().expect_err("percent").contains("not a percent"));
}

#[test]
fn scaling_down_with_marked_pods_deletes_exactly_those() {
    let form = Form::scale(target("cs"), 5, vec!["web-a".into(), "web-b".into()]);
    assert_eq!(
        form.fields[0].text(),
        "3",
        "proposes one pod fewer per mark"
    );
    assert_eq!(
        form.check(),
        Ok(Action::Scale {
            replicas: 3,
            pods: vec!["web-a".into(), "web-b".into()]
        })
    );
    let mut form = form;
    typed(&mut form, "4");
    assert!(form.check().expect_err("too few").contains("scale to 3"));
}

#[test]
fn restart_defaults_to_every_container_and_refuses_unknown_ones() {
    let pod = Target::new(parse_kind("pod").expect("kind"), Some("demo"), "web-1");
    let mut form = Form::restart(pod, vec!["app".into(), "side".into()], vec![]);
    assert_eq!(
        form.check(),
        Ok(Action::Restart {
            containers: vec!["app".into(), "side".into()],
            strategy: RestartStrategy::default(),
        })
    );
    typed(&mut form, "app, nope");
    assert!(
        form.check()
            .expect_err("unknown")
            .contains("no container \"nope\"")
    );
    typed(&mut form, "side");
    form.focus = 1;
    typed(&mut form, "Sometimes");
    assert!(form.check().expect_err("policy").contains("Fail or Ignore"));
    form.focus = 5;
    typed(&mut form, "1");
    form.focus = 1;
    typed(&mut form, "Ignore");
    let Ok(Action::Restart {
        containers,
        strategy,
    }) = form.check()
    else {
        panic!("restart");
    };
    assert_eq!(containers, vec!["side".to_owned()]);
    assert_eq!(strategy.failure_policy, "Ignore");
    assert_eq!(strategy.active_deadline_seconds, 1);
}

fn keys(form: &mut Form, keys: &[KeyEvent]) {
    for k in keys {
        form.key(*k);
    }
}

fn chars(text: &str) -> Vec<KeyEvent> {
    text.chars()
        .map(|c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
        .collect()
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

#[test]
fn typing_into_a_prefilled_field_replaces_its_value() {
    let mut form = Form::partition(target("cs"), Some("6"), 6, 10, true);
    keys(&mut form, &chars("150%"));
    assert_eq!(form.fields[0].text(), "150%", "not 6150%");
    // Once edited, typing goes on at the cursor.
    keys(
        &mut form,
        &[key(KeyCode::Backspace), key(KeyCode::Backspace)],
    );
    keys(&mut form, &chars("5%"));
    assert_eq!(form.fields[0].text(), "155%");
    // Backspace on a fresh field clears it; an arrow keeps the value to edit.
    let mut form = Form::scale(target("cs"), 12, vec![]);
    keys(&mut form, &[key(KeyCode::Backspace)]);
    assert_eq!(form.fields[0].text(), "");
    let mut form = Form::scale(target("cs"), 12, vec![]);
    keys(&mut form, &[key(KeyCode::Right)]);
    keys(&mut form, &chars("0"));
    assert_eq!(form.fields[0].text(), "120");
    let mut form = Form::scale(target("cs"), 12, vec![]);
    keys(&mut form, &[key(KeyCode::Left)]);
    keys(&mut form, &chars("0"));
    assert_eq!(form.fields[0].text(), "102");
    // Each field entered with Tab is selected afresh; the one left is not.
    let mut form = Form::image(
        target("cs"),
        vec![("app".into(), "a:1".into()), ("side".into(), "s:1".into())],
    );
    keys(&mut form, &[key(KeyCode::Tab)]);
    assert!(!form.fields[0].input.is_selecting());
    keys(&mut form, &chars("s:2"));
    keys(&mut form, &[key(KeyCode::BackTab)]);
    keys(&mut form, &chars("a:2"));
    assert_eq!(
        form.check(),
        Ok(Action::SetImage {
            images: vec![("app".into(), "a:2".into()), ("side".into(), "s:2".into())]
        })
    );
}

#[test]
fn ctrl_u_kills_to_the_start_of_the_line() {
    // On the selected value: all of it.
    let mut form = Form::partition(target("cs"), Some("40%"), 4, 10, true);
    keys(&mut form, &[ctrl('u')]);
    assert_eq!(form.fields[0].text(), "");
    keys(&mut form, &chars("2"));
    assert_eq!(
        form.check(),
        Ok(Action::Partition {
            value: IntOrString::Int(2)
        })
    );
    // Mid-line: what is before the cursor.
    keys(&mut form, &chars("5%"));
    keys(&mut form, &[key(KeyCode::Left), ctrl('u')]);
    assert_eq!(form.fields[0].text(), "%");
    // And it clears a refusal, as typing does.
    keys(&mut form, &[key(KeyCode::Enter)]);
    assert!(form.error.is_some());
    keys(&mut form, &[key(KeyCode::End), ctrl('u')]);
    assert_eq!(
        (form.fields[0].text().as_str(), form.error.as_deref()),
        ("", None)
    );
}

#[test]
fn images_send_only_what_changed() {
    let mut form = Form::image(
        target("cs"),
        vec![("app".into(), "a:1".into()), ("side".into(), "s:1".into())],
    );
    assert!(
        form.check()
            .expect_err("unchanged")
            .contains("no image changed")
    );
    form.focus = 1;
    typed(&mut form, "s:2");
    assert_eq!(
        form.check(),
        Ok(Action::SetImage {
            images: vec![("side".into(), "s:2".into())]
        })
    );
}
