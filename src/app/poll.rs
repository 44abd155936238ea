//! The polled views: `:protect` and the seed kinds' lists have no watch of their own, so the one
//! on top is listed again every [`REFRESH_SECONDS`] (and at once when opened); a rollout view
//! polls the NodeImages its next-image mark reads.

use jiff::Timestamp;

use super::{App, Effect, Listing, images::ImageKind, route::Route};

/// How often the view on top is listed again.
pub const REFRESH_SECONDS: i64 = 2;

/// Whether a poll that last answered at `fetched` is due again at `now`.
pub fn stale(fetched: Option<Timestamp>, now: Timestamp) -> bool {
    fetched.is_none_or(|t| now.as_second() - t.as_second() >= REFRESH_SECONDS)
}

/// The fetch the view on top is due for (every [`REFRESH_SECONDS`], or now with `force`); a
/// fetch already out is not sent again.
pub fn due(app: &mut App, force: bool) -> Vec<Effect> {
    let now = app.now;
    let Some(route) = app.stack.last_mut() else {
        return Vec::new();
    };
    let (fetched, in_flight, effect) = match route {
        Route::Protect(v) => (
            v.fetched,
            &mut v.in_flight,
            Effect::List(Listing::Protected),
        ),
        Route::CronJobs(v) => (v.fetched, &mut v.in_flight, Effect::List(Listing::CronJobs)),
        Route::BroadcastJobs(v) => (
            v.fetched,
            &mut v.in_flight,
            Effect::List(Listing::BroadcastJobs),
        ),
        Route::WorkloadSpreads(v) => (
            v.fetched,
            &mut v.in_flight,
            Effect::List(Listing::WorkloadSpreads),
        ),
        Route::UnitedDeployments(v) => (
            v.fetched,
            &mut v.in_flight,
            Effect::List(Listing::UnitedDeployments),
        ),
        Route::Images(v) => (
            v.fetched,
            &mut v.in_flight,
            Effect::List(Listing::Images(v.kind)),
        ),
        Route::PersistentPodStates(v) => (
            v.fetched,
            &mut v.in_flight,
            Effect::List(Listing::PersistentPodStates),
        ),
        Route::Distributions(v) => (
            v.fetched,
            &mut v.in_flight,
            Effect::List(Listing::Distributions),
        ),
        Route::Rollout(v) => (
            v.node_images.fetched,
            &mut v.node_images.in_flight,
            Effect::List(Listing::Images(ImageKind::NodeImages)),
        ),
        _ => return Vec::new(),
    };
    if *in_flight || !(force || stale(fetched, now)) {
        return Vec::new();
    }
    *in_flight = true;
    vec![effect]
}
