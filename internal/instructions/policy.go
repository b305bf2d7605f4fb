// policy.yaml: what the shop owes a warranty claim (decision.Policy),
// decoded strictly and validated, every problem with its line.

package instructions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	embedded "triage/instructions"
	"triage/internal/decision"
)

// PolicyFile is the policy's file name in an instructions directory.
const PolicyFile = decision.PolicyFile

// LoadPolicy loads and validates fsys's policy.yaml; a directory without
// one, and a nil fsys, get the built-in policy (package
// triage/instructions).
func LoadPolicy(fsys fs.FS) (*decision.Policy, error) {
	if fsys == nil {
		fsys = embedded.FS
	}
	raw, err := fs.ReadFile(fsys, PolicyFile)
	if errors.Is(err, fs.ErrNotExist) && fsys != fs.FS(embedded.FS) {
		return LoadPolicy(embedded.FS)
	}
	if err != nil {
		return nil, fmt.Errorf("policy: %s: %w", PolicyFile, err)
	}
	return ParsePolicy(PolicyFile, raw)
}

// ParsePolicy is LoadPolicy for the contents of a file named file. Every
// problem is reported at once, each naming file, line and the key path
// (`policy: policy.yaml: line 12: jurisdictions.pl.consumer.remedies[0][1]:
// "fix" is not a remedy (one of ...)`).
func ParsePolicy(file string, raw []byte) (*decision.Policy, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("policy: %s: empty (want default: and jurisdictions:)", file)
	}
	var p decision.Policy
	if err := DecodeYAML(raw, &p); err != nil {
		var se *YAMLError
		if !errors.As(err, &se) {
			return nil, fmt.Errorf("policy: %s: %w", file, err)
		}
		errs := make([]error, len(se.Problems))
		for i, pr := range se.Problems {
			errs[i] = fmt.Errorf("policy: %s: %s", file, pr)
		}
		return nil, errors.Join(errs...)
	}
	problems := p.Validate()
	if len(problems) == 0 {
		return &p, nil
	}
	var doc yaml.Node
	_ = yaml.Unmarshal(raw, &doc) // DecodeYAML parsed it
	errs := make([]error, len(problems))
	for i, pr := range problems {
		errs[i] = fmt.Errorf("policy: %s: line %d: %s", file, lineOf(&doc, pr.Path), pr)
	}
	return nil, errors.Join(errs...)
}

// lineOf is the line of the value at the dotted key path
// (a.b[1][0]) in doc, or of its closest ancestor present.
func lineOf(doc *yaml.Node, path string) int {
	if len(doc.Content) == 0 {
		return 1
	}
	n := doc.Content[0]
	line := n.Line
	for _, step := range pathSteps(path) {
		next := child(n, step)
		if next == nil {
			break
		}
		n, line = next, next.Line
	}
	return line
}

// pathSteps splits a.b[1][0] into a, b, [1], [0].
func pathSteps(path string) []string {
	var steps []string
	for _, part := range strings.Split(path, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key != "" {
			steps = append(steps, key)
		}
		if rest != "" {
			for _, idx := range strings.Split(strings.TrimSuffix(rest, "]"), "][") {
				steps = append(steps, "["+idx+"]")
			}
		}
	}
	return steps
}

// child is n's value under key or [index] step (nil when absent).
func child(n *yaml.Node, step string) *yaml.Node {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if idx, ok := strings.CutPrefix(step, "["); ok {
		i, err := strconv.Atoi(strings.TrimSuffix(idx, "]"))
		if err != nil || n.Kind != yaml.SequenceNode || i < 0 || i >= len(n.Content) {
			return nil
		}
		return n.Content[i]
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == step {
			return n.Content[i+1]
		}
	}
	return nil
}
