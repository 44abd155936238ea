//! `Effect`: IO that `update` asks for, as data. The kube layer's executor runs them and answers
//! with `Msg::EffectDone`. Destructive effects (later issues) pass through a typed confirm step.

use super::msg::ObjectRef;

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Fetch the object's YAML for the YAML view.
    FetchYaml(ObjectRef),
    /// Fetch the events involving the object.
    FetchEvents(ObjectRef),
    /// Rebuild the watches for another context and/or namespace (None = all namespaces).
    Switch {
        context: Option<String>,
        namespace: Option<String>,
    },
    /// Leave the console.
    Quit,
}
