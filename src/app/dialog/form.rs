//! The input forms: `p` (partition, a number or a percent), `s` (replicas; marked pods are the
//! ones deleted) and `i` (one image per container). Each field is a ratatui-textarea. `Enter`
//! checks the input and, when it is good, hands the action on; bad input is refused inline
//! with the reason and the form keeps its text. `Tab`/`↑`/`↓` move between fields, `Esc`
//! cancels.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use ratatui_textarea::TextArea;

use crate::{
    actions::{Action, Target},
    kruise::intstr::parse_partition_input,
};

/// Which form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormKind {
    Partition {
        replicas: i32,
        /// Whether a percent is accepted (CloneSet).
        percent: bool,
    },
    Scale {
        replicas: i32,
        /// Pods marked in the rollout view: a scale-down deletes exactly these.
        marked: Vec<String>,
    },
    /// The containers' current images, in template order.
    Image { images: Vec<(String, String)> },
}

/// One input line.
#[derive(Debug, Clone)]
pub struct Field {
    pub label: String,
    pub input: TextArea<'static>,
}

impl Field {
    fn new(label: impl Into<String>, value: &str) -> Field {
        let mut input = TextArea::new(vec![value.to_owned()]);
        input.move_cursor(ratatui_textarea::CursorMove::End);
        Field {
            label: label.into(),
            input,
        }
    }

    /// The text typed (one line).
    pub fn text(&self) -> String {
        self.input.lines().join("")
    }
}

/// An open form.
#[derive(Debug, Clone)]
pub struct Form {
    pub kind: FormKind,
    pub target: Target,
    pub title: String,
    /// Context shown above the fields.
    pub info: Vec<String>,
    pub fields: Vec<Field>,
    pub focus: usize,
    /// Why the last `Enter` was refused.
    pub error: Option<String>,
}

/// What a key did to the form.
pub enum Outcome {
    Open,
    Cancel,
    Submit(Action),
}

impl Form {
    /// `current` as written, `held` the pods it holds back, out of `replicas`.
    pub fn partition(
        target: Target,
        current: Option<&str>,
        held: i32,
        replicas: i32,
        percent: bool,
    ) -> Form {
        let unit = if percent {
            "a number of pods (e.g. 3) or a percent (e.g. 40%)"
        } else {
            "a number of pods (e.g. 3)"
        };
        Form {
            title: format!("Set the partition of {}", target.describe()),
            info: vec![
                format!(
                    "partition now: {} ({held} of {replicas} pods held back)",
                    current.unwrap_or("unset")
                ),
                format!("new partition: {unit}"),
            ],
            fields: vec![Field::new("partition", current.unwrap_or("0"))],
            kind: FormKind::Partition { replicas, percent },
            target,
            focus: 0,
            error: None,
        }
    }

    pub fn scale(target: Target, replicas: i32, marked: Vec<String>) -> Form {
        let mut info = vec![format!("replicas now: {replicas}")];
        let proposed = if marked.is_empty() {
            replicas
        } else {
            info.push(format!(
                "marked: {} — scaling down deletes exactly these",
                marked.join(", ")
            ));
            (replicas - marked.len() as i32).max(0)
        };
        Form {
            title: format!("Scale {}", target.describe()),
            info,
            fields: vec![Field::new("replicas", &proposed.to_string())],
            kind: FormKind::Scale { replicas, marked },
            target,
            focus: 0,
            error: None,
        }
    }

    pub fn image(target: Target, images: Vec<(String, String)>) -> Form {
        Form {
            title: format!("Set images of {}", target.describe()),
            info: vec!["one image per container; unchanged lines are left alone".to_owned()],
            fields: images
                .iter()
                .map(|(name, image)| Field::new(name.clone(), image))
                .collect(),
            kind: FormKind::Image { images },
            target,
            focus: 0,
            error: None,
        }
    }

    pub fn key(&mut self, ev: KeyEvent) -> Outcome {
        match ev.code {
            KeyCode::Esc => return Outcome::Cancel,
            KeyCode::Enter => {
                return match self.check() {
                    Ok(action) => Outcome::Submit(action),
                    Err(why) => {
                        self.error = Some(why);
                        Outcome::Open
                    }
                };
            }
            KeyCode::Tab | KeyCode::Down => {
                self.focus = (self.focus + 1) % self.fields.len().max(1);
            }
            KeyCode::BackTab | KeyCode::Up => {
                let n = self.fields.len().max(1);
                self.focus = (self.focus + n - 1) % n;
            }
            // Line editing only: no newlines, no undo history shortcuts that span lines.
            KeyCode::Char('m' | 'j') if ev.modifiers.contains(KeyModifiers::CONTROL) => {}
            _ => {
                if let Some(field) = self.fields.get_mut(self.focus)
                    && field.input.input(ev)
                {
                    self.error = None;
                }
            }
        }
        Outcome::Open
    }

    /// The action the form asks for, or why not.
    pub fn check(&self) -> Result<Action, String> {
        match &self.kind {
            FormKind::Partition { replicas, percent } => {
                let text = self.fields.first().map(Field::text).unwrap_or_default();
                let value =
                    parse_partition_input(&text, Some(*replicas)).map_err(|e| e.to_string())?;
                if let IntOrString::String(s) = &value
                    && !percent
                {
                    return Err(format!(
                        "partition {s:?}: this kind's partition is a number of pods, not a percent"
                    ));
                }
                Ok(Action::Partition { value })
            }
            FormKind::Scale { replicas, marked } => {
                let text = self.fields.first().map(Field::text).unwrap_or_default();
                let text = text.trim();
                let n: i32 = text.parse().ok().filter(|n| *n >= 0).ok_or_else(|| {
                    format!("replicas {text:?} is not a number of pods (0 or more)")
                })?;
                if marked.is_empty() {
                    if n == *replicas {
                        return Err(format!("replicas are already {n}"));
                    }
                    return Ok(Action::Scale {
                        replicas: n,
                        pods: Vec::new(),
                    });
                }
                let removed = replicas - n;
                if removed < marked.len() as i32 {
                    return Err(format!(
                        "{} pod(s) are marked but {replicas} → {n} removes {}: scale to {} or \
                         unmark some",
                        marked.len(),
                        removed.max(0),
                        (replicas - marked.len() as i32).max(0)
                    ));
                }
                Ok(Action::Scale {
                    replicas: n,
                    pods: marked.clone(),
                })
            }
            FormKind::Image { images } => {
                let mut changed = Vec::new();
                for (field, (name, old)) in self.fields.iter().zip(images) {
                    let image = field.text().trim().to_owned();
                    if image.is_empty() {
                        return Err(format!("the image of container {name} is empty"));
                    }
                    if image.contains(char::is_whitespace) {
                        return Err(format!("the image of container {name} has a space in it"));
                    }
                    if image != *old {
                        changed.push((name.clone(), image));
                    }
                }
                if changed.is_empty() {
                    return Err("no image changed: edit one, or esc to leave".to_owned());
                }
                Ok(Action::SetImage { images: changed })
            }
        }
    }
}

#[cfg(test)]
mod tests {
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
}
