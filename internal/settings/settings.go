// Package settings declares each setting of the command line once: its
// flag, environment variable, configuration-file key, default and check,
// bound to the field of a typed configuration it fills. A command registers
// its table's flags (pflag), then Resolve fills the configuration with the
// precedence flag > environment > configuration file > default, and Check
// reports every invalid value at once. Nothing here knows of exit codes.
package settings

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

// Setting is one setting and every place it is read from.
type Setting struct {
	Flag  string // command-line flag ("" : none)
	Short string // one-letter shorthand of Flag
	Env   string // environment variable ("" : none)
	// Key is the dotted path of the setting in the YAML configuration file
	// ("pipeline.max_calls"; "" : none). Aliases are other paths accepted
	// for it; Key wins over them.
	Key     string
	Aliases []string
	// Path marks a file or directory: a relative path in the configuration
	// file is relative to the file.
	Path bool
	// Negated: the key says the opposite of the flag (idle: false is
	// --no-idle).
	Negated bool
	Usage   string // help text of the flag (the variable is appended)
	Var     Var

	from string // where Resolve took the value from, for messages
}

// Name is how messages name the setting: where its value came from (the
// flag, $VARIABLE or the file's key), else its flag, else its key.
func (s *Setting) Name() string {
	switch {
	case s.from != "":
		return s.from
	case s.Flag != "":
		return "--" + s.Flag
	}
	return s.Key
}

// Source is where Resolve took the value from: the flag, $VARIABLE or the
// file's key ("" : the default).
func (s *Setting) Source() string { return s.from }

// Var is the typed value a setting fills. Build one with String, Int,
// Int64, Bool, Duration or Strings.
type Var interface {
	// Default is the default as text, for help and documentation.
	Default() string
	reset()
	register(fs *pflag.FlagSet, name, short, usage string)
	fromFlag(fs *pflag.FlagSet, name string)
	parse(text string) error
	set(v any) error
	negate()
	check() error
	kind() string
	typ() reflect.Type
	decode(n *yaml.Node, store bool) error
	relative(dir string)
}

// A Check inspects a value and says what is wrong with it (nil: valid). Its
// message follows the setting's name: "must be at least 1, got 0".
type Check[T any] func(T) error

type value[T any] struct {
	p       *T
	def     T
	staged  *T // what the flag parsed into
	checks  []Check[T]
	fmt     func(T) string
	conv    func(string) (T, error)
	flagVar func(fs *pflag.FlagSet, p *T, name, short string, def T, usage string)
}

func (v *value[T]) Default() string { return v.fmt(v.def) }
func (v *value[T]) reset()          { *v.p = v.def }

func (v *value[T]) register(fs *pflag.FlagSet, name, short, usage string) {
	v.staged = new(T)
	v.flagVar(fs, v.staged, name, short, v.def, usage)
}

func (v *value[T]) fromFlag(fs *pflag.FlagSet, name string) {
	if v.staged != nil && fs.Changed(name) {
		*v.p = *v.staged
	}
}

func (v *value[T]) parse(text string) error {
	x, err := v.conv(text)
	if err != nil {
		return err
	}
	*v.p = x
	return nil
}

func (v *value[T]) set(x any) error {
	t, ok := x.(T)
	if !ok {
		return fmt.Errorf("want %s", kind(v.def))
	}
	*v.p = t
	return nil
}

func (v *value[T]) negate() {
	if b, ok := any(v.p).(*bool); ok {
		*b = !*b
	}
}

func (v *value[T]) kind() string      { return kind(v.def) }
func (v *value[T]) typ() reflect.Type { return reflect.TypeFor[T]() }

// decode reads the YAML value n; with store false it only checks it.
func (v *value[T]) decode(n *yaml.Node, store bool) error {
	var x T
	if err := n.Decode(&x); err != nil {
		return err
	}
	if store {
		*v.p = x
	}
	return nil
}

// relative makes a relative path relative to dir.
func (v *value[T]) relative(dir string) {
	if s, ok := any(v.p).(*string); ok && *s != "" && !filepath.IsAbs(*s) {
		*s = filepath.Join(dir, *s)
	}
}

func (v *value[T]) check() error {
	var errs []error
	for _, c := range v.checks {
		errs = append(errs, c(*v.p))
	}
	return errors.Join(errs...)
}

// String binds a string setting to p.
func String(p *string, def string, checks ...Check[string]) Var {
	return &value[string]{p: p, def: def, checks: checks, fmt: func(s string) string { return s },
		conv: func(s string) (string, error) { return s, nil }, flagVar: (*pflag.FlagSet).StringVarP}
}

// Int binds an int setting to p.
func Int(p *int, def int, checks ...Check[int]) Var {
	return &value[int]{p: p, def: def, checks: checks, fmt: strconv.Itoa, conv: strconv.Atoi, flagVar: (*pflag.FlagSet).IntVarP}
}

// Int64 binds an int64 setting to p.
func Int64(p *int64, def int64, checks ...Check[int64]) Var {
	return &value[int64]{p: p, def: def, checks: checks, fmt: func(n int64) string { return strconv.FormatInt(n, 10) },
		conv: func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }, flagVar: (*pflag.FlagSet).Int64VarP}
}

// Bool binds a boolean setting to p.
func Bool(p *bool, def bool) Var {
	return &value[bool]{p: p, def: def, fmt: strconv.FormatBool, conv: strconv.ParseBool, flagVar: (*pflag.FlagSet).BoolVarP}
}

// Float binds a floating-point setting to p.
func Float(p *float64, def float64, checks ...Check[float64]) Var {
	return &value[float64]{p: p, def: def, checks: checks, fmt: func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) },
		conv: func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }, flagVar: (*pflag.FlagSet).Float64VarP}
}

// Duration binds a duration setting to p.
func Duration(p *time.Duration, def time.Duration, checks ...Check[time.Duration]) Var {
	return &value[time.Duration]{p: p, def: def, checks: checks, fmt: time.Duration.String, conv: time.ParseDuration,
		flagVar: (*pflag.FlagSet).DurationVarP}
}

// Strings binds a list setting to p (a repeatable flag; comma-separated in
// the environment).
func Strings(p *[]string, checks ...Check[[]string]) Var {
	return &value[[]string]{p: p, checks: checks, fmt: func(s []string) string { return strings.Join(s, ",") },
		conv: func(s string) ([]string, error) {
			var out []string
			for _, item := range strings.Split(s, ",") {
				if item = strings.TrimSpace(item); item != "" {
					out = append(out, item)
				}
			}
			return out, nil
		},
		flagVar: (*pflag.FlagSet).StringSliceVarP}
}

// YAML binds a configuration-file-only setting of any type YAML decodes
// (a section such as an OAuth2 block) to p; it has no flag nor variable.
func YAML[T any](p *T) Var {
	var zero T
	return &value[T]{p: p, def: zero, fmt: func(T) string { return "" },
		conv: func(string) (T, error) { return zero, errors.New("set only in the configuration file") }}
}

func kind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int, int64:
		return "a whole number"
	case float64:
		return "a number"
	case bool:
		return "true or false"
	case time.Duration:
		return "a duration (e.g. 30s, 5m)"
	case []string:
		return "a list of strings"
	}
	return fmt.Sprintf("%T", v)
}

// AtLeast is a Check: the value is at least min.
func AtLeast[T int | int64](min T) Check[T] {
	return func(v T) error {
		if v < min {
			return fmt.Errorf("must be at least %d, got %d", min, v)
		}
		return nil
	}
}

// NotNegative is a Check: the value is zero or more.
func NotNegative[T int | int64 | time.Duration](v T) error {
	if v < 0 {
		return fmt.Errorf("must not be negative, got %v", v)
	}
	return nil
}

// Positive is a Check: the duration is more than zero.
func Positive(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("must be positive, got %s", d)
	}
	return nil
}

// OneOf is a Check: the value is one of allowed.
func OneOf(allowed ...string) Check[string] {
	return func(v string) error {
		if !slices.Contains(allowed, v) {
			return fmt.Errorf("%q: want %s", v, orList(allowed))
		}
		return nil
	}
}

func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// Table is the settings of one command.
type Table []*Setting

// Register adds a flag for every setting that has one; the help text names
// its environment variable. The flags fill the configuration only through
// Resolve.
func (t Table) Register(fs *pflag.FlagSet) {
	for _, s := range t {
		if s.Flag == "" {
			continue
		}
		usage := s.Usage
		if s.Env != "" {
			usage += " [$" + s.Env + "]"
		}
		s.Var.register(fs, s.Flag, s.Short, usage)
	}
}

// Lookup returns the setting with that flag, or nil.
func (t Table) Lookup(flag string) *Setting {
	for _, s := range t {
		if s.Flag == flag {
			return s
		}
	}
	return nil
}

// Given reports whether the setting was given on the command line or
// through its environment variable (then the configuration file does not
// count).
func (t Table) Given(fs *pflag.FlagSet, flag string, getenv func(string) string) bool {
	s := t.Lookup(flag)
	if s == nil {
		return false
	}
	if fs.Changed(flag) {
		return true
	}
	return s.Env != "" && getenv(s.Env) != ""
}

// Resolve fills every setting: its default, then the configuration file's
// value (file may be nil), then its environment variable, then the flag
// given on the command line. getenv nil is os.Getenv. The error joins every
// value that could not be read (an environment variable of the wrong kind);
// the file's problems are reported by its parser.
func (t Table) Resolve(fs *pflag.FlagSet, file *File, getenv func(string) string) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	var errs []error
	for _, s := range t {
		s.Var.reset()
		s.from = ""
		if file != nil {
			if key := file.apply(s); key != "" {
				s.from = key
			}
		}
		if s.Env != "" {
			if v := getenv(s.Env); v != "" {
				if err := s.Var.parse(v); err != nil {
					errs = append(errs, fmt.Errorf("$%s %q: want %s", s.Env, v, s.Var.kind()))
				}
				s.from = "$" + s.Env
			}
		}
		if s.Flag != "" && fs.Changed(s.Flag) {
			s.Var.fromFlag(fs, s.Flag)
			s.from = "--" + s.Flag
		}
	}
	return errors.Join(errs...)
}

// Check runs every setting's checks and returns all problems joined, each
// starting with the setting's name.
func (t Table) Check() error {
	var errs []error
	for _, s := range t {
		if err := s.Var.check(); err != nil {
			for _, e := range unjoin(err) {
				errs = append(errs, fmt.Errorf("%s %w", s.Name(), e))
			}
		}
	}
	return errors.Join(errs...)
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
