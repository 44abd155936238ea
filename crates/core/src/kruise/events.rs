//! Kubernetes Events as the ported controllers decide them (pure data): the controller shell
//! records them through its EventRecorder.

/// `Normal` or `Warning`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    Normal,
    Warning,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Normal => "Normal",
            Self::Warning => "Warning",
        }
    }
}

/// One event: type, reason (upstream's, e.g. `SuccessfulCreate`) and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRecord {
    pub type_: EventType,
    pub reason: String,
    pub message: String,
}

impl EventRecord {
    pub fn normal(reason: &str, message: impl Into<String>) -> Self {
        Self {
            type_: EventType::Normal,
            reason: reason.to_owned(),
            message: message.into(),
        }
    }

    pub fn warning(reason: &str, message: impl Into<String>) -> Self {
        Self {
            type_: EventType::Warning,
            reason: reason.to_owned(),
            message: message.into(),
        }
    }
}
