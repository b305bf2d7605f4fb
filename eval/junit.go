package eval

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// JUnit XML types (the schema CI systems render: Jenkins, GitLab, GitHub
// test reporters).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

// junitText is element text kept readable in the file (CDATA).
type junitText struct {
	Text string `xml:",cdata"`
}

// WriteJUnit writes one testcase per case; a failed case carries a
// <failure> (unmet expectations) or an <error> (the case could not run,
// e.g. a replay mismatch), with every message, a skipped one <skipped/>
// (nothing was checked), and the console detail in <system-out>.
func (rep *Report) WriteJUnit(w io.Writer) error {
	s := junitSuite{
		Name: "triage eval", Time: seconds(rep.DurationMS), Timestamp: rep.Started.UTC().Format(time.RFC3339),
		Properties: []junitProperty{
			{Name: "mode", Value: rep.Mode},
			{Name: "model", Value: rep.Model},
			{Name: "model_description", Value: rep.ModelDescription},
			{Name: "repeat", Value: fmt.Sprint(rep.Repeat)},
			{Name: "pass_rate", Value: fmt.Sprintf("%.1f", rep.PassRate)},
			{Name: "skipped", Value: fmt.Sprint(rep.Skipped)},
			{Name: "model_calls", Value: fmt.Sprint(rep.ModelCalls)},
			{Name: "tokens", Value: fmt.Sprint(rep.Tokens.Total)},
			{Name: "replies", Value: fmt.Sprint(rep.Grounding.Replies)},
			{Name: "claims_checked", Value: fmt.Sprint(rep.Grounding.Claims)},
			{Name: "flagged_claims", Value: fmt.Sprint(rep.Grounding.Flagged)},
		},
	}
	for _, cr := range rep.Cases {
		var ms int64
		for _, r := range cr.Runs {
			ms += r.DurationMS
		}
		jc := junitCase{Name: cr.ID, Classname: classname(cr.Category), File: cr.File, Time: seconds(ms)}
		var out strings.Builder
		WriteCase(&out, cr, false)
		jc.SystemOut = &junitText{Text: out.String()}
		if cr.Skipped {
			jc.Skipped = &junitSkipped{Message: "nothing checked: the case's only checks are rubrics, graded only by a model judge in live runs"}
			s.Skipped++
		}
		if cr.failed() {
			run := cr.shown()
			msg := firstLine(run.Failures)
			if len(cr.Runs) > 1 {
				msg = fmt.Sprintf("%d/%d runs passed: %s", cr.PassedRuns, len(cr.Runs), msg)
			}
			p := &junitProblem{Message: msg, Type: "expectation", Text: strings.Join(run.Failures, "\n")}
			if run.Error != "" {
				p.Type = "error"
				jc.Error = p
				s.Errors++
			} else {
				jc.Failure = p
				s.Failures++
			}
		}
		s.Cases = append(s.Cases, jc)
		s.Tests++
	}
	return writeJUnit(w, junitSuites{Name: "triage eval", Tests: s.Tests, Failures: s.Failures, Errors: s.Errors, Skipped: s.Skipped, Time: s.Time, Suites: []junitSuite{s}})
}

// WriteJUnitLoadError reports invalid case files to CI: one errored
// testcase per file, so a broken case never vanishes from the CI view.
func WriteJUnitLoadError(w io.Writer, le *LoadError) error {
	s := junitSuite{Name: "triage eval", Time: "0"}
	byFile := map[string][]string{}
	var files []string
	for _, p := range le.Problems {
		if _, ok := byFile[p.File]; !ok {
			files = append(files, p.File)
		}
		byFile[p.File] = append(byFile[p.File], p.String())
	}
	for _, f := range files {
		msgs := byFile[f]
		s.Cases = append(s.Cases, junitCase{
			Name: f, Classname: "eval.case_file", File: f, Time: "0",
			Error: &junitProblem{Message: msgs[0], Type: "invalid_case", Text: strings.Join(msgs, "\n")},
		})
		s.Tests++
		s.Errors++
	}
	return writeJUnit(w, junitSuites{Name: "triage eval", Tests: s.Tests, Errors: s.Errors, Time: "0", Suites: []junitSuite{s}})
}

func writeJUnit(w io.Writer, v junitSuites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("eval: junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func classname(category string) string {
	if category == "" {
		return "eval"
	}
	return "eval." + category
}

func firstLine(fs []string) string {
	if len(fs) == 0 {
		return "the case failed"
	}
	if len(fs) > 1 {
		return fmt.Sprintf("%s (and %d more)", fs[0], len(fs)-1)
	}
	return fs[0]
}

func seconds(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }
