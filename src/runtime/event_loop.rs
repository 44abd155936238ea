//! The one `tokio::select!` loop: terminal events, messages from the watchers and the executor,
//! and a 1 s tick go through `update`; effects go to the executor; the screen is redrawn only
//! when something changed: at once after a key or a resize (a key never waits for frame
//! pacing), otherwise at most every 100 ms, so watch-event bursts stay paced.
//! Terminal events are polled first: a key waits for at most one batch of messages.

use std::{io, time::Duration};

use anyhow::{Context as _, Result};
use crossterm::event::{Event as TermEvent, KeyEventKind};
use futures::{Stream, StreamExt};
use ratatui::{Terminal, backend::Backend};
use tokio::{
    sync::mpsc::{UnboundedReceiver, UnboundedSender},
    time::{Instant, MissedTickBehavior},
};

use super::{console::Console, timings::Timings};
use crate::app::{
    Effect, Msg,
    shell::{ShellOutcome, ShellRequest},
};

/// Shortest time between two frames that only show what the watches changed: a table that
/// changes 200 times a second cannot be read faster than this, and drawing it at 60 fps was
/// most of the console's CPU under churn. Keys and resizes are drawn at once.
pub const BACKGROUND_FRAME: Duration = Duration::from_millis(100);
/// How often `Msg::Tick` moves the clock (ages, spinners).
pub const TICK: Duration = Duration::from_secs(1);
/// Messages applied in one go before the loop lets a frame through.
const DRAIN_MAX: usize = 512;

/// Where the loop's inputs come from and its effects go.
pub struct LoopIo<E> {
    /// Terminal events (crossterm's `EventStream` in the console).
    pub terminal_events: E,
    /// Messages from the watchers and the executor.
    pub msgs: UnboundedReceiver<Msg>,
    /// Effects for the executor.
    pub effects: UnboundedSender<Effect>,
    /// Where timings go (`KRUISE_TUI_TIMINGS`); None: nothing is measured.
    pub timings: Option<Timings>,
}

/// Maps a terminal event to a message: key presses and resizes; the rest is ignored.
pub fn terminal_msg(event: TermEvent) -> Option<Msg> {
    match event {
        TermEvent::Key(key) if key.kind != KeyEventKind::Release => Some(Msg::Key(key)),
        TermEvent::Resize(width, height) => Some(Msg::Resize { width, height }),
        _ => None,
    }
}

/// Whether a background message is drawn at once rather than with the next paced frame: a
/// kind that finished loading (the header stops saying "loading", and the pod list is complete
/// now, not up to 100 ms later).
fn draws_at_once(msg: &Msg) -> bool {
    matches!(msg, Msg::StoreReady(_))
}

/// Why [`run_until`] returned.
#[derive(Debug, PartialEq)]
pub enum Stop {
    /// The console quit, or the terminal's events ended.
    Quit,
    /// `S`: the caller hands the terminal to a shell, then runs the loop again.
    Shell(ShellRequest),
}

/// Runs until the console quits, the terminal event stream ends, or drawing fails. A shell
/// request is answered with a failure: only the console's own runtime can suspend a terminal.
pub async fn run<C, B, E>(terminal: &mut Terminal<B>, console: &mut C, io: LoopIo<E>) -> Result<()>
where
    C: Console,
    B: Backend,
    B::Error: std::error::Error + Send + Sync + 'static,
    E: Stream<Item = io::Result<TermEvent>> + Unpin,
{
    let mut io = io;
    loop {
        match run_until(terminal, console, &mut io).await? {
            Stop::Quit => return Ok(()),
            Stop::Shell(_) => {
                let failed = ShellOutcome::Failed("no terminal to hand to a shell".to_owned());
                if apply(console, Msg::Shell(failed), &io.effects).is_some() {
                    return Ok(());
                }
            }
        }
    }
}

/// Runs until the console quits or asks for a shell; draws the whole screen first (after a
/// shell, the terminal was cleared).
pub async fn run_until<C, B, E>(
    terminal: &mut Terminal<B>,
    console: &mut C,
    io: &mut LoopIo<E>,
) -> Result<Stop>
where
    C: Console,
    B: Backend,
    B::Error: std::error::Error + Send + Sync + 'static,
    E: Stream<Item = io::Result<TermEvent>> + Unpin,
{
    let LoopIo {
        terminal_events,
        msgs,
        effects,
        timings,
    } = io;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    if let Some(timings) = timings.as_mut() {
        timings.listen();
    }
    draw(terminal, console, timings)?;
    console.take_redraw();
    let mut last_draw = Instant::now();
    let mut dirty = false;
    let mut msgs_open = true;
    let mut stop: Option<Stop> = None;
    loop {
        // A key or resize this turn: its frame is drawn at once.
        let mut input = false;
        tokio::select! {
            biased;
            event = terminal_events.next() => match event {
                Some(Ok(event)) => {
                    if let Some(msg) = terminal_msg(event) {
                        if let (Some(timings), Msg::Key(key)) = (timings.as_mut(), &msg) {
                            timings.key_read(key, console.load_state());
                        }
                        input = true;
                        // A resized terminal must be repainted whatever the state says.
                        dirty |= matches!(msg, Msg::Resize { .. });
                        stop = stop.or(apply(console, msg, effects));
                    }
                }
                Some(Err(err)) => return Err(err).context("cannot read terminal events"),
                None => return Ok(Stop::Quit),
            },
            _ = tick.tick() => {
                stop = stop.or(apply(console, Msg::Tick(jiff::Timestamp::now()), effects));
                if let Some(timings) = timings.as_mut() {
                    timings.requests(false);
                }
            }
            () = signalled(timings) => {
                if let Some(timings) = timings.as_mut() {
                    timings.requests(true);
                }
            }
            msg = msgs.recv(), if msgs_open => match msg {
                Some(msg) => {
                    input |= draws_at_once(&msg);
                    stop = stop.or(apply(console, msg, effects));
                    // Coalesce what is already queued (a burst of watch events) into one frame.
                    for _ in 0..DRAIN_MAX {
                        match msgs.try_recv() {
                            Ok(msg) => {
                                input |= draws_at_once(&msg);
                                stop = stop.or(apply(console, msg, effects));
                            }
                            Err(_) => break,
                        }
                        if stop.is_some() || console.should_quit() {
                            break;
                        }
                    }
                }
                None => msgs_open = false,
            },
            () = tokio::time::sleep_until(last_draw + BACKGROUND_FRAME), if dirty => {}
        }
        if let Some(stop) = stop {
            return Ok(stop);
        }
        if console.should_quit() {
            return Ok(Stop::Quit);
        }
        dirty |= console.take_redraw();
        if dirty && (input || last_draw.elapsed() >= BACKGROUND_FRAME) {
            draw(terminal, console, timings)?;
            last_draw = Instant::now();
            dirty = false;
        } else if let Some(timings) = timings.as_mut() {
            timings.turn_ended();
        }
    }
}

/// Draws the whole screen, then tells the timings what it showed.
fn draw<C, B>(terminal: &mut Terminal<B>, console: &C, timings: &mut Option<Timings>) -> Result<()>
where
    C: Console,
    B: Backend,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    terminal
        .draw(|frame| console.render(frame))
        .context("cannot draw")?;
    if let Some(timings) = timings.as_mut() {
        timings.frame_drawn(console.load_state());
    }
    Ok(())
}

/// Resolves on SIGUSR1 when timings are recorded; never otherwise.
async fn signalled(timings: &mut Option<Timings>) {
    match timings.as_mut() {
        Some(timings) => timings.signalled().await,
        None => std::future::pending().await,
    }
}

/// Applies one message and hands its effects to the executor (never awaits IO). Some when
/// `update` asked to quit or for a shell (the loop's business, not the executor's).
pub fn apply<C: Console>(
    console: &mut C,
    msg: Msg,
    effects: &UnboundedSender<Effect>,
) -> Option<Stop> {
    let mut stop = None;
    for effect in console.update(msg) {
        match effect {
            Effect::Quit => stop = Some(Stop::Quit),
            Effect::Shell(req) => stop = stop.or(Some(Stop::Shell(req))),
            effect => {
                if effects.send(effect).is_err() {
                    tracing::error!("the effect executor has stopped; effect dropped");
                }
            }
        }
    }
    stop
}

#[cfg(test)]
mod tests {
    use std::{cell::RefCell, rc::Rc};

    use ratatui::{Frame, backend::TestBackend};
    use tokio::sync::mpsc;

    use super::*;
    use crate::app::msg::Kind;

    /// Records when each frame was drawn; stale after every message; quits on `Msg::Quit`-less
    /// end (the terminal's events end).
    struct Recorder {
        drawn: Rc<RefCell<Vec<Instant>>>,
        dirty: bool,
    }

    impl Console for Recorder {
        fn update(&mut self, _msg: Msg) -> Vec<Effect> {
            self.dirty = true;
            Vec::new()
        }
        fn should_quit(&self) -> bool {
            false
        }
        fn take_redraw(&mut self) -> bool {
            std::mem::take(&mut self.dirty)
        }
        fn render(&self, _frame: &mut Frame) {
            self.drawn.borrow_mut().push(Instant::now());
        }
    }

    /// Frames drawn (after the first) for one message sent 1 ms after start, and when.
    async fn frames_for(msg: Msg) -> Vec<Duration> {
        let drawn = Rc::new(RefCell::new(Vec::new()));
        let mut console = Recorder {
            drawn: drawn.clone(),
            dirty: false,
        };
        let mut terminal = Terminal::new(TestBackend::new(20, 5)).unwrap();
        let (tx, msgs) = mpsc::unbounded_channel();
        let (effects, _effects_rx) = mpsc::unbounded_channel();
        let start = Instant::now();
        // The terminal's events end 300 ms in, which ends the loop.
        let terminal_events = futures::stream::once(async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Err(io::Error::other("end"))
        });
        let mut io = LoopIo {
            terminal_events: Box::pin(terminal_events),
            msgs,
            effects,
            timings: None,
        };
        let sender = async {
            tokio::time::sleep(Duration::from_millis(1)).await;
            let _ = tx.send(msg);
        };
        let (ran, ()) = tokio::join!(run_until(&mut terminal, &mut console, &mut io), sender);
        assert!(ran.is_err(), "the loop ends with the terminal's events");
        drawn.borrow()[1..].iter().map(|t| *t - start).collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_kind_that_finished_loading_is_drawn_at_once_other_changes_with_the_paced_frame() {
        let ready = frames_for(Msg::StoreReady(Kind::Pod)).await;
        assert_eq!(ready, vec![Duration::from_millis(1)]);
        let changed = frames_for(Msg::StoreChanged(Kind::Pod)).await;
        assert_eq!(changed, vec![BACKGROUND_FRAME]);
    }
}
