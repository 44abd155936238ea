//! The expression calculator of SidecarSet `resourcesPolicy` (v1.9.0, `pkg/util/calculator`):
//! `+ - * /`, parentheses, unary minus, `max(a, b)`, `min(a, b)`, numbers, percent literals
//! (`50%` = 0.5), Kubernetes quantities (`200m`, `512Mi`) and the variables `cpu` / `memory`.
//! A quantity times or divided by a number keeps the quantity's format; two quantities cannot be
//! multiplied, and nothing can be divided by a quantity.

use std::collections::BTreeMap;

use super::quantity::{from_nanos, is_binary, nanos};

/// A calculator value: a plain number or a quantity (nano units + whether it prints binary).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Number(f64),
    Quantity { nanos: i128, binary: bool },
}

impl Value {
    /// A quantity from its string (None if it does not parse).
    pub fn quantity(s: &str) -> Option<Value> {
        Some(Value::Quantity {
            nanos: nanos(s)?,
            binary: is_binary(s),
        })
    }

    /// The quantity as Go prints it, or the number as `%g` roughly does.
    pub fn to_quantity_string(self) -> String {
        match self {
            Value::Quantity { nanos, binary } => from_nanos(nanos, binary).unwrap_or_default(),
            Value::Number(n) => format!("{n}"),
        }
    }
}

/// `resource.NewMilliQuantity(int64(n*1000), DecimalSI)`.
fn number_quantity(n: f64) -> (i128, bool) {
    ((n * 1000.0) as i64 as i128 * 1_000_000, false)
}

/// `MilliValue()`: rounded up to a whole milli.
fn milli(nanos: i128) -> i128 {
    nanos.div_euclid(1_000_000) + i128::from(nanos.rem_euclid(1_000_000) != 0)
}

/// `SetMilli(int64(float64(MilliValue()) op n))` on a quantity of this format.
fn scale(nanos: i128, binary: bool, f: impl Fn(f64) -> f64) -> Value {
    let m = f(milli(nanos) as f64) as i64;
    Value::Quantity {
        nanos: i128::from(m) * 1_000_000,
        binary,
    }
}

fn as_quantity(v: Value) -> (i128, bool) {
    match v {
        Value::Quantity { nanos, binary } => (nanos, binary),
        Value::Number(n) => number_quantity(n),
    }
}

/// `Quantity.Add`: the receiver keeps its format, unless it is zero (then it takes the other's).
fn add(a: Value, b: Value, sign: i128) -> Value {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => Value::Number(x + sign as f64 * y),
        _ => {
            let ((x, xb), (y, yb)) = (as_quantity(a), as_quantity(b));
            Value::Quantity {
                nanos: x + sign * y,
                binary: if x == 0 { yb } else { xb },
            }
        }
    }
}

fn cmp(a: Value, b: Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.total_cmp(&y),
        _ => as_quantity(a).0.cmp(&as_quantity(b).0),
    }
}

fn min_max(a: Value, b: Value, max: bool) -> Value {
    let pick_a = if max {
        cmp(a, b).is_ge()
    } else {
        cmp(a, b).is_le()
    };
    let pick = if pick_a { a } else { b };
    match (a, b, pick) {
        (Value::Number(_), Value::Number(_), _) => pick,
        (_, _, Value::Number(n)) => {
            let (nanos, binary) = number_quantity(n);
            Value::Quantity { nanos, binary }
        }
        _ => pick,
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(String),
    Qty(String),
    Ident(String),
    Op(char),
}

/// `yyLex.isQuantity`: a numeric head followed by one of the supported unit suffixes.
fn is_quantity_token(s: &str) -> bool {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-')))
        .unwrap_or(0);
    end != 0 && ["m", "k", "M", "G", "T", "P", "Ki", "Mi", "Gi", "Ti", "Pi"].contains(&&s[end..])
}

/// `yyLex.readNumber`.
fn read_number(chars: &[char], mut i: usize) -> usize {
    let (mut dot, mut e, mut pct, mut expect_exp) = (false, false, false, false);
    while let Some(&c) = chars.get(i) {
        if c.is_ascii_digit() {
            expect_exp = false;
        } else if c == '.' {
            if dot || e || pct {
                break;
            }
            dot = true;
        } else if c == 'e' || c == 'E' {
            if e || pct {
                break;
            }
            e = true;
            expect_exp = true;
        } else if c == '+' || c == '-' {
            if !expect_exp {
                break;
            }
            expect_exp = false;
        } else if c == '%' {
            if pct {
                break;
            }
            pct = true;
        } else if c.is_alphabetic() {
            if expect_exp {
                break;
            }
            while chars.get(i).is_some_and(|c| c.is_alphabetic()) {
                i += 1;
            }
            break;
        } else {
            break;
        }
        i += 1;
    }
    i
}

fn lex(input: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = input.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if matches!(c, '+' | '-' | '*' | '/' | '(' | ')' | ',') {
            out.push(Tok::Op(c));
            i += 1;
        } else if c == '.' || c.is_ascii_digit() {
            let end = read_number(&chars, i).max(i + 1);
            let s: String = chars[i..end].iter().collect();
            out.push(if is_quantity_token(&s) {
                Tok::Qty(s)
            } else {
                Tok::Num(s)
            });
            i = end;
        } else if c.is_alphabetic() {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|c| c.is_alphanumeric() || *c == '_')
            {
                i += 1;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
        } else {
            return Err(format!("parse error: syntax error at position {}", i + 1));
        }
    }
    Ok(out)
}

/// `parseNumber`: a float, or a percent as its fraction; a malformed number reads as 0 (the
/// upstream parser ignores that error).
fn parse_number(s: &str) -> f64 {
    match s.strip_suffix('%') {
        Some(p) => p.parse::<f64>().map_or(0.0, |n| n / 100.0),
        None => s.parse().unwrap_or(0.0),
    }
}

struct Parser<'a> {
    toks: Vec<Tok>,
    pos: usize,
    vars: &'a BTreeMap<String, Value>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn eat(&mut self, op: char) -> bool {
        if self.peek() == Some(&Tok::Op(op)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expr(&mut self) -> Result<Value, String> {
        let mut left = self.term()?;
        loop {
            if self.eat('+') {
                left = add(left, self.term()?, 1);
            } else if self.eat('-') {
                left = add(left, self.term()?, -1);
            } else {
                return Ok(left);
            }
        }
    }

    fn term(&mut self) -> Result<Value, String> {
        let mut left = self.factor()?;
        loop {
            if self.eat('*') {
                let right = self.factor()?;
                left = match (left, right) {
                    (Value::Quantity { .. }, Value::Quantity { .. }) => {
                        return Err("multiplication of two quantities".to_owned());
                    }
                    (Value::Quantity { nanos, binary }, Value::Number(n))
                    | (Value::Number(n), Value::Quantity { nanos, binary }) => {
                        scale(nanos, binary, |m| m * n)
                    }
                    (Value::Number(a), Value::Number(b)) => Value::Number(a * b),
                };
            } else if self.eat('/') {
                let right = self.factor()?;
                left = match (left, right) {
                    (_, Value::Quantity { .. }) => return Err("division by quantity".to_owned()),
                    (_, Value::Number(0.0)) => {
                        return Err("division by zero".to_owned());
                    }
                    (Value::Quantity { nanos, binary }, Value::Number(n)) => {
                        scale(nanos, binary, |m| m / n)
                    }
                    (Value::Number(a), Value::Number(b)) => Value::Number(a / b),
                };
            } else {
                return Ok(left);
            }
        }
    }

    fn factor(&mut self) -> Result<Value, String> {
        let tok = self.peek().cloned();
        self.pos += 1;
        match tok {
            Some(Tok::Num(s)) => Ok(Value::Number(parse_number(&s))),
            Some(Tok::Qty(s)) => Value::quantity(&s)
                .ok_or_else(|| format!("quantities must match the regular expression: {s}")),
            Some(Tok::Op('(')) => {
                let v = self.expr()?;
                if !self.eat(')') {
                    return Err("parse error: syntax error".to_owned());
                }
                Ok(v)
            }
            Some(Tok::Op('-')) => Ok(match self.factor()? {
                Value::Number(n) => Value::Number(-n),
                Value::Quantity { nanos, binary } => Value::Quantity {
                    nanos: -nanos,
                    binary,
                },
            }),
            Some(Tok::Ident(name)) => {
                if self.eat('(') {
                    let a = self.expr()?;
                    let b = if self.eat(',') {
                        Some(self.expr()?)
                    } else {
                        None
                    };
                    if !self.eat(')') {
                        return Err("parse error: syntax error".to_owned());
                    }
                    let func = name.to_lowercase();
                    let b = match (func.as_str(), b) {
                        ("max" | "min", Some(b)) => b,
                        ("max" | "min", None) => {
                            return Err(format!(
                                "{func} function requires exactly 2 arguments, got 1"
                            ));
                        }
                        _ => return Err(format!("unknown function: {name}")),
                    };
                    return Ok(min_max(a, b, func == "max"));
                }
                self.vars
                    .get(&name.to_lowercase())
                    .copied()
                    .ok_or_else(|| format!("undefined variable: {name}"))
            }
            _ => Err("parse error: syntax error".to_owned()),
        }
    }
}

/// Evaluates `input` with the given variables (lower-case names).
///
/// Port of pkg/util/calculator/calculator.go::Calculator.Parse (v1.9.0): a negative result is
/// an error.
pub fn evaluate(input: &str, vars: &BTreeMap<String, Value>) -> Result<Value, String> {
    let toks = lex(input)?;
    let mut p = Parser { toks, pos: 0, vars };
    let v = p.expr()?;
    if p.pos != p.toks.len() {
        return Err("parse error: syntax error".to_owned());
    }
    match v {
        Value::Quantity { nanos, .. } if nanos < 0 => Err(format!(
            "calculation result is negative: {}",
            v.to_quantity_string()
        )),
        Value::Number(n) if n < 0.0 => Err(format!("calculation result is negative: {n}")),
        v => Ok(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(expr: &str, var: &str, value: &str) -> Result<String, String> {
        let mut vars = BTreeMap::new();
        vars.insert(var.to_owned(), Value::quantity(value).ok_or("bad")?);
        evaluate(expr, &vars).map(Value::to_quantity_string)
    }

    #[test]
    fn upstream_expression_cases() {
        // TestEvaluateResourceExpression (sidecarset_resources_test.go)
        assert_eq!(
            eval("max(cpu*50%, 100m)", "cpu", "150m").as_deref(),
            Ok("100m")
        );
        assert_eq!(
            eval("max(cpu*50%, 100m)", "cpu", "400m").as_deref(),
            Ok("200m")
        );
        assert_eq!(
            eval("max(memory*20% + 100Mi, 200Mi)", "memory", "800Mi").as_deref(),
            Ok("260Mi")
        );
        assert_eq!(eval("cpu*50%", "cpu", "600m").as_deref(), Ok("300m"));
        assert_eq!(eval("min(cpu, 1) / 2", "cpu", "3").as_deref(), Ok("500m"));
        assert_eq!(eval("(cpu - 100m) * 2", "cpu", "1").as_deref(), Ok("1800m"));
    }

    #[test]
    fn errors() {
        let vars = BTreeMap::from([("cpu".to_owned(), Value::Number(1.0))]);
        for bad in [
            "cpu +",
            "(cpu",
            "max(cpu)",
            "foo(cpu, 1)",
            "mem * 2",
            "cpu ** 2",
            "100m * 2Mi",
            "1 / 0",
            "1 / cpu2",
            "100m - 1",
        ] {
            assert!(evaluate(bad, &vars).is_err(), "{bad}");
        }
        assert_eq!(
            evaluate("mem", &vars),
            Err("undefined variable: mem".to_owned())
        );
        assert!(evaluate("max(cpu*50%, 100m) + cpu", &vars).is_ok());
        assert_eq!(evaluate("2 * 50%", &vars), Ok(Value::Number(1.0)));
    }
}
