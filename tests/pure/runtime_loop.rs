//! The console event loop with a scripted console on ratatui's TestBackend: keys, resizes,
//! messages and ticks reach `update`, effects reach the executor channel, `Quit` ends the loop,
//! and frames are drawn only when the console says the screen is stale.
//!
//! The tests run on tokio's paused clock: the drivers' sleeps, the loop's tick interval and the
//! timeouts advance virtual time as soon as every task waits, so the tests take no wall-clock
//! time and their timing cannot flake on a busy machine.

use std::{cell::Cell, io, time::Duration};

use crossterm::event::{
    Event as TermEvent, KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers,
};
use futures::channel::mpsc as fmpsc;
use kruise_tui::{
    app::{
        Effect,
        msg::{Kind, Msg, ObjectRef},
    },
    runtime::{
        Console,
        event_loop::{LoopIo, run, terminal_msg},
    },
};
use ratatui::{Frame, Terminal, backend::TestBackend, widgets::Paragraph};
use tokio::sync::mpsc;

/// Records what it is sent; quits on `q`; asks for YAML on `y`; stale after every message
/// except ticks.
#[derive(Default)]
struct Scripted {
    seen: Vec<Msg>,
    stale: bool,
    quit: bool,
    renders: Cell<usize>,
}

impl Console for Scripted {
    fn update(&mut self, msg: Msg) -> Vec<Effect> {
        let mut effects = Vec::new();
        match &msg {
            Msg::Key(key) if key.code == KeyCode::Char('q') => self.quit = true,
            Msg::Key(key) if key.code == KeyCode::Char('y') => {
                effects.push(Effect::FetchYaml(ObjectRef {
                    kind: Kind::CloneSet,
                    namespace: Some("demo".into()),
                    name: "web".into(),
                }));
            }
            Msg::Key(key) if key.code == KeyCode::Char('x') => effects.push(Effect::Quit),
            _ => {}
        }
        self.stale |= !matches!(msg, Msg::Tick(_));
        self.seen.push(msg);
        effects
    }

    fn should_quit(&self) -> bool {
        self.quit
    }

    fn take_redraw(&mut self) -> bool {
        std::mem::take(&mut self.stale)
    }

    fn render(&self, frame: &mut Frame) {
        self.renders.set(self.renders.get() + 1);
        let text = format!("messages: {}", self.seen.len());
        frame.render_widget(Paragraph::new(text), frame.area());
    }
}

fn key(c: char, kind: KeyEventKind) -> io::Result<TermEvent> {
    Ok(TermEvent::Key(KeyEvent {
        code: KeyCode::Char(c),
        modifiers: KeyModifiers::NONE,
        kind,
        state: KeyEventState::NONE,
    }))
}

struct Harness {
    keys: fmpsc::UnboundedSender<io::Result<TermEvent>>,
    msgs: mpsc::UnboundedSender<Msg>,
    effects: mpsc::UnboundedReceiver<Effect>,
    io: Option<LoopIo<fmpsc::UnboundedReceiver<io::Result<TermEvent>>>>,
}

fn harness() -> Harness {
    let (keys, key_rx) = fmpsc::unbounded();
    let (msgs, msg_rx) = mpsc::unbounded_channel();
    let (effect_tx, effects) = mpsc::unbounded_channel();
    Harness {
        keys,
        msgs,
        effects,
        io: Some(LoopIo {
            terminal_events: key_rx,
            msgs: msg_rx,
            effects: effect_tx,
            timings: None,
        }),
    }
}

#[tokio::test(start_paused = true)]
async fn keys_and_messages_reach_update_and_q_quits() {
    let mut h = harness();
    let mut console = Scripted::default();
    let mut terminal = Terminal::new(TestBackend::new(30, 3)).unwrap();
    h.msgs.send(Msg::StoreChanged(Kind::Pod)).unwrap();
    h.keys
        .unbounded_send(key('j', KeyEventKind::Press))
        .unwrap();
    h.keys
        .unbounded_send(key('j', KeyEventKind::Release))
        .unwrap();
    h.keys
        .unbounded_send(key('y', KeyEventKind::Press))
        .unwrap();
    let io = h.io.take().unwrap();
    let keys = h.keys.clone();
    // Terminal events and messages have no order between them: quit once the rest is in.
    let driver = async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        keys.unbounded_send(key('q', KeyEventKind::Press)).unwrap();
    };
    let (result, ()) = tokio::join!(
        tokio::time::timeout(
            Duration::from_secs(10),
            run(&mut terminal, &mut console, io)
        ),
        driver
    );
    assert!(matches!(result, Ok(Ok(()))), "{result:?}");

    let keys: Vec<KeyCode> = console
        .seen
        .iter()
        .filter_map(|m| match m {
            Msg::Key(k) => Some(k.code),
            _ => None,
        })
        .collect();
    assert_eq!(
        keys,
        [KeyCode::Char('j'), KeyCode::Char('y'), KeyCode::Char('q')],
        "key releases are not keys"
    );
    assert!(
        console
            .seen
            .iter()
            .any(|m| matches!(m, Msg::StoreChanged(Kind::Pod)))
    );
    assert!(matches!(h.effects.try_recv(), Ok(Effect::FetchYaml(r)) if r.name == "web"));
    assert!(h.effects.try_recv().is_err());
    assert!(
        console.renders.get() >= 1,
        "the first frame is drawn at once"
    );
}

#[tokio::test(start_paused = true)]
async fn a_quit_effect_ends_the_loop_without_reaching_the_executor() {
    let mut h = harness();
    let mut console = Scripted::default();
    let mut terminal = Terminal::new(TestBackend::new(30, 3)).unwrap();
    h.keys
        .unbounded_send(key('x', KeyEventKind::Press))
        .unwrap();
    let io = h.io.take().unwrap();
    let result = tokio::time::timeout(
        Duration::from_secs(10),
        run(&mut terminal, &mut console, io),
    )
    .await;
    assert!(matches!(result, Ok(Ok(()))));
    assert!(h.effects.try_recv().is_err());
}

#[tokio::test(start_paused = true)]
async fn ticks_move_the_clock_without_redrawing_an_unchanged_screen() {
    let mut h = harness();
    let mut console = Scripted::default();
    let mut terminal = Terminal::new(TestBackend::new(30, 3)).unwrap();
    let io = h.io.take().unwrap();
    let keys = h.keys.clone();
    let driver = async move {
        // The first tick fires at once, then one a second: three ticks by 2.3 s.
        tokio::time::sleep(Duration::from_millis(2300)).await;
        keys.unbounded_send(key('q', KeyEventKind::Press)).unwrap();
    };
    let (result, ()) = tokio::join!(run(&mut terminal, &mut console, io), driver);
    assert!(result.is_ok());
    let ticks = console
        .seen
        .iter()
        .filter(|m| matches!(m, Msg::Tick(_)))
        .count();
    assert!(ticks >= 3, "{ticks} ticks");
    assert_eq!(
        console.renders.get(),
        1,
        "ticks alone left the screen as it was"
    );
    drop(h.msgs);
}

#[tokio::test(start_paused = true)]
async fn a_resize_reaches_update_and_the_screen_is_redrawn() {
    let mut h = harness();
    let mut console = Scripted::default();
    let mut terminal = Terminal::new(TestBackend::new(30, 3)).unwrap();
    h.keys.unbounded_send(Ok(TermEvent::Resize(40, 5))).unwrap();
    let io = h.io.take().unwrap();
    let keys = h.keys.clone();
    let driver = async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        // Ending the terminal event stream ends the loop.
        keys.close_channel();
    };
    let (result, ()) = tokio::join!(
        tokio::time::timeout(
            Duration::from_secs(10),
            run(&mut terminal, &mut console, io)
        ),
        driver
    );
    assert!(matches!(result, Ok(Ok(()))));
    assert!(console.seen.iter().any(|m| matches!(
        m,
        Msg::Resize {
            width: 40,
            height: 5
        }
    )));
    assert!(console.renders.get() >= 2, "redrawn after the resize");
}

#[test]
fn only_presses_repeats_and_resizes_become_messages() {
    assert!(matches!(
        terminal_msg(key('a', KeyEventKind::Press).unwrap()),
        Some(Msg::Key(_))
    ));
    assert!(matches!(
        terminal_msg(key('a', KeyEventKind::Repeat).unwrap()),
        Some(Msg::Key(_))
    ));
    assert!(terminal_msg(key('a', KeyEventKind::Release).unwrap()).is_none());
    assert!(terminal_msg(TermEvent::FocusGained).is_none());
    assert!(matches!(
        terminal_msg(TermEvent::Resize(1, 2)),
        Some(Msg::Resize {
            width: 1,
            height: 2
        })
    ));
}
