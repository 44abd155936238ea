//! The simulated shell's grammar: words with single and double quotes, backslash escapes,
//! `$NAME`, `${NAME}`, `$?`, `$$` and `~`; commands joined by `;`, `&&` and `||`; redirections
//! `>`, `>>`, `2>`, `2>&1`, `>&2`, `&>` and `<`; `#` comments. Pipelines, background jobs,
//! subshells and command substitution are refused with a message saying so.

/// A piece of a word: literal text, or a parameter expanded when the command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Part {
    Lit(String),
    Var(String),
}

pub(super) type Word = Vec<Part>;

/// How a command follows the one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Join {
    /// The first command, or after `;`.
    Always,
    /// After `&&`: only if the previous succeeded.
    And,
    /// After `||`: only if the previous failed.
    Or,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Redirect {
    /// `>`/`>>` (fd 1) or `2>`/`2>>` (fd 2), and `&>` (both) to a file.
    To { fd: u8, both: bool, target: Word },
    /// `2>&1`.
    ErrToOut,
    /// `>&2` / `1>&2`.
    OutToErr,
    /// `< file`.
    From(Word),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Command {
    pub join: Join,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

const UNSUPPORTED: &str = "is not supported by this simulated shell";

/// What the tokenizer produced.
#[derive(Debug, PartialEq)]
enum Token {
    Word(Word),
    Op(&'static str),
}

fn push_lit(word: &mut Word, c: char) {
    match word.last_mut() {
        Some(Part::Lit(s)) => s.push(c),
        _ => word.push(Part::Lit(c.to_string())),
    }
}

/// Reads a parameter after `$` (the `$` already consumed).
fn parameter(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Result<Option<Part>, String> {
    match chars.peek().copied() {
        Some('{') => {
            chars.next();
            let mut name = String::new();
            for c in chars.by_ref() {
                if c == '}' {
                    return Ok(Some(Part::Var(name)));
                }
                name.push(c);
            }
            Err("syntax error: missing '}'".to_owned())
        }
        Some('(') => Err(format!("command substitution $(...) {UNSUPPORTED}")),
        Some(c @ ('?' | '$' | '#' | '0'..='9')) => {
            chars.next();
            Ok(Some(Part::Var(c.to_string())))
        }
        Some(c) if c == '_' || c.is_ascii_alphabetic() => {
            let mut name = String::new();
            while let Some(c) = chars
                .peek()
                .copied()
                .filter(|c| *c == '_' || c.is_ascii_alphanumeric())
            {
                name.push(c);
                chars.next();
            }
            Ok(Some(Part::Var(name)))
        }
        _ => Ok(None),
    }
}

fn tokenize(line: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    let mut word: Word = Vec::new();
    let mut in_word = false;
    let finish = |out: &mut Vec<Token>, word: &mut Word, in_word: &mut bool| {
        if *in_word {
            out.push(Token::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => finish(&mut out, &mut word, &mut in_word),
            '#' if !in_word => break,
            '\'' => {
                in_word = true;
                let mut closed = false;
                for c in chars.by_ref() {
                    if c == '\'' {
                        closed = true;
                        break;
                    }
                    push_lit(&mut word, c);
                }
                if !closed {
                    return Err("syntax error: unterminated quoted string".to_owned());
                }
                if word.is_empty() {
                    word.push(Part::Lit(String::new()));
                }
            }
            '"' => {
                in_word = true;
                let mut closed = false;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => {
                            closed = true;
                            break;
                        }
                        '\\' => match chars.next() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => push_lit(&mut word, e),
                            Some(e) => {
                                push_lit(&mut word, '\\');
                                push_lit(&mut word, e);
                            }
                            None => push_lit(&mut word, '\\'),
                        },
                        '$' => match parameter(&mut chars)? {
                            Some(p) => word.push(p),
                            None => push_lit(&mut word, '$'),
                        },
                        '`' => return Err(format!("command substitution `...` {UNSUPPORTED}")),
                        c => push_lit(&mut word, c),
                    }
                }
                if !closed {
                    return Err("syntax error: unterminated quoted string".to_owned());
                }
                if word.is_empty() {
                    word.push(Part::Lit(String::new()));
                }
            }
            '\\' => {
                in_word = true;
                if let Some(e) = chars.next() {
                    push_lit(&mut word, e);
                }
            }
            '$' => {
                in_word = true;
                match parameter(&mut chars)? {
                    Some(p) => word.push(p),
                    None => push_lit(&mut word, '$'),
                }
            }
            '~' if !in_word && matches!(chars.peek(), None | Some('/' | ' ' | ';')) => {
                in_word = true;
                word.push(Part::Var("HOME".to_owned()));
            }
            '`' => return Err(format!("command substitution `...` {UNSUPPORTED}")),
            '(' | ')' => return Err(format!("a subshell {UNSUPPORTED}")),
            ';' => {
                finish(&mut out, &mut word, &mut in_word);
                out.push(Token::Op(";"));
            }
            '&' => {
                finish(&mut out, &mut word, &mut in_word);
                match chars.peek() {
                    Some('&') => {
                        chars.next();
                        out.push(Token::Op("&&"));
                    }
                    Some('>') => {
                        chars.next();
                        out.push(Token::Op("&>"));
                    }
                    _ => return Err(format!("a background job (&) {UNSUPPORTED}")),
                }
            }
            '|' => {
                finish(&mut out, &mut word, &mut in_word);
                if chars.peek() == Some(&'|') {
                    chars.next();
                    out.push(Token::Op("||"));
                } else {
                    return Err(format!("a pipeline (|) {UNSUPPORTED}"));
                }
            }
            '>' | '<' => {
                // A lone `1` or `2` right before `>` is the descriptor.
                let fd = match (&word[..], in_word) {
                    ([Part::Lit(s)], true) if s == "1" || s == "2" => {
                        let fd = if s == "2" { 2 } else { 1 };
                        word.clear();
                        in_word = false;
                        Some(fd)
                    }
                    _ => None,
                };
                finish(&mut out, &mut word, &mut in_word);
                let op = match (c, fd, chars.peek().copied()) {
                    ('<', _, _) => "<",
                    ('>', Some(2), Some('&')) => {
                        chars.next();
                        match chars.next() {
                            Some('1') => "2>&1",
                            _ => return Err("syntax error: bad redirection".to_owned()),
                        }
                    }
                    ('>', _, Some('&')) => {
                        chars.next();
                        match chars.next() {
                            Some('2') => ">&2",
                            Some('1') => continue,
                            _ => return Err("syntax error: bad redirection".to_owned()),
                        }
                    }
                    ('>', Some(2), Some('>')) => {
                        chars.next();
                        "2>"
                    }
                    ('>', Some(2), _) => "2>",
                    ('>', _, Some('>')) => {
                        chars.next();
                        ">"
                    }
                    _ => ">",
                };
                out.push(Token::Op(op));
            }
            c => {
                in_word = true;
                push_lit(&mut word, c);
            }
        }
    }
    finish(&mut out, &mut word, &mut in_word);
    Ok(out)
}

/// Parses one input line into the commands it joins.
pub(super) fn parse(line: &str) -> Result<Vec<Command>, String> {
    let mut commands = Vec::new();
    let mut current = Command {
        join: Join::Always,
        words: Vec::new(),
        redirects: Vec::new(),
    };
    let mut tokens = tokenize(line)?.into_iter();
    let unexpected = |op: &str| format!("syntax error: unexpected \"{op}\"");
    while let Some(token) = tokens.next() {
        match token {
            Token::Word(w) => current.words.push(w),
            Token::Op(op @ (";" | "&&" | "||")) => {
                if current.words.is_empty() {
                    return Err(unexpected(op));
                }
                let join = match op {
                    "&&" => Join::And,
                    "||" => Join::Or,
                    _ => Join::Always,
                };
                commands.push(std::mem::replace(
                    &mut current,
                    Command {
                        join,
                        words: Vec::new(),
                        redirects: Vec::new(),
                    },
                ));
            }
            Token::Op("2>&1") => current.redirects.push(Redirect::ErrToOut),
            Token::Op(">&2") => current.redirects.push(Redirect::OutToErr),
            Token::Op(op) => {
                let Some(Token::Word(target)) = tokens.next() else {
                    return Err("syntax error: unexpected newline".to_owned());
                };
                current.redirects.push(match op {
                    "<" => Redirect::From(target),
                    "2>" => Redirect::To {
                        fd: 2,
                        both: false,
                        target,
                    },
                    "&>" => Redirect::To {
                        fd: 1,
                        both: true,
                        target,
                    },
                    _ => Redirect::To {
                        fd: 1,
                        both: false,
                        target,
                    },
                });
            }
        }
    }
    if !current.words.is_empty() || !current.redirects.is_empty() {
        commands.push(current);
    } else if current.join != Join::Always {
        return Err("syntax error: unexpected end of line".to_owned());
    }
    Ok(commands)
}

/// Expands a word with `lookup` for parameters.
pub(super) fn expand(word: &Word, lookup: &dyn Fn(&str) -> String) -> String {
    word.iter()
        .map(|p| match p {
            Part::Lit(s) => s.clone(),
            Part::Var(v) => lookup(v),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<String>> {
        let env = |v: &str| match v {
            "HOME" => "/root".to_owned(),
            "X" => "ex".to_owned(),
            "?" => "3".to_owned(),
            _ => String::new(),
        };
        parse(line)
            .unwrap()
            .iter()
            .map(|c| c.words.iter().map(|w| expand(w, &env)).collect())
            .collect()
    }

    #[test]
    fn quotes_escapes_and_parameters() {
        assert_eq!(words("echo hi   there"), vec![vec!["echo", "hi", "there"]]);
        assert_eq!(
            words(r#"echo 'a $X' "b $X" c$X ${X}y \$X $? ~ ~/d "" '' # comment"#),
            vec![vec![
                "echo", "a $X", "b ex", "cex", "exy", "$X", "3", "/root", "/root/d", "", ""
            ]]
        );
        assert_eq!(words("echo a$ \"q\\\"\""), vec![vec!["echo", "a$", "q\""]]);
    }

    #[test]
    fn lists_and_redirections() {
        let cmds = parse("command -v bash >/dev/null && exec bash || exec sh").unwrap();
        assert_eq!(
            cmds.iter().map(|c| c.join).collect::<Vec<_>>(),
            vec![Join::Always, Join::And, Join::Or]
        );
        assert_eq!(
            cmds[0].redirects,
            vec![Redirect::To {
                fd: 1,
                both: false,
                target: vec![Part::Lit("/dev/null".into())]
            }]
        );
        let c = &parse("ls nope 2>/dev/null; echo x >&2; ls 2>&1").unwrap();
        assert_eq!(c.len(), 3);
        assert!(matches!(&c[0].redirects[0], Redirect::To { fd: 2, .. }));
        assert_eq!(c[1].redirects, vec![Redirect::OutToErr]);
        assert_eq!(c[2].redirects, vec![Redirect::ErrToOut]);
    }

    #[test]
    fn what_it_does_not_simulate_it_says() {
        assert!(parse("ps | grep nginx").unwrap_err().contains("pipeline"));
        assert!(parse("sleep 1 &").unwrap_err().contains("background"));
        assert!(
            parse("echo $(hostname)")
                .unwrap_err()
                .contains("substitution")
        );
        assert!(parse("echo 'open").unwrap_err().contains("unterminated"));
        assert!(parse("&& ls").unwrap_err().contains("unexpected"));
        assert!(parse("ls &&").unwrap_err().contains("end of line"));
        assert_eq!(parse("").unwrap(), vec![]);
        assert_eq!(parse("   # only a comment").unwrap(), vec![]);
    }
}
