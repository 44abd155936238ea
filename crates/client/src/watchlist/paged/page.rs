//! One page of a list, fetched by its own task: the request, the body as it arrives (its head
//! told as soon as it holds the list's metadata), and the parse.

use std::{
    future::Future,
    pin::Pin,
    task::{Context, Poll},
};

use futures::AsyncBufReadExt as _;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kube::{Client, api::ListParams};
use serde::{Deserialize, de::DeserializeOwned};
use tokio::{sync::oneshot, task::JoinHandle};

use super::head::{self, Scan};

/// A page of a list: kube's `ObjectList` without its `Clone` bound (or its kind and version).
#[derive(Deserialize)]
#[serde(bound = "K: DeserializeOwned")]
pub struct List<K> {
    #[serde(default)]
    pub metadata: ListMeta,
    /// `null` is an empty list, as kube reads it.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub items: Vec<K>,
}

fn null_as_empty<'de, D, K>(d: D) -> Result<Vec<K>, D::Error>
where
    D: serde::Deserializer<'de>,
    K: DeserializeOwned,
{
    Ok(Option::<Vec<K>>::deserialize(d)?.unwrap_or_default())
}

/// A page being fetched (and parsed) by its task; dropping it stops the task.
pub struct Page<K> {
    /// Whether the request carried a continue token (a 410 then means the token expired).
    pub continued: bool,
    head: Option<oneshot::Receiver<ListMeta>>,
    task: JoinHandle<kube::Result<List<K>>>,
}

impl<K> Drop for Page<K> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts fetching the page `lp` asks for from the collection at `url`.
pub fn fetch<K>(client: Client, url: String, lp: ListParams) -> Page<K>
where
    K: DeserializeOwned + Send + 'static,
{
    let (tx, rx) = oneshot::channel();
    let continued = lp.continue_token.is_some();
    let task = tokio::spawn(read(client, url, lp, tx));
    Page {
        continued,
        head: Some(rx),
        task,
    }
}

impl<K> Page<K> {
    /// The page's metadata once its head holds it; `None` when it is not in the head (or the
    /// request failed): then only [`Page::list`] tells.
    pub async fn head(&mut self) -> Option<ListMeta> {
        match self.head.take() {
            Some(rx) => rx.await.ok(),
            None => None,
        }
    }

    /// The whole page, parsed.
    pub fn list(mut self) -> impl Future<Output = kube::Result<List<K>>> {
        // The page (and its abort-on-drop) lives until the task has answered.
        std::future::poll_fn(move |cx: &mut Context<'_>| -> Poll<kube::Result<List<K>>> {
            match Pin::new(&mut self.task).poll(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Ok(answer)) => Poll::Ready(answer),
                Poll::Ready(Err(join)) => Poll::Ready(Err(kube::Error::ReadEvents(
                    std::io::Error::other(join.to_string()),
                ))),
            }
        })
    }
}

async fn read<K>(
    client: Client,
    url: String,
    lp: ListParams,
    head_tx: oneshot::Sender<ListMeta>,
) -> kube::Result<List<K>>
where
    K: DeserializeOwned,
{
    let mut req = kube::core::Request::new(url)
        .list(&lp)
        .map_err(kube::Error::BuildRequest)?;
    // As kube's `Api::list` marks its requests.
    req.extensions_mut().insert("list");
    let mut body = client.request_stream(req).await?;
    let mut buf: Vec<u8> = Vec::new();
    let mut head_tx = Some(head_tx);
    loop {
        let chunk = body.fill_buf().await.map_err(kube::Error::ReadEvents)?;
        if chunk.is_empty() {
            break;
        }
        let n = chunk.len();
        if buf.is_empty() {
            buf.reserve(n.max(64 << 10));
        }
        buf.extend_from_slice(chunk);
        body.consume_unpin(n);
        if let Some(tx) = head_tx.take() {
            match head::scan(&buf) {
                Scan::Found(meta) => {
                    // The receiver may be gone (the stream was dropped): the task ends soon.
                    let _ = tx.send(meta);
                }
                Scan::NeedMore => head_tx = Some(tx),
                // Not in the head: the caller reads the metadata from the whole page.
                Scan::Absent => {}
            }
        }
    }
    drop(head_tx);
    serde_json::from_slice(&buf).map_err(kube::Error::SerdeError)
}
