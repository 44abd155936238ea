//! `Stores`: read handles of the reflector stores, one per kind. Cheap to clone; the kube layer
//! holds the writers. Tests build them from fixtures with `kube::runtime::reflector::store()`.

use kube::runtime::reflector::Store;

use crate::api::{CloneSet, DaemonSet, SlimPod, StatefulSet};

#[derive(Clone)]
pub struct Stores {
    pub clonesets: Store<CloneSet>,
    pub statefulsets: Store<StatefulSet>,
    pub daemonsets: Store<DaemonSet>,
    pub pods: Store<SlimPod>,
}
