package instructions

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"triage/internal/clients/httpapi"
)

// Check validates the bindings against the scenarios: every declared
// function has a binding, every scenario declares exactly one final function, and
// every policy names parameters the function really declares (args, same,
// URL placeholders), in every scenario that declares it; a required call
// must be declared beside the function that requires it. All problems are
// reported at once.
func (s *Tools) Check(ss *Scenarios) error {
	var errs []error
	seen := map[string]bool{}
	add := func(err error) {
		if !seen[err.Error()] {
			seen[err.Error()] = true
			errs = append(errs, err)
		}
	}
	var finals []string
	for _, name := range s.Names() {
		if s.Tools[name].Final {
			finals = append(finals, name)
		}
	}
	for _, sc := range ss.Scenarios {
		var scFinals []string
		for i := range sc.Functions {
			fn := &sc.Functions[i]
			t := s.Get(fn.Name)
			if t == nil {
				add(fmt.Errorf("tools: %s: available_functions[%d].name: %q has no binding in %s (bound: %s)",
					sc.File, i, fn.Name, s.File, strings.Join(s.Names(), ", ")))
				continue
			}
			if t.Final {
				scFinals = append(scFinals, fn.Name)
			}
			bad := func(field, format string, a ...any) {
				add(fmt.Errorf("tools: %s: %s: %s: %s", s.File, t.Name, field, fmt.Sprintf(format, a...)))
			}
			params := Parameters(fn)
			notParam := func(field, arg string) {
				bad(field, "%q is not a parameter of %s as declared in %s (parameters: %s)",
					arg, fn.Name, sc.File, strings.Join(params, ", "))
			}
			for _, a := range slices.Sorted(maps.Keys(t.Args)) {
				if !slices.Contains(params, a) {
					notParam("args."+a, a)
				}
			}
			if t.Prefetch {
				for _, a := range params {
					if t.Args[a] == nil {
						bad("prefetch", "parameter %s of %s (as declared in %s) has no from: policy here, so the pipeline cannot fill it before the model runs; give it one (%s), or remove prefetch",
							a, fn.Name, sc.File, strings.Join(PrefetchFroms, ", "))
					}
				}
			}
			if t.Commitments != nil && slices.Contains(params, CommitmentsParam) {
				for _, c := range commitmentEnum(fn) {
					if !slices.Contains(t.Commitments, c) {
						add(fmt.Errorf("tools: %s: available_functions[%d].parameters.properties.%s: %q is not among the commitments %s declares for %s (%s)",
							sc.File, i, CommitmentsParam, c, s.File, fn.Name, strings.Join(t.Commitments, ", ")))
					}
				}
			}
			if t.HTTP != nil {
				for _, p := range httpapi.Placeholders(t.HTTP.URL) {
					if !slices.Contains(params, p) {
						notParam("http.url", p)
					}
				}
			}
			for ri, r := range t.Requires {
				other := sc.Function(r.Call)
				if other == nil && r.IfDeclared {
					continue // applies only where the scenario declares it
				}
				if other == nil {
					bad(fmt.Sprintf("requires[%d].call", ri), "%s is not declared in %s, which declares %s: the requirement could never be met",
						r.Call, sc.File, fn.Name)
					continue
				}
				otherParams := Parameters(other)
				for j, a := range r.Same {
					f := fmt.Sprintf("requires[%d].same[%d]", ri, j)
					if !slices.Contains(params, a) {
						notParam(f, a)
					}
					if !slices.Contains(otherParams, a) {
						bad(f, "%q is not a parameter of %s as declared in %s (parameters: %s)",
							a, other.Name, sc.File, strings.Join(otherParams, ", "))
					}
				}
			}
		}
		if sc.PromisesPerson && len(scFinals) == 1 && !s.waitsFor(scFinals[0], NotifyStaff, sc) {
			add(fmt.Errorf("tools: %s: promises_person: the final function %s does not require %s in %s, so the customer could be promised a person before staff are told (add requires: [{call: %s, if_declared: true}] to %s)",
				sc.File, scFinals[0], NotifyStaff, s.File, NotifyStaff, scFinals[0]))
		}
		switch {
		case len(scFinals) == 0:
			add(fmt.Errorf("tools: %s: available_functions: declares no final function (final in %s: %s); every email must end with one",
				sc.File, s.File, orNone(finals)))
		case len(scFinals) > 1:
			add(fmt.Errorf("tools: %s: available_functions: declares %d final functions (%s); exactly one may mean the email is handled",
				sc.File, len(scFinals), strings.Join(scFinals, ", ")))
		}
	}
	return errors.Join(errs...)
}

// waitsFor reports whether the binding of name requires an earlier
// successful call of other in scenario sc.
func (s *Tools) waitsFor(name, other string, sc *Scenario) bool {
	t := s.Get(name)
	if t == nil || sc.Function(other) == nil {
		return false
	}
	for _, r := range t.Requires {
		if r.Call == other {
			return true
		}
	}
	return false
}

// Final reports whether name is bound as a final function.
func (s *Tools) Final(name string) bool {
	t := s.Get(name)
	return t != nil && t.Final
}

// FinalOf returns the final function sc declares ("" when none; Check
// guarantees exactly one).
func (s *Tools) FinalOf(sc *Scenario) string {
	for _, f := range sc.Functions {
		if s.Final(f.Name) {
			return f.Name
		}
	}
	return ""
}

// Parameters lists the declared parameter names of fn, sorted.
func Parameters(fn *Function) []string {
	props, _ := fn.Parameters["properties"].(map[string]any)
	return slices.Sorted(maps.Keys(props))
}

// commitmentEnum is the enum of the items of fn's commitments parameter.
func commitmentEnum(fn *Function) []string {
	props, _ := fn.Parameters["properties"].(map[string]any)
	p, _ := props[CommitmentsParam].(map[string]any)
	items, _ := p["items"].(map[string]any)
	enum, _ := items["enum"].([]any)
	var out []string
	for _, e := range enum {
		out = append(out, fmt.Sprint(e))
	}
	return out
}

// Declares reports whether fn declares the parameter param.
func Declares(fn *Function, param string) bool {
	props, _ := fn.Parameters["properties"].(map[string]any)
	_, ok := props[param]
	return ok
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
