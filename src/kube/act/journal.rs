//! What the journal records of each action sent: when, where, as whom, the exact request and
//! how it ended.

use jiff::Timestamp;
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use kube::{Api, api::PostParams};

use super::Actor;
use crate::{
    actions::Prepared,
    journal::{Entry, Outcome},
};

impl Actor {
    /// The username the server authenticates this client as (`kubectl auth whoami`), asked once;
    /// `None` when the server does not say (before 1.28, or forbidden).
    async fn user(&self) -> Option<String> {
        self.user
            .get_or_init(|| async {
                let api: Api<SelfSubjectReview> = Api::all(self.client.clone());
                match api
                    .create(&PostParams::default(), &SelfSubjectReview::default())
                    .await
                {
                    Ok(review) => review.status.and_then(|s| s.user_info?.username),
                    Err(err) => {
                        tracing::info!("the server does not say who we are: {err}");
                        None
                    }
                }
            })
            .await
            .clone()
    }

    pub(super) async fn journal(&self, prepared: &Prepared, result: Outcome) {
        let Some(journal) = &self.journal else {
            return;
        };
        let entry = Entry {
            time: Timestamp::now(),
            context: self.context.clone(),
            user: self.user().await,
            cluster: self.cluster.clone(),
            target: prepared.target.clone(),
            action: prepared.action.clone(),
            request: prepared.request.clone(),
            inverse: prepared.inverse.clone().filter(|_| result.ok),
            result,
        };
        if let Err(err) = journal.append(&entry) {
            tracing::warn!("cannot journal an action: {err:#}");
        }
    }
}
