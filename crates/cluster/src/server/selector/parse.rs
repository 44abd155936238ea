//! The label selector parser: a port of apimachinery's selector lexer and recursive-descent
//! parser (`labels.Parse`), with `NewRequirement`'s checks, so a bad selector fails with the
//! real server's words.

use super::LabelReq;

/// Parse a selector string into its requirements, or the parser's message.
pub(super) fn parse(s: &str) -> Result<Vec<LabelReq>, String> {
    // A lexer error token reaches the parser as an unexpected literal, as upstream.
    let mut p = Parser {
        items: lex(s),
        pos: 0,
    };
    p.parse()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Error,
    End,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(s: &str) -> Option<Token> {
    Some(match s {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// apimachinery's selector lexer: identifiers/keywords and operators.
fn lex(s: &str) -> Vec<(Token, String)> {
    let b = s.as_bytes();
    let mut pos = 0;
    let mut out = Vec::new();
    loop {
        while pos < b.len() && is_whitespace(b[pos]) {
            pos += 1;
        }
        if pos >= b.len() {
            out.push((Token::End, String::new()));
            return out;
        }
        if is_special(b[pos]) {
            // The longest run of special characters that is still an operator.
            let start = pos;
            let mut last: Option<(Token, usize)> = None;
            while pos < b.len() && is_special(b[pos]) {
                let cand = &s[start..=pos];
                match keyword(cand) {
                    Some(t) => last = Some((t, pos + 1)),
                    None if last.is_some() => break,
                    None => {}
                }
                pos += 1;
            }
            match last {
                Some((t, end)) => {
                    pos = end;
                    out.push((t, s[start..end].to_string()));
                }
                None => out.push((
                    Token::Error,
                    format!("error expected: keyword found '{}'", &s[start..pos]),
                )),
            }
        } else {
            let start = pos;
            while pos < b.len() && !is_special(b[pos]) && !is_whitespace(b[pos]) {
                pos += 1;
            }
            let word = String::from_utf8_lossy(&b[start..pos]).into_owned();
            out.push((keyword(&word).unwrap_or(Token::Identifier), word));
        }
    }
}

/// Where the parser is: `in`/`notin` are identifiers when a value is expected.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<(Token, String)>,
    pos: usize,
}

const BINARY_OPERATORS: &str = "in, notin, =, ==, !=, gt, lt";

impl Parser {
    fn at(&self, i: usize, ctx: Ctx) -> (Token, String) {
        let (t, lit) = self
            .items
            .get(i)
            .cloned()
            .unwrap_or((Token::End, String::new()));
        let t = match t {
            Token::In | Token::NotIn if ctx == Ctx::Values => Token::Identifier,
            t => t,
        };
        (t, lit)
    }

    fn lookahead(&self, ctx: Ctx) -> (Token, String) {
        self.at(self.pos, ctx)
    }

    fn consume(&mut self, ctx: Ctx) -> (Token, String) {
        self.pos += 1;
        self.at(self.pos - 1, ctx)
    }

    fn parse(&mut self) -> Result<Vec<LabelReq>, String> {
        let mut reqs = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Ctx::Values);
            match tok {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self
                        .requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    reqs.push(r);
                    let (t, l) = self.consume(Ctx::Values);
                    match t {
                        Token::End => return Ok(reqs),
                        Token::Comma => {
                            let (t2, l2) = self.lookahead(Ctx::Values);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                    }
                }
                Token::End => return Ok(reqs),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<LabelReq, String> {
        let (key, op) = self.key_and_operator()?;
        if let Some(op) = op {
            return new_requirement(&key, op, &[]);
        }
        let op = self.operator()?;
        let values = match op {
            Op::In | Op::NotIn => self.set_values()?,
            _ => self.exact_value()?,
        };
        new_requirement(&key, op, &values)
    }

    /// The key, and `Exists`/`DoesNotExist` when no binary operator follows.
    fn key_and_operator(&mut self) -> Result<(String, Option<Op>), String> {
        let (mut tok, mut lit) = self.consume(Ctx::Values);
        let mut op = None;
        if tok == Token::DoesNotExist {
            op = Some(Op::DoesNotExist);
            (tok, lit) = self.consume(Ctx::Values);
        }
        if tok != Token::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        if let Some(e) = key_error(&lit, "") {
            return Err(e);
        }
        let (t, _) = self.lookahead(Ctx::Values);
        if (t == Token::End || t == Token::Comma) && op.is_none() {
            op = Some(Op::Exists);
        }
        Ok((lit, op))
    }

    fn operator(&mut self) -> Result<Op, String> {
        let (tok, lit) = self.consume(Ctx::KeyAndOperator);
        Ok(match tok {
            Token::In => Op::In,
            Token::Equals => Op::Equals,
            Token::DoubleEquals => Op::DoubleEquals,
            Token::GreaterThan => Op::GreaterThan,
            Token::LessThan => Op::LessThan,
            Token::NotIn => Op::NotIn,
            Token::NotEquals => Op::NotEquals,
            _ => return Err(format!("found '{lit}', expected: {BINARY_OPERATORS}")),
        })
    }

    fn set_values(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.consume(Ctx::Values);
        if tok != Token::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(Ctx::Values);
        match tok {
            Token::Identifier | Token::Comma => {
                let s = self.identifiers()?;
                let (t, _) = self.consume(Ctx::Values);
                if t != Token::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(s)
            }
            Token::ClosedPar => {
                self.consume(Ctx::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    /// A (possibly empty) comma-separated list of (possibly empty) identifiers, as a sorted set.
    fn identifiers(&mut self) -> Result<Vec<String>, String> {
        let mut s: Vec<String> = Vec::new();
        let insert = |s: &mut Vec<String>, v: String| {
            if !s.contains(&v) {
                s.push(v);
            }
        };
        loop {
            let (tok, lit) = self.consume(Ctx::Values);
            match tok {
                Token::Identifier => {
                    insert(&mut s, lit);
                    let (t2, l2) = self.lookahead(Ctx::Values);
                    match t2 {
                        Token::Comma => continue,
                        Token::ClosedPar => break,
                        _ => return Err(format!("found '{l2}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if s.is_empty() {
                        insert(&mut s, String::new());
                    }
                    let (t2, _) = self.lookahead(Ctx::Values);
                    if t2 == Token::ClosedPar {
                        insert(&mut s, String::new());
                        break;
                    }
                    if t2 == Token::Comma {
                        self.consume(Ctx::Values);
                        insert(&mut s, String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
        s.sort();
        Ok(s)
    }

    fn exact_value(&mut self) -> Result<Vec<String>, String> {
        let (tok, _) = self.lookahead(Ctx::Values);
        if tok == Token::End || tok == Token::Comma {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(Ctx::Values);
        if tok == Token::Identifier {
            Ok(vec![lit])
        } else {
            Err(format!("found '{lit}', expected: identifier"))
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    In,
    NotIn,
    Equals,
    DoubleEquals,
    NotEquals,
    GreaterThan,
    LessThan,
    Exists,
    DoesNotExist,
}

const QUALIFIED_NAME: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must \
    start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', \
    regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

fn name_part_ok(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_alphanumeric();
    b.first().is_some_and(alnum)
        && b.last().is_some_and(alnum)
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn dns_subdomain_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        let an = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        b.first().is_some_and(an)
            && b.last().is_some_and(an)
            && b.iter().all(|c| an(c) || *c == b'-')
    };
    if !s.split('.').all(label_ok) {
        errs.push(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \
             '-' or '.', and must start and end with an alphanumeric character (e.g. \
             'example.com', regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                .to_string(),
        );
    }
    errs
}

/// apimachinery's `IsQualifiedName`.
fn qualified_name_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = v.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    dns_subdomain_errors(prefix)
                        .into_iter()
                        .map(|e| format!("prefix part {e}")),
                );
            }
            name
        }
        _ => {
            errs.push(format!(
                "a qualified name {QUALIFIED_NAME} with an optional DNS subdomain prefix and '/' \
                 (e.g. 'example.com/MyName')"
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_string());
    }
    if !name_part_ok(name) {
        errs.push(format!("name part {QUALIFIED_NAME}"));
    }
    errs
}

/// apimachinery's `IsValidLabelValue`.
fn label_value_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !v.is_empty() && !name_part_ok(v) {
        errs.push(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', \
             '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  \
             or 'my_value',  or '12345', regex used for validation is \
             '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
                .to_string(),
        );
    }
    errs
}

/// A `field.Invalid` error for a bad label key at `path`, worded as apimachinery does.
fn key_error(key: &str, path: &str) -> Option<String> {
    let errs = qualified_name_errors(key);
    (!errs.is_empty()).then(|| format!("{path}: Invalid value: {key:?}: {}", errs.join("; ")))
}

/// Go's `%#v` of a `[]string`.
fn go_strings(vs: &[String]) -> String {
    let inner: Vec<String> = vs.iter().map(|v| format!("{v:?}")).collect();
    format!("[]string{{{}}}", inner.join(", "))
}

/// apimachinery's `NewRequirement`: the key, the values' count for the operator, the values.
fn new_requirement(key: &str, op: Op, vals: &[String]) -> Result<LabelReq, String> {
    let mut errs: Vec<String> = Vec::new();
    errs.extend(key_error(key, "key"));
    let invalid = |detail: &str| format!("values: Invalid value: {}: {detail}", go_strings(vals));
    match op {
        Op::In | Op::NotIn if vals.is_empty() => {
            errs.push(invalid(
                "for 'in', 'notin' operators, values set can't be empty",
            ));
        }
        Op::Equals | Op::DoubleEquals | Op::NotEquals if vals.len() != 1 => {
            errs.push(invalid(
                "exact-match compatibility requires one single value",
            ));
        }
        Op::GreaterThan | Op::LessThan => {
            if vals.len() != 1 {
                errs.push(invalid(
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                ));
            }
            for (i, v) in vals.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    errs.push(format!(
                        "values[{i}]: Invalid value: {v:?}: for 'Gt', 'Lt' operators, the value must be an integer"
                    ));
                }
            }
        }
        _ => {}
    }
    for (i, v) in vals.iter().enumerate() {
        let e = label_value_errors(v);
        if !e.is_empty() {
            errs.push(format!(
                "values[{i}][{key}]: Invalid value: {v:?}: {}",
                e.join("; ")
            ));
        }
    }
    match errs.len() {
        0 => {}
        1 => return Err(errs.remove(0)),
        _ => return Err(format!("[{}]", errs.join(", "))),
    }
    let k = key.to_string();
    let first = || vals.first().cloned().unwrap_or_default();
    let num = || first().parse::<i64>().unwrap_or(0);
    Ok(match op {
        Op::In => LabelReq::In(k, vals.to_vec()),
        Op::NotIn => LabelReq::NotIn(k, vals.to_vec()),
        Op::Equals | Op::DoubleEquals => LabelReq::Eq(k, first()),
        Op::NotEquals => LabelReq::NotEq(k, first()),
        Op::GreaterThan => LabelReq::Gt(k, num()),
        Op::LessThan => LabelReq::Lt(k, num()),
        Op::Exists => LabelReq::Exists(k),
        Op::DoesNotExist => LabelReq::NotExists(k),
    })
}
