//! Splitting SQL text into individual statements.
//!
//! DataFusion's `SessionContext::sql` accepts a single statement, so scripts
//! (`-f FILE`, interactive input) are split on `;`.  Semicolons inside
//! single-quoted strings, double-quoted identifiers, `--` line comments and
//! `/* */` block comments do not end a statement.

/// Lexical state of the splitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Normal,
    SingleQuote,
    DoubleQuote,
    LineComment,
    BlockComment,
}

/// Incremental statement splitter.
#[derive(Debug)]
struct Splitter {
    state: State,
    current: String,
    has_content: bool,
    statements: Vec<String>,
}

impl Splitter {
    fn new() -> Self {
        Self {
            state: State::Normal,
            current: String::new(),
            has_content: false,
            statements: Vec::new(),
        }
    }

    /// Consumes `c`; `next` is the following character, if any.  Returns
    /// `true` when `next` was consumed as well.
    fn feed(&mut self, c: char, next: Option<char>) -> bool {
        match self.state {
            State::Normal => return self.feed_normal(c, next),
            State::SingleQuote if c == '\'' => self.state = State::Normal,
            State::DoubleQuote if c == '"' => self.state = State::Normal,
            State::LineComment if c == '\n' => self.state = State::Normal,
            State::BlockComment if c == '*' && next == Some('/') => {
                self.current.push_str("*/");
                self.state = State::Normal;
                return true;
            }
            _ => {}
        }
        self.current.push(c);
        false
    }

    fn feed_normal(&mut self, c: char, next: Option<char>) -> bool {
        match c {
            ';' => {
                self.finish_statement();
                return false;
            }
            '-' if next == Some('-') => self.state = State::LineComment,
            '/' if next == Some('*') => {
                self.current.push_str("/*");
                self.state = State::BlockComment;
                return true;
            }
            '\'' => self.start_quote(State::SingleQuote),
            '"' => self.start_quote(State::DoubleQuote),
            c if !c.is_whitespace() => self.has_content = true,
            _ => {}
        }
        self.current.push(c);
        false
    }

    fn start_quote(&mut self, state: State) {
        self.state = state;
        self.has_content = true;
    }

    /// Ends the current statement (at a `;`), skipping empty ones.
    fn finish_statement(&mut self) {
        if self.has_content {
            self.statements.push(self.current.trim().to_string());
        }
        self.current.clear();
        self.has_content = false;
    }

    /// Complete statements and the unterminated trailing one (if it holds
    /// anything besides whitespace and comments).
    fn finish(self) -> (Vec<String>, Option<String>) {
        let rest = self.has_content.then(|| self.current.trim().to_string());
        (self.statements, rest)
    }
}

fn scan(sql: &str) -> (Vec<String>, Option<String>) {
    let mut splitter = Splitter::new();
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if splitter.feed(c, chars.peek().copied()) {
            chars.next();
        }
    }
    splitter.finish()
}

/// Splits `sql` into statements (without the terminating `;`).
///
/// A trailing statement without `;` is included; empty statements and
/// statements consisting only of comments are dropped.
pub fn split_statements(sql: &str) -> Vec<String> {
    let (mut statements, rest) = scan(sql);
    statements.extend(rest);
    statements
}

/// Whether `buffer` holds at least one statement and ends with a complete
/// one, i.e. it can be executed in an interactive session.
pub fn is_complete(buffer: &str) -> bool {
    let (statements, rest) = scan(buffer);
    !statements.is_empty() && rest.is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_simple_statements() {
        assert_eq!(
            split_statements("SELECT 1; SELECT 2;"),
            vec!["SELECT 1", "SELECT 2"]
        );
    }

    #[test]
    fn keeps_trailing_statement_without_semicolon() {
        assert_eq!(
            split_statements("SELECT 1;\nSELECT 2\n"),
            vec!["SELECT 1", "SELECT 2"]
        );
    }

    #[test]
    fn drops_empty_statements() {
        assert_eq!(split_statements(" ; ;\n SELECT 1;;  "), vec!["SELECT 1"]);
        assert!(split_statements("").is_empty());
        assert!(split_statements("  \n ").is_empty());
    }

    #[test]
    fn ignores_semicolons_in_string_literals() {
        assert_eq!(
            split_statements("SELECT 'a;b' AS x; SELECT 'it''s; ok';"),
            vec!["SELECT 'a;b' AS x", "SELECT 'it''s; ok'"]
        );
    }

    #[test]
    fn ignores_semicolons_in_quoted_identifiers() {
        assert_eq!(
            split_statements("SELECT 1 AS \"a;b\"; SELECT 2"),
            vec!["SELECT 1 AS \"a;b\"", "SELECT 2"]
        );
    }

    #[test]
    fn ignores_semicolons_in_line_comments() {
        let sql = "-- setup; not a statement\nSELECT 1; -- trailing; comment\nSELECT 2;";
        assert_eq!(
            split_statements(sql),
            vec![
                "-- setup; not a statement\nSELECT 1",
                "-- trailing; comment\nSELECT 2"
            ]
        );
    }

    #[test]
    fn drops_comment_only_statements() {
        assert_eq!(split_statements("SELECT 1; -- the end"), vec!["SELECT 1"]);
        assert_eq!(split_statements("SELECT 1; /* done; */"), vec!["SELECT 1"]);
    }

    #[test]
    fn ignores_semicolons_in_block_comments() {
        assert_eq!(
            split_statements("SELECT /* a; b */ 1; SELECT 2"),
            vec!["SELECT /* a; b */ 1", "SELECT 2"]
        );
        // `/*/` does not close the comment.
        assert_eq!(
            split_statements("SELECT /*/ ; */ 1;"),
            vec!["SELECT /*/ ; */ 1"]
        );
    }

    #[test]
    fn single_dash_and_slash_are_operators() {
        assert_eq!(
            split_statements("SELECT 4 - 1; SELECT 4 / 2"),
            vec!["SELECT 4 - 1", "SELECT 4 / 2"]
        );
    }

    #[test]
    fn handles_multibyte_characters() {
        assert_eq!(
            split_statements("SELECT 'héllo;✓'; SELECT 'ü'"),
            vec!["SELECT 'héllo;✓'", "SELECT 'ü'"]
        );
    }

    #[test]
    fn unterminated_string_swallows_semicolons() {
        assert_eq!(
            split_statements("SELECT 'abc; SELECT 1;"),
            vec!["SELECT 'abc; SELECT 1;"]
        );
    }

    #[test]
    fn completeness_for_interactive_input() {
        assert!(is_complete("SELECT 1;"));
        assert!(is_complete("SELECT 1;\n"));
        assert!(is_complete("SELECT 1; -- comment\n"));
        assert!(!is_complete("SELECT 1"));
        assert!(!is_complete("SELECT 'a;\n"));
        assert!(!is_complete("SELECT 1; SELECT 2"));
        assert!(!is_complete(""));
        assert!(!is_complete("-- only a comment;\n"));
    }
}
