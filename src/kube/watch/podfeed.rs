//! `PodFeed`: the pod watch's [`Feed`]: [`WatchedPod`]s into the console's own pod store, by
//! value. The same rules as [`super::StoreFeed`]: the first list is shown page by page (and
//! pods an interrupted attempt of it brought and the next did not are deleted at its end);
//! later relists swap in whole; the pods each event touched are named for the app.

use std::collections::HashSet;

use kube::runtime::watcher::Event;

use super::{Applied, Changes, Feed};
use crate::{
    api::pod::WatchedPod,
    app::{
        msg::PodKey,
        stores::{PodWriter, pods::PodName},
    },
};

pub struct PodFeed {
    writer: PodWriter,
    listed_once: bool,
    /// Pods seen since the last `Init` of the first list (to drop ones deleted meanwhile).
    seen: Vec<PodName>,
    changed: Vec<PodKey>,
    rebuilt: bool,
}

impl PodFeed {
    pub fn new(writer: PodWriter) -> Self {
        PodFeed {
            writer,
            listed_once: false,
            seen: Vec::new(),
            changed: Vec::new(),
            rebuilt: false,
        }
    }

    fn note(&mut self, key: &PodName) {
        if !self.rebuilt {
            self.changed.push(PodKey {
                namespace: key.namespace.to_string(),
                name: key.name.to_string(),
            });
        }
    }

    fn finish_first_list(&mut self) {
        let seen: HashSet<PodName> = self.seen.drain(..).collect();
        let stale: Vec<PodName> = self
            .writer
            .as_reader()
            .state()
            .iter()
            .map(|p| PodName::of(p))
            .filter(|k| !seen.contains(k))
            .collect();
        for key in stale {
            self.note(&key);
            self.writer.delete(&key.namespace, &key.name);
        }
        self.seen = Vec::new();
        self.listed_once = true;
    }
}

impl Feed<WatchedPod> for PodFeed {
    fn take_changes(&mut self) -> Changes {
        if std::mem::take(&mut self.rebuilt) {
            self.changed.clear();
            Changes::All
        } else {
            Changes::Keys(std::mem::take(&mut self.changed))
        }
    }

    fn apply(&mut self, event: Event<WatchedPod>) -> Applied {
        let touched = Applied {
            changed: true,
            ready: false,
        };
        match event {
            Event::Init if !self.listed_once => {
                self.seen.clear();
                Applied::default()
            }
            Event::InitApply(obj) if !self.listed_once => {
                // Nothing to clobber yet: show each page as it arrives.
                let pod = obj.into_pod();
                let key = PodName::of(&pod);
                self.note(&key);
                self.seen.push(key);
                self.writer.apply(pod);
                touched
            }
            Event::InitDone if !self.listed_once => {
                self.finish_first_list();
                Applied {
                    changed: true,
                    ready: true,
                }
            }
            Event::Init => {
                self.writer.relist_start();
                Applied::default()
            }
            Event::InitApply(obj) => {
                self.writer.relist_apply(obj.into_pod());
                Applied::default()
            }
            Event::InitDone => {
                self.writer.relist_done();
                self.rebuilt = true;
                Applied {
                    changed: true,
                    ready: true,
                }
            }
            Event::Apply(obj) => {
                let pod = obj.into_pod();
                self.note(&PodName::of(&pod));
                self.writer.apply(pod);
                touched
            }
            Event::Delete(obj) => {
                let key = PodName::of(&obj.pod);
                self.note(&key);
                self.writer.delete(&key.namespace, &key.name);
                touched
            }
        }
    }
}
