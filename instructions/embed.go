// Package instructions holds the default instructions built into triage:
// main.md (the rules shared by every scenario), scenarios/*.md (one file per
// scenario: frontmatter with the declared functions and detection rules,
// then the Markdown instructions), tools.yaml (how each declared function
// runs and the policies it runs under) and policy.yaml (what the shop owes
// a warranty claim, per jurisdiction and buyer type) and commitments.yaml
// (the phrases that promise a commitment or state a status, per language,
// a reply's words are read with). --instructions DIR
// replaces them at run time with a directory of the same layout.
package instructions

import "embed"

// FS is the embedded default instruction tree (main.md, scenarios/*.md,
// tools.yaml, policy.yaml, commitments.yaml).
//
//go:embed main.md scenarios/*.md tools.yaml policy.yaml commitments.yaml
var FS embed.FS
