//! The input forms: `p` (partition, a number or a percent), `s` (replicas; marked pods are the
//! ones deleted) and `i` (one image per container). Each field is a ratatui-textarea. `Enter`
//! checks the input and, when it is good, hands the action on; bad input is refused inline
//! with the reason and the form keeps its text. `Tab`/`↑`/`↓` move between fields, `Esc`
//! cancels.
//!
//! A field's prefilled value is selected when the field gets the focus, as a browser selects a
//! prefilled input: the first character typed replaces it (`6`, then `150%`, is `150%`), a
//! backspace clears it, and an arrow key keeps it to edit. `Ctrl-U` kills to the start of the
//! line, as readline does (ratatui-textarea binds it to undo).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use ratatui_textarea::TextArea;

use crate::{
    actions::{Action, RestartStrategy, Target},
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
    /// Restart in place: the pod's containers, and the marked pods after the first.
    Restart {
        containers: Vec<String>,
        then: Vec<String>,
    },
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
        .focused()
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
        .focused()
    }

    pub fn image(target: Target, images: Vec<(String, String)>) -> Form {
        Form {
            title: format!("Set images of {}", target.describe()),
            info: vec![
                "one image per container (unchanged ones are left alone); → or End to edit a line"
                    .to_owned(),
            ],
            fields: images
                .iter()
                .map(|(name, image)| Field::new(name.clone(), image))
                .collect(),
            kind: FormKind::Image { images },
            target,
            focus: 0,
            error: None,
        }
        .focused()
    }

    /// `r`: the containers to restart (default all) and the ContainerRecreateRequest strategy
    /// (kubectl-kruise's defaults).
    pub fn restart(target: Target, containers: Vec<String>, then: Vec<String>) -> Form {
        let d = RestartStrategy::default();
        let mut info = vec![format!(
            "containers of {}: {} (list the ones to restart, comma-separated)",
            target.name,
            containers.join(", ")
        )];
        if !then.is_empty() {
            info.push(format!(
                "then, one after another (each once the previous pod is Ready again and the                  budget allows): {}",
                then.join(", ")
            ));
        }
        let title = if then.is_empty() {
            format!("Restart containers of pod {}", target.name)
        } else {
            format!("Restart containers of {} pods", then.len() + 1)
        };
        Form {
            title,
            info,
            fields: vec![
                Field::new("containers", &containers.join(",")),
                Field::new("failurePolicy", &d.failure_policy),
                Field::new("orderedRecreate", &d.ordered_recreate.to_string()),
                Field::new(
                    "unreadyGracePeriodSeconds",
                    &d.unready_grace_period_seconds.to_string(),
                ),
                Field::new("minStartedSeconds", &d.min_started_seconds.to_string()),
                Field::new(
                    "activeDeadlineSeconds",
                    &d.active_deadline_seconds.to_string(),
                ),
                Field::new(
                    "ttlSecondsAfterFinished",
                    &d.ttl_seconds_after_finished.to_string(),
                ),
            ],
            kind: FormKind::Restart { containers, then },
            target,
            focus: 0,
            error: None,
        }
        .focused()
    }

    /// Moves the focus to field `i`: the field left keeps its text unselected, the one
    /// entered has its value selected, so typing replaces it.
    fn focus_on(&mut self, i: usize) {
        if let Some(field) = self.fields.get_mut(self.focus) {
            field.input.cancel_selection();
        }
        self.focus = i;
        if let Some(field) = self.fields.get_mut(i)
            && !field.text().is_empty()
        {
            field.input.select_all();
        }
    }

    /// The form as opened: the first field focused, its value selected.
    fn focused(mut self) -> Form {
        self.focus_on(0);
        self
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
                self.focus_on((self.focus + 1) % self.fields.len().max(1));
            }
            KeyCode::BackTab | KeyCode::Up => {
                let n = self.fields.len().max(1);
                self.focus_on((self.focus + n - 1) % n);
            }
            // Line editing only: no newlines, no undo history shortcuts that span lines.
            KeyCode::Char('m' | 'j') if ev.modifiers.contains(KeyModifiers::CONTROL) => {}
            // readline's kill to the start of the line (the selection, when there is one).
            KeyCode::Char('u') if ev.modifiers.contains(KeyModifiers::CONTROL) => {
                if let Some(field) = self.fields.get_mut(self.focus)
                    && field.input.delete_line_by_head()
                {
                    self.error = None;
                }
            }
            _ => {
                if let Some(field) = self.fields.get_mut(self.focus) {
                    let selecting = field.input.is_selecting();
                    if field.input.input(ev) {
                        self.error = None;
                    } else if selecting && !ev.modifiers.contains(KeyModifiers::SHIFT) {
                        // A move (even one that cannot go further, → at the end) drops the
                        // selection: the value stays, to be edited.
                        field.input.cancel_selection();
                    }
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
            FormKind::Restart { containers, .. } => self.check_restart(containers),
        }
    }
}

impl Form {
    fn check_restart(&self, known: &[String]) -> Result<Action, String> {
        let text = |i: usize| {
            self.fields
                .get(i)
                .map(Field::text)
                .unwrap_or_default()
                .trim()
                .to_owned()
        };
        let mut chosen: Vec<String> = Vec::new();
        for name in text(0).split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if !known.iter().any(|k| k == name) {
                return Err(format!(
                    "no container {name:?} in the pod (containers: {})",
                    known.join(", ")
                ));
            }
            if !chosen.iter().any(|c| c == name) {
                chosen.push(name.to_owned());
            }
        }
        if chosen.is_empty() {
            return Err(format!(
                "name at least one container (containers: {})",
                known.join(", ")
            ));
        }
        let number = |i: usize, name: &str| -> Result<i64, String> {
            let t = text(i);
            t.parse::<i64>()
                .ok()
                .filter(|n| *n >= 0)
                .ok_or_else(|| format!("{name} {t:?} is not a number of seconds (0 or more)"))
        };
        let failure_policy = match text(1).as_str() {
            "Fail" | "fail" => "Fail",
            "Ignore" | "ignore" => "Ignore",
            other => return Err(format!("failurePolicy {other:?}: Fail or Ignore")),
        };
        let ordered_recreate = match text(2).as_str() {
            "true" | "yes" => true,
            "false" | "no" => false,
            other => return Err(format!("orderedRecreate {other:?}: true or false")),
        };
        let small =
            |v: i64, name: &str| i32::try_from(v).map_err(|_| format!("{name} {v} is too large"));
        let strategy = RestartStrategy {
            failure_policy: failure_policy.to_owned(),
            ordered_recreate,
            unready_grace_period_seconds: number(3, "unreadyGracePeriodSeconds")?,
            min_started_seconds: small(number(4, "minStartedSeconds")?, "minStartedSeconds")?,
            active_deadline_seconds: number(5, "activeDeadlineSeconds")?,
            ttl_seconds_after_finished: small(
                number(6, "ttlSecondsAfterFinished")?,
                "ttlSecondsAfterFinished",
            )?,
        };
        if strategy.active_deadline_seconds == 0 {
            return Err("activeDeadlineSeconds 0 leaves no time to restart".to_owned());
        }
        Ok(Action::Restart {
            containers: chosen,
            strategy,
        })
    }
}

#[cfg(test)]
mod tests;
