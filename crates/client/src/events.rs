//! Watch streams: mapping a stream of one object type into another (a served version's JSON
//! into the internal model), markers and errors passed through.

use std::sync::Arc;

use futures::{Stream, StreamExt as _};
use kube::runtime::watcher::{self, Event};

/// Maps a watch stream of one object type into another; objects `convert` rejects are dropped
/// (it logs why), markers and errors pass through.
pub fn map_events<A, B, S, C>(
    stream: S,
    convert: C,
) -> impl Stream<Item = Result<Event<B>, watcher::Error>> + Send
where
    S: Stream<Item = Result<Event<A>, watcher::Error>> + Send,
    C: Fn(A) -> Option<B> + Send + Sync + 'static,
    A: Send,
{
    let convert = Arc::new(convert);
    stream.filter_map(move |item| {
        let convert = convert.clone();
        async move {
            match item {
                Err(err) => Some(Err(err)),
                Ok(Event::Init) => Some(Ok(Event::Init)),
                Ok(Event::InitDone) => Some(Ok(Event::InitDone)),
                Ok(Event::InitApply(obj)) => convert(obj).map(|o| Ok(Event::InitApply(o))),
                Ok(Event::Apply(obj)) => convert(obj).map(|o| Ok(Event::Apply(o))),
                Ok(Event::Delete(obj)) => convert(obj).map(|o| Ok(Event::Delete(o))),
            }
        }
    })
}
