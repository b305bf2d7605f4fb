package instructions

// Strict YAML: DecodeYAML decodes YAML into Go structs strictly and readably:
// every unknown key and every value of the wrong kind is reported at once,
// each with its line, the key's path and (for unknown keys) the valid keys,
// never with a Go type name.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// YAMLError lists every problem found in one document.
type YAMLError struct {
	Problems []string // "line N: ...", in document order
}

func (e *YAMLError) Error() string { return strings.Join(e.Problems, "\n") }

// DecodeYAML decodes the YAML document data into v (a pointer to a struct).
// Unknown keys (`line 3: unknown field "warranty_cvs" in pipeline; valid:
// deadline, from, ...`) and values of the wrong kind (`line 5:
// pipeline.deadline: "soon" is not a duration (e.g. 30s, 5m)`) are returned
// together as a *YAMLError. An empty document leaves v unchanged.
func DecodeYAML(data []byte, v any) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer {
		return errors.New("instructions: DecodeYAML needs a pointer")
	}
	var c checker
	c.check(doc.Content[0], rv.Type().Elem(), "")
	if len(c.problems) > 0 {
		return &YAMLError{Problems: c.problems}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return errors.New(strings.TrimPrefix(err.Error(), "yaml: ")) // not expected after check
	}
	return nil
}

// CheckYAMLValue compares the YAML value n at the dotted key path with the Go
// type t and returns its problems, worded as DecodeYAML words them (`line 5:
// pipeline.deadline: "soon" is not a duration (e.g. 30s, 5m)`).
func CheckYAMLValue(n *yaml.Node, t reflect.Type, path string) []string {
	var c checker
	c.check(n, t, path)
	return c.problems
}

type checker struct{ problems []string }

func (c *checker) add(n *yaml.Node, path, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if path != "" {
		msg = path + ": " + msg
	}
	c.problems = append(c.problems, fmt.Sprintf("line %d: %s", n.Line, msg))
}

var durationType = reflect.TypeFor[time.Duration]()

// check compares node n with type t; path is the dotted key path.
func (c *checker) check(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // an empty value leaves the default
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(reflect.TypeFor[yaml.Unmarshaler]()) || reflect.PointerTo(t).Implements(reflect.TypeFor[yaml.Unmarshaler]()) {
		return // decodes itself
	}
	switch {
	case t == durationType:
		if n.Kind != yaml.ScalarNode {
			c.add(n, path, "want a duration (e.g. 30s, 5m)")
		} else if _, err := time.ParseDuration(n.Value); err != nil {
			c.add(n, path, "%q is not a duration (e.g. 30s, 5m)", n.Value)
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			c.add(n, path, "want a section of key: value settings, got %s", DescribeYAML(n))
			return
		}
		fields := map[string]reflect.Type{}
		collectFields(t, fields)
		valid := make([]string, 0, len(fields))
		for k := range fields {
			valid = append(valid, k)
		}
		slices.Sort(valid)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			ft, ok := fields[k.Value]
			if !ok {
				where := ""
				if path != "" {
					where = " in " + path
				}
				c.problems = append(c.problems, fmt.Sprintf("line %d: unknown field %q%s; valid: %s", k.Line, k.Value, where, strings.Join(valid, ", ")))
				continue
			}
			c.check(v, ft, join(path, k.Value))
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			c.add(n, path, "want key: value pairs, got %s", DescribeYAML(n))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			c.check(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value))
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			c.add(n, path, "want a list, got %s", DescribeYAML(n))
			return
		}
		for i, e := range n.Content {
			c.check(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			c.add(n, path, "want a single value, got %s", DescribeYAML(n))
		}
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
			c.add(n, path, "%s is not true or false", DescribeYAML(n))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n.Kind != yaml.ScalarNode {
			c.add(n, path, "want a whole number, got %s", DescribeYAML(n))
		} else if _, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, t.Bits()); err != nil {
			c.add(n, path, "%q is not a whole number", n.Value)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind != yaml.ScalarNode {
			c.add(n, path, "want a whole number, got %s", DescribeYAML(n))
		} else if _, err := strconv.ParseUint(strings.ReplaceAll(n.Value, "_", ""), 0, t.Bits()); err != nil {
			c.add(n, path, "%q is not a non-negative whole number", n.Value)
		}
	case reflect.Float32, reflect.Float64:
		var f float64
		if n.Kind != yaml.ScalarNode || n.Decode(&f) != nil {
			c.add(n, path, "%s is not a number", DescribeYAML(n))
		}
	}
}

// collectFields maps the YAML keys of struct t to their types, following
// inline fields.
func collectFields(t reflect.Type, out map[string]reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(","+opts+",", ",inline,") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				collectFields(ft, out)
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name) // yaml.v3's default
		}
		out[name] = f.Type
	}
}

// DescribeYAML names a YAML value in a message: "a section", "a list", or the
// quoted scalar.
func DescribeYAML(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a section"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
