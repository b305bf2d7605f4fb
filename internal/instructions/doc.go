// Package instructions loads and validates the instructions: main.md (the
// rules shared by every scenario), scenarios/*.md (one file per scenario:
// frontmatter with the declared functions and detection rules, then the
// Markdown instructions), tools.yaml (how each declared function runs and
// the policies it runs under) and policy.yaml (what the shop owes a warranty
// claim: decision.Policy), with the strict YAML decoding that reports
// every problem of a file at once, readably.
package instructions
