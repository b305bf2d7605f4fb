package settings

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"triage/internal/instructions"
)

// File is a YAML configuration file read against a Table.
type File struct {
	Path   string
	values map[string]*yaml.Node // by dotted key
}

// ParseFile reads the YAML configuration data (from path, which relative
// paths in it are relative to) against the table's keys. Every unknown key
// and every value of the wrong kind is reported at once, each with its line:
// `line 3: unknown field "warranty_cvs" in pipeline; valid: deadline, ...`.
func ParseFile(path string, data []byte, t Table) (*File, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return &File{Path: path, values: map[string]*yaml.Node{}}, nil
	}
	return ParseNode(path, doc.Content[0], t)
}

// ParseNode is ParseFile for a part of a file already parsed: a mapping
// read against its own table (one entry of a list of sections, such as one
// inbox of several). Its problems name the lines of the file at path.
func ParseNode(path string, root *yaml.Node, t Table) (*File, error) {
	f := &File{Path: path, values: map[string]*yaml.Node{}}
	byKey := map[string]*Setting{}
	for _, s := range t {
		for _, k := range append([]string{s.Key}, s.Aliases...) {
			if k != "" {
				byKey[k] = s
			}
		}
	}
	var problems []string
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		if n.Kind != yaml.MappingNode {
			where := "the file"
			if prefix != "" {
				where = prefix
			}
			problems = append(problems, fmt.Sprintf("line %d: %s: want a section of key: value settings, got %s", n.Line, where, instructions.DescribeYAML(n)))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key := k.Value
			if prefix != "" {
				key = prefix + "." + k.Value
			}
			if s, ok := byKey[key]; ok {
				if v.Tag == "!!null" {
					continue
				}
				if p := instructions.CheckYAMLValue(v, s.Var.typ(), key); len(p) > 0 {
					problems = append(problems, p...)
					continue
				}
				if err := s.Var.decode(v, false); err != nil { // a type that decodes itself
					problems = append(problems, fmt.Sprintf("line %d: %s: %v", v.Line, key, err))
					continue
				}
				f.values[key] = v
				continue
			}
			if children(byKey, key) != nil {
				if v.Tag != "!!null" {
					walk(v, key)
				}
				continue
			}
			in := ""
			if prefix != "" {
				in = " in " + prefix
			}
			problems = append(problems, fmt.Sprintf("line %d: unknown field %q%s; valid: %s", k.Line, k.Value, in,
				strings.Join(children(byKey, prefix), ", ")))
		}
	}
	walk(root, "")
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return f, nil
}

// children lists the names directly under the section prefix ("" : the
// top level), sorted; nil when prefix is no section.
func children(byKey map[string]*Setting, prefix string) []string {
	var out []string
	for k := range byKey {
		rest, ok := k, prefix == ""
		if !ok {
			rest, ok = strings.CutPrefix(k, prefix+".")
		}
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, ".")
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Has reports whether the file sets the key.
func (f *File) Has(key string) bool {
	if f == nil {
		return false
	}
	_, ok := f.values[key]
	return ok
}

// apply sets s from the file, when the file has its key (or an alias), and
// returns the key it was read from ("" : none).
func (f *File) apply(s *Setting) (from string) {
	for _, k := range slices.Backward(append([]string{s.Key}, s.Aliases...)) {
		n, ok := f.values[k]
		if !ok || k == "" {
			continue
		}
		// Key comes first and is applied last: it wins over the aliases.
		_ = s.Var.decode(n, true) // checked by ParseFile
		if s.Negated {
			s.Var.negate()
		}
		if s.Path {
			s.Var.relative(filepath.Dir(f.Path))
		}
		from = k
	}
	return from
}

// Apply sets the settings of t the file has and leaves the others as they
// are, with no flag, variable or default in play: the file overrides values
// already resolved (one inbox's settings over the shared ones).
func (t Table) Apply(file *File) {
	for _, s := range t {
		if key := file.apply(s); key != "" {
			s.from = key
		}
	}
}
