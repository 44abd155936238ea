//! Config: every shipped theme and keymap parses cleanly (all roles set, every action bound, no
//! duplicate bindings); broken and invalid user files each produce a specific warning and the
//! defaults; single-key user overrides apply on top of the shipped files.

use std::path::{Path, PathBuf};

use kruise_tui::config::{
    self, Action, Key, Keymap, LoadedConfig, Paths, Role, Theme, keymap, theme,
};

fn shipped(dir: &str) -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("shipped dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| {
            let name = p.file_stem().expect("stem").to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).expect("readable"))
        })
        .collect();
    files.sort();
    files
}

fn fixture_paths() -> Paths {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/console/config");
    Paths::under(root, std::env::temp_dir().join("kruise-tui-test-state"))
}

fn empty_paths() -> (tempfile::TempDir, Paths) {
    let dir = tempfile::tempdir().expect("tempdir");
    let paths = Paths::under(dir.path().join("config"), dir.path().join("state"));
    (dir, paths)
}

#[test]
fn every_shipped_theme_sets_every_role_without_warnings() {
    let files = shipped("themes");
    assert!(
        files.len() >= 3,
        "default-dark, default-light, high-contrast"
    );
    for (name, text) in files {
        assert!(
            theme::BUILTIN.iter().any(|(n, t)| *n == name && *t == text),
            "themes/{name}.toml is built into the binary"
        );
        let table: toml::Table = toml::from_str(&text).expect("parses");
        for role in Role::ALL {
            assert!(
                table.contains_key(role.name()),
                "{name} sets {}",
                role.name()
            );
        }
        let mut t = Theme::builtin("default-dark").expect("default");
        assert_eq!(t.apply_toml(&text, &name), Vec::<String>::new(), "{name}");
    }
    // The themes differ from each other.
    let dark = Theme::builtin("default-dark").expect("dark");
    let light = Theme::builtin("default-light").expect("light");
    let contrast = Theme::builtin("high-contrast").expect("contrast");
    assert_ne!(
        dark.style(Role::RowSelected),
        light.style(Role::RowSelected)
    );
    assert_ne!(
        dark.style(Role::RowSelected),
        contrast.style(Role::RowSelected)
    );
}

#[test]
fn every_shipped_keymap_binds_every_action_once() {
    let files = shipped("keymaps");
    assert!(!files.is_empty());
    for (name, text) in files {
        assert!(
            keymap::BUILTIN
                .iter()
                .any(|(n, t)| *n == name && *t == text),
            "keymaps/{name}.toml is built into the binary"
        );
        let km = Keymap::builtin(&name).expect("builtin");
        let mut fresh = km.clone();
        assert_eq!(
            fresh.apply_toml(&text, &name),
            Vec::<String>::new(),
            "{name}"
        );
        let mut seen: Vec<Key> = Vec::new();
        for action in Action::ALL {
            let keys = km.keys(action);
            assert!(!keys.is_empty(), "{name}: `{}` is bound", action.name());
            for k in keys {
                assert!(!seen.contains(k), "{name}: {k} bound twice");
                seen.push(*k);
            }
        }
    }
}

#[test]
fn default_keymap_matches_the_product_contract() {
    let km = Keymap::default_keymap();
    for (key, action) in [
        (":", Action::Command),
        ("/", Action::Filter),
        ("enter", Action::Open),
        ("esc", Action::Back),
        ("?", Action::Help),
        ("q", Action::Quit),
        ("ctrl-c", Action::Quit),
        ("y", Action::Yaml),
        ("e", Action::Events),
        ("j", Action::Down),
        ("k", Action::Up),
        ("g", Action::Top),
        ("G", Action::Bottom),
        ("pgdown", Action::PageDown),
        ("pgup", Action::PageUp),
        ("]", Action::NextBatch),
        ("[", Action::PrevBatch),
        ("p", Action::Partition),
        ("P", Action::Pause),
        ("u", Action::Undo),
        ("i", Action::Image),
        ("s", Action::Scale),
        ("space", Action::Mark),
        ("r", Action::Restart),
        ("x", Action::Protect),
        ("ctrl-d", Action::Delete),
        ("w", Action::WhatIf),
        ("l", Action::Logs),
        ("S", Action::Shell),
        ("c", Action::Container),
    ] {
        assert_eq!(
            km.action(&Key::parse(key).expect("key")),
            Some(action),
            "{key}"
        );
    }
}

#[test]
fn no_user_files_means_shipped_defaults_and_no_warnings() {
    let (_dir, paths) = empty_paths();
    let loaded = config::load(None, None, &paths);
    assert_eq!(loaded.warnings, Vec::<String>::new());
    assert_eq!(loaded.theme, Theme::default_theme());
    assert_eq!(loaded.keymap, Keymap::default_keymap());
    let light = config::load(Some("high-contrast"), Some("default"), &paths);
    assert_eq!(light.warnings, Vec::<String>::new());
    assert_eq!(
        light.theme,
        Theme::builtin("high-contrast").expect("shipped")
    );
}

#[test]
fn unknown_names_warn_and_fall_back() {
    let (_dir, paths) = empty_paths();
    let loaded = config::load(Some("solarized"), Some("emacs"), &paths);
    assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
    assert!(loaded.warnings[0].starts_with("unknown theme `solarized`, using default-dark"));
    assert!(loaded.warnings[1].starts_with("unknown keymap `emacs`, using default"));
    assert_eq!(
        loaded.theme.style(Role::Text),
        Theme::default_theme().style(Role::Text)
    );
    assert_eq!(
        loaded.keymap.keys(Action::Quit),
        Keymap::default_keymap().keys(Action::Quit)
    );
}

#[test]
fn broken_files_warn_and_use_defaults() {
    let loaded = config::load(Some("broken"), Some("broken"), &fixture_paths());
    assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
    assert!(
        loaded.warnings[0].contains("themes/broken.toml: not valid TOML"),
        "{:?}",
        loaded.warnings
    );
    assert!(
        loaded.warnings[1].contains("keymaps/broken.toml: not valid TOML"),
        "{:?}",
        loaded.warnings
    );
    let defaults = LoadedConfig::default();
    assert_eq!(
        loaded.keymap.keys(Action::Quit),
        defaults.keymap.keys(Action::Quit)
    );
    assert_eq!(
        loaded.theme.style(Role::StatusError),
        defaults.theme.style(Role::StatusError)
    );
}

#[test]
fn bad_theme_entries_each_warn_and_keep_their_defaults() {
    let loaded = config::load(Some("bad-entries"), None, &fixture_paths());
    let w = &loaded.warnings;
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].contains("role `prompt`: `purplish` is not a colour"),
        "{w:?}"
    );
    assert!(w[1].contains("unknown role `table.headr`"), "{w:?}");
    let light = Theme::builtin("default-light").expect("light");
    // `extends = "default-light"`: untouched roles come from it, the good entry applies.
    assert_eq!(loaded.theme.style(Role::Prompt), light.style(Role::Prompt));
    assert_eq!(
        loaded.theme.style(Role::TableHeader),
        light.style(Role::TableHeader)
    );
    assert_eq!(
        loaded.theme.style(Role::StatusError).fg,
        Some(ratatui::style::Color::Rgb(255, 0, 0))
    );
}

#[test]
fn bad_keymap_entries_each_warn_and_keep_their_defaults() {
    let loaded = config::load(None, Some("bad-entries"), &fixture_paths());
    let w = &loaded.warnings;
    assert_eq!(w.len(), 3, "{w:?}");
    assert!(
        w[0].contains("`events`: duplicate binding: `j` is already bound to `down`"),
        "{w:?}"
    );
    assert!(w[1].contains("unknown action `teleport`"), "{w:?}");
    assert!(w[2].contains("`yaml`: `hyper-y` is not a key"), "{w:?}");
    let km = &loaded.keymap;
    let key = |k: &str| Key::parse(k).expect("key");
    assert_eq!(
        km.action(&key("e")),
        Some(Action::Events),
        "events keeps its default"
    );
    assert_eq!(km.action(&key("j")), Some(Action::Down));
    assert_eq!(km.action(&key("y")), Some(Action::Yaml));
    assert_eq!(
        km.action(&key("h")),
        Some(Action::Help),
        "the valid override applies"
    );
    assert_eq!(km.action(&key("?")), None, "help's list was replaced");
}

#[test]
fn user_files_override_single_keys_of_the_defaults() {
    let loaded = config::load(None, None, &fixture_paths());
    assert_eq!(loaded.warnings, Vec::<String>::new());
    let key = |k: &str| Key::parse(k).expect("key");
    assert_eq!(loaded.keymap.action(&key("Y")), Some(Action::Yaml));
    assert_eq!(loaded.keymap.action(&key("y")), None);
    assert_eq!(
        loaded.keymap.action(&key("q")),
        Some(Action::Quit),
        "others kept"
    );
    let default = Theme::default_theme();
    assert_eq!(
        loaded.theme.style(Role::RowSelected).bg,
        Some(ratatui::style::Color::Rgb(255, 175, 0))
    );
    assert_eq!(loaded.theme.style(Role::Title), default.style(Role::Title));

    let vimish = config::load(None, Some("vimish"), &fixture_paths());
    assert_eq!(vimish.warnings, Vec::<String>::new());
    assert_eq!(vimish.keymap.action(&key("l")), Some(Action::Open));
    assert_eq!(vimish.keymap.action(&key("h")), Some(Action::Back));
    assert_eq!(vimish.keymap.action(&key("L")), Some(Action::Logs));
    assert_eq!(vimish.keymap.name, "vimish");
}

#[test]
fn names_that_are_paths_are_refused() {
    let (_dir, paths) = empty_paths();
    let loaded = config::load(Some("../../etc/passwd"), None, &paths);
    assert!(
        loaded.warnings[0].contains("is not a plain name"),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn config_toml_sets_the_rollout_batches_and_a_bad_entry_keeps_the_default() {
    use kruise_tui::config::{Batch, RolloutConfig};
    let (_dir, paths) = empty_paths();
    std::fs::create_dir_all(&paths.config_dir).expect("config dir");
    let file = paths.config_dir.join("config.toml");
    std::fs::write(&file, "[rollout]\nbatches = [2, \"50%\"]\n").expect("write");
    let loaded = config::load(None, None, &paths);
    assert_eq!(loaded.warnings, Vec::<String>::new());
    assert_eq!(loaded.rollout.batches, [Batch::Pods(2), Batch::Percent(50)]);
    for (text, why) in [
        (
            "[rollout]\nbatches = [1, \"150%\"]\n",
            "entry 2: 150% is not between 1% and 100%",
        ),
        ("[rollout\n", "not valid TOML"),
        (
            "[rollout]\nbatches = [\"-1\"]\n",
            "entry 1: \"-1\" is neither a pod count",
        ),
    ] {
        std::fs::write(&file, text).expect("write");
        let loaded = config::load(None, None, &paths);
        assert_eq!(loaded.rollout, RolloutConfig::default(), "{text}");
        assert_eq!(loaded.warnings.len(), 1, "{text}: {:?}", loaded.warnings);
        assert!(
            loaded.warnings[0].contains(why),
            "{text}: {:?}",
            loaded.warnings
        );
        assert!(loaded.warnings[0].contains("config.toml"), "names the file");
    }
}
