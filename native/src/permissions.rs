//! Permission queries of keys.verifyKey (DESIGN.md): `a AND (b OR c)`.
//!
//!   expr    := and ("OR" and)*        operators are case-insensitive whole words
//!   and     := primary ("AND" primary)*      (AND binds tighter than OR)
//!   primary := PERMISSION | "(" expr ")"
//!   PERMISSION := [A-Za-z0-9._\-*:/]+
//!
//! A held permission satisfies a queried one when equal, or when it ends in `*` and the
//! queried one starts with what precedes the `*` (`documents.*` covers `documents.read`;
//! `*` covers everything). Parsed queries are cached per thread.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

#[derive(Debug, PartialEq)]
pub enum Query {
    Perm(String),
    And(Vec<Query>),
    Or(Vec<Query>),
}

#[derive(Debug, PartialEq)]
pub struct SyntaxError {
    pub message: String,
}

#[derive(Debug, PartialEq)]
enum Token<'a> {
    Word(&'a str, usize),
    And(usize),
    Or(usize),
    Open(usize),
    Close(usize),
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '*' | ':' | '/')
}

fn err(message: String) -> SyntaxError {
    SyntaxError { message }
}

fn lex(input: &str) -> Result<Vec<Token<'_>>, SyntaxError> {
    let mut tokens = Vec::new();
    let mut chars = input.char_indices().peekable();
    while let Some(&(pos, c)) = chars.peek() {
        match c {
            ' ' | '\t' | '\r' | '\n' => {
                chars.next();
            }
            '(' => {
                tokens.push(Token::Open(pos));
                chars.next();
            }
            ')' => {
                tokens.push(Token::Close(pos));
                chars.next();
            }
            c if is_ident(c) => {
                let mut end = pos;
                while let Some(&(i, c)) = chars.peek() {
                    if !is_ident(c) {
                        break;
                    }
                    end = i + c.len_utf8();
                    chars.next();
                }
                let word = &input[pos..end];
                tokens.push(if word.eq_ignore_ascii_case("and") {
                    Token::And(pos)
                } else if word.eq_ignore_ascii_case("or") {
                    Token::Or(pos)
                } else {
                    Token::Word(word, pos)
                });
            }
            c => return Err(err(format!("invalid character '{c}' at position {pos}; permissions use letters, digits and . _ - * : /"))),
        }
    }
    Ok(tokens)
}

struct Parser<'a> {
    tokens: Vec<Token<'a>>,
    at: usize,
    len: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&Token<'a>> {
        self.tokens.get(self.at)
    }

    fn expr(&mut self) -> Result<Query, SyntaxError> {
        let mut terms = vec![self.and()?];
        while let Some(Token::Or(_)) = self.peek() {
            self.at += 1;
            terms.push(self.and()?);
        }
        Ok(if terms.len() == 1 { terms.remove(0) } else { Query::Or(terms) })
    }

    fn and(&mut self) -> Result<Query, SyntaxError> {
        let mut terms = vec![self.primary()?];
        while let Some(Token::And(_)) = self.peek() {
            self.at += 1;
            terms.push(self.primary()?);
        }
        Ok(if terms.len() == 1 { terms.remove(0) } else { Query::And(terms) })
    }

    fn primary(&mut self) -> Result<Query, SyntaxError> {
        match self.tokens.get(self.at) {
            Some(Token::Word(w, _)) => {
                self.at += 1;
                Ok(Query::Perm((*w).to_owned()))
            }
            Some(Token::Open(pos)) => {
                let pos = *pos;
                self.at += 1;
                if let Some(Token::Close(_)) = self.peek() {
                    return Err(err(format!("empty parentheses at position {pos}")));
                }
                let inner = self.expr()?;
                match self.peek() {
                    Some(Token::Close(_)) => {
                        self.at += 1;
                        Ok(inner)
                    }
                    _ => Err(err(format!("missing ')' for the '(' at position {pos}"))),
                }
            }
            Some(Token::And(pos)) | Some(Token::Or(pos)) => Err(err(format!("expected a permission at position {pos}, found an operator"))),
            Some(Token::Close(pos)) => Err(err(format!("unexpected ')' at position {pos}"))),
            None => Err(err(format!("expected a permission at position {}, found the end of the query", self.len))),
        }
    }
}

pub fn parse(input: &str) -> Result<Query, SyntaxError> {
    let tokens = lex(input)?;
    if tokens.is_empty() {
        return Err(err("the permission query is empty".into()));
    }
    let mut p = Parser { tokens, at: 0, len: input.len() };
    let q = p.expr()?;
    if let Some(t) = p.peek() {
        let pos = match t {
            Token::Word(_, p) | Token::And(p) | Token::Or(p) | Token::Open(p) | Token::Close(p) => *p,
        };
        return Err(err(format!("unexpected content at position {pos}; join permissions with AND or OR")));
    }
    Ok(q)
}

const CACHE_LIMIT: usize = 1024;

thread_local! {
    static CACHE: RefCell<HashMap<String, Rc<Query>>> = RefCell::new(HashMap::new());
}

/// `parse` with a per-thread cache of the queries seen (syntax errors are not cached).
pub fn parse_cached(input: &str) -> Result<Rc<Query>, SyntaxError> {
    if let Some(q) = CACHE.with(|c| c.borrow().get(input).cloned()) {
        return Ok(q);
    }
    let q = Rc::new(parse(input)?);
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= CACHE_LIMIT {
            c.clear();
        }
        c.insert(input.to_owned(), q.clone());
    });
    Ok(q)
}

/// Held permissions are the stored bytes (UTF-8); matching is byte-wise.
pub fn holds(held: &[&[u8]], wanted: &str) -> bool {
    let wanted = wanted.as_bytes();
    held.iter().any(|h| *h == wanted || covers(h, wanted))
}

/// The spec's wildcard (DESIGN.md): a held `documents.*` covers every `documents.…`
/// permission. Only a last segment `*` is one; `doc*` or a bare `*` match only themselves.
fn covers(held: &[u8], wanted: &[u8]) -> bool {
    held.strip_suffix(b"*")
        .filter(|prefix| prefix.ends_with(b"."))
        .is_some_and(|prefix| wanted.len() > prefix.len() && wanted.starts_with(prefix))
}

pub fn evaluate(q: &Query, held: &[&[u8]]) -> bool {
    match q {
        Query::Perm(p) => holds(held, p),
        Query::And(qs) => qs.iter().all(|q| evaluate(q, held)),
        Query::Or(qs) => qs.iter().any(|q| evaluate(q, held)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Query {
        Query::Perm(s.into())
    }

    #[test]
    fn and_binds_tighter_and_operators_ignore_case() {
        assert_eq!(parse("a or b AND c").unwrap(), Query::Or(vec![p("a"), Query::And(vec![p("b"), p("c")])]));
        assert_eq!(parse("(a Or b) and c").unwrap(), Query::And(vec![Query::Or(vec![p("a"), p("b")]), p("c")]));
        assert_eq!(parse("  documents.read ").unwrap(), p("documents.read"));
        assert_eq!(parse("android AND orca").unwrap(), Query::And(vec![p("android"), p("orca")]));
    }

    #[test]
    fn syntax_errors_name_the_position() {
        for (q, needle) in [
            ("", "empty"),
            ("a AND", "end of the query"),
            ("(a OR b", "missing ')'"),
            ("a b", "position 2"),
            ("a AND ()", "empty parentheses"),
            ("a $ b", "invalid character '$' at position 2"),
            (")", "unexpected ')'"),
            ("OR a", "position 0"),
        ] {
            let e = parse(q).unwrap_err();
            assert!(e.message.contains(needle), "{q:?}: {}", e.message);
        }
    }

    #[test]
    fn evaluation_with_wildcards() {
        let held: [&[u8]; 2] = [b"documents.*", b"billing.read"];
        let q = parse("documents.write AND (billing.read OR billing.write)").unwrap();
        assert!(evaluate(&q, &held));
        assert!(!evaluate(&parse("billing.write").unwrap(), &held));
        assert!(evaluate(&parse("documents.*").unwrap(), &held));
        assert!(!evaluate(&parse("documents.*").unwrap(), &[b"documents.read"]));
        assert!(!evaluate(&parse("documentsX").unwrap(), &held));
        assert!(evaluate(&parse("documents.read.deep").unwrap(), &held));
        assert!(!evaluate(&parse("documents").unwrap(), &held));
        // Only a last segment `*` is a wildcard.
        assert!(!evaluate(&parse("anything").unwrap(), &[b"*"]));
        assert!(evaluate(&parse("*").unwrap(), &[b"*"]));
        assert!(!evaluate(&parse("document").unwrap(), &[b"doc*"]));
        assert!(!evaluate(&parse("docs.x").unwrap(), &[b"doc*"]));
        assert!(parse_cached("a AND b").is_ok());
        assert!(parse_cached("a AND b").is_ok());
    }
}
