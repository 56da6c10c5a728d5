//! Node constraints in Slurm's `--constraint` syntax: features joined by `&` (and), `|`
//! (or), negated by `!`, grouped with parentheses; `&` binds tighter than `|`, as in
//! Slurm. `,` is accepted for `&` (a list of features, as `--feature` takes them).
//! Slurm's counts (`a100*2`) and matching-or brackets (`[a|b]`) are not supported and
//! are refused by name.

use std::fmt;

/// A parsed constraint over a node's features.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Constraint {
    Feature(String),
    Not(Box<Constraint>),
    All(Vec<Constraint>),
    Any(Vec<Constraint>),
}

/// Why a constraint could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("constraint {text:?}: {why}; write features joined by & (and), | (or), ! (not) and parentheses, e.g. \"a100&(nvlink|ib)&!slow\"")]
pub struct ConstraintError {
    pub text: String,
    pub why: String,
}

impl Constraint {
    /// Reads a constraint.
    pub fn parse(text: &str) -> Result<Constraint, ConstraintError> {
        let err = |why: String| ConstraintError {
            text: text.to_string(),
            why,
        };
        let tokens = lex(text).map_err(err)?;
        if tokens.is_empty() {
            return Err(err("it is empty".into()));
        }
        let mut p = Parser { tokens, at: 0 };
        let c = p.or().map_err(err)?;
        if p.at < p.tokens.len() {
            return Err(err(format!(
                "unexpected {} at the end",
                p.tokens[p.at].shown()
            )));
        }
        Ok(c)
    }

    /// Whether a node with these features (sorted or not) satisfies it.
    pub fn holds(&self, features: &[String]) -> bool {
        match self {
            Constraint::Feature(f) => features.iter().any(|x| x == f),
            Constraint::Not(c) => !c.holds(features),
            Constraint::All(cs) => cs.iter().all(|c| c.holds(features)),
            Constraint::Any(cs) => cs.iter().any(|c| c.holds(features)),
        }
    }

    /// The features it names, for messages ("no node has feature ib").
    pub fn features(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    fn collect<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Constraint::Feature(f) => out.push(f),
            Constraint::Not(c) => c.collect(out),
            Constraint::All(cs) | Constraint::Any(cs) => cs.iter().for_each(|c| c.collect(out)),
        }
    }
}

impl fmt::Display for Constraint {
    /// The canonical form: `&` and `|`, parentheses only where needed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Constraint::Feature(x) => write!(f, "{x}"),
            Constraint::Not(c) => match **c {
                Constraint::Feature(_) | Constraint::Not(_) => write!(f, "!{c}"),
                _ => write!(f, "!({c})"),
            },
            Constraint::All(cs) => {
                for (i, c) in cs.iter().enumerate() {
                    if i > 0 {
                        write!(f, "&")?;
                    }
                    match c {
                        Constraint::Any(_) => write!(f, "({c})")?,
                        _ => write!(f, "{c}")?,
                    }
                }
                Ok(())
            }
            Constraint::Any(cs) => {
                for (i, c) in cs.iter().enumerate() {
                    if i > 0 {
                        write!(f, "|")?;
                    }
                    write!(f, "{c}")?;
                }
                Ok(())
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Name(String),
    And,
    Or,
    Not,
    Open,
    Close,
}

impl Token {
    fn shown(&self) -> String {
        match self {
            Token::Name(n) => format!("feature {n:?}"),
            Token::And => "\"&\"".into(),
            Token::Or => "\"|\"".into(),
            Token::Not => "\"!\"".into(),
            Token::Open => "\"(\"".into(),
            Token::Close => "\")\"".into(),
        }
    }
}

fn lex(text: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            ' ' | '\t' => {}
            '&' | ',' => out.push(Token::And),
            '|' => out.push(Token::Or),
            '!' => out.push(Token::Not),
            '(' => out.push(Token::Open),
            ')' => out.push(Token::Close),
            '[' | ']' => {
                return Err(
                    "Slurm's matching-or brackets ([a|b]) are not supported; use parentheses"
                        .into(),
                )
            }
            '*' => return Err("feature counts (a100*2) are not supported".into()),
            c if super::feature_char(c) => {
                let mut end = i + c.len_utf8();
                while let Some(&(j, d)) = chars.peek() {
                    if !super::feature_char(d) {
                        break;
                    }
                    end = j + d.len_utf8();
                    chars.next();
                }
                let name = &text[i..end];
                super::check_feature(name)?;
                out.push(Token::Name(name.to_string()));
            }
            c => return Err(format!("{c:?} is not allowed in a constraint")),
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn or(&mut self) -> Result<Constraint, String> {
        let mut parts = vec![self.and()?];
        while self.peek() == Some(&Token::Or) {
            self.at += 1;
            parts.push(self.and()?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().expect("one part")
        } else {
            Constraint::Any(parts)
        })
    }

    fn and(&mut self) -> Result<Constraint, String> {
        let mut parts = vec![self.unary()?];
        while self.peek() == Some(&Token::And) {
            self.at += 1;
            parts.push(self.unary()?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().expect("one part")
        } else {
            Constraint::All(parts)
        })
    }

    fn unary(&mut self) -> Result<Constraint, String> {
        let Some(t) = self.tokens.get(self.at).cloned() else {
            return Err("it ends where a feature was expected".into());
        };
        self.at += 1;
        match t {
            Token::Not => Ok(Constraint::Not(Box::new(self.unary()?))),
            Token::Name(n) => Ok(Constraint::Feature(n)),
            Token::Open => {
                let c = self.or()?;
                match self.peek() {
                    Some(Token::Close) => {
                        self.at += 1;
                        Ok(c)
                    }
                    _ => Err("a \"(\" is never closed".into()),
                }
            }
            other => Err(format!("{} where a feature was expected", other.shown())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn and_binds_tighter_than_or_and_not_negates() {
        let c = Constraint::parse("a100&nvlink|h100").unwrap();
        assert!(c.holds(&f(&["a100", "nvlink"])));
        assert!(c.holds(&f(&["h100"])));
        assert!(!c.holds(&f(&["a100"])));
        let c = Constraint::parse("a100&(nvlink|ib)&!slow").unwrap();
        assert!(c.holds(&f(&["a100", "ib"])));
        assert!(!c.holds(&f(&["a100", "ib", "slow"])));
        assert!(!c.holds(&f(&["a100"])));
        assert_eq!(c.to_string(), "a100&(nvlink|ib)&!slow");
        assert_eq!(c.features(), ["a100", "ib", "nvlink", "slow"]);
        // A comma is an and, as in a feature list.
        assert_eq!(
            Constraint::parse("a100, nvlink").unwrap(),
            Constraint::parse("a100&nvlink").unwrap()
        );
        assert_eq!(Constraint::parse("!!a").unwrap().to_string(), "!!a");
    }

    #[test]
    fn mistakes_are_named() {
        let why = |t: &str| Constraint::parse(t).unwrap_err().why;
        assert_eq!(why(""), "it is empty");
        assert_eq!(why("a&"), "it ends where a feature was expected");
        assert_eq!(why("(a|b"), "a \"(\" is never closed");
        assert_eq!(why("a)"), "unexpected \")\" at the end");
        assert_eq!(why("a b"), "unexpected feature \"b\" at the end");
        assert!(why("a100*2").contains("counts"));
        assert!(why("[a|b]").contains("brackets"));
        assert!(why("a;b").contains("';' is not allowed"));
        let e = Constraint::parse("a&").unwrap_err().to_string();
        assert!(e.contains("e.g. \"a100&(nvlink|ib)&!slow\""), "{e}");
    }
}
