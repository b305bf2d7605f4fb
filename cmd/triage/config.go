package main

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/clients/warranty"
	"triage/internal/decision"
	"triage/internal/instructions"
	"triage/internal/language"
	"triage/internal/model"
	"triage/internal/serial"
)

// defaultConfigPath is where watch, check and ledger look for a
// configuration when neither --config nor $TRIAGE_CONFIG names one.
var defaultConfigPath = "/etc/triage/triage.yaml"

// findConfig returns the configuration file to read and how it was found:
// "--config", "$TRIAGE_CONFIG", or "the default location"; "" when none.
func findConfig(fs *pflag.FlagSet, flagValue string) (path, how string) {
	switch {
	case fs.Changed("config") && flagValue != "":
		return flagValue, "--config"
	case os.Getenv(configEnv) != "": // read again: watch's --env-file may set it
		return os.Getenv(configEnv), "$" + configEnv
	case flagValue != "":
		return flagValue, "--config"
	}
	if _, err := os.Stat(defaultConfigPath); err == nil {
		return defaultConfigPath, "the default location"
	}
	return "", ""
}

// problems collects every configuration problem found before anything is
// created, so one run reports them all.
type problems struct{ errs []error }

func (p *problems) add(format string, a ...any) { p.errs = append(p.errs, fmt.Errorf(format, a...)) }

func (p *problems) addErr(err error) {
	if err == nil {
		return
	}
	var ee *cmdError
	if errors.As(err, &ee) && ee.err != nil {
		err = ee.err
	}
	p.errs = append(p.errs, err)
}

// err is a usage error (exit 2) listing every problem, or nil.
func (p *problems) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	return usageError(errors.Join(p.errs...))
}

// pipelineParts is what checkPipeline validated and loaded; nothing in it
// has created a file or opened a connection.
type pipelineParts struct {
	Scenarios          *instructions.Scenarios
	Tools              *instructions.Tools
	Policy             *decision.Policy
	Lexicon            *decision.Lexicon
	From, Addr, Domain string
	Extractor          *serial.Extractor
	Checker            warranty.Checker
	Faults             []model.Fault
	TicketsHTTP        *tickets.HTTP
	TicketsDB          string // a SQLite file, or the --store URL
	Language           *language.Detector
}

// checkPipeline validates the pipeline settings that need more than their
// own value (pipelineSettings checks those), read-only: the instructions,
// our From, the serial patterns, the warranty registry (the CSV is loaded),
// the ticket store (URL, or the SQLite file's directory) and the offline
// faults. It is the start-up validation of process and watch, and what
// triage check runs.
func checkPipeline(o pipelineOptions, p *problems) *pipelineParts {
	parts := &pipelineParts{}
	var err error
	if ins, err := loadInstructionsFrom(cmp.Or(o.instructionsFlag, "--instructions"), o.Instructions); err != nil {
		p.addErr(err)
	} else {
		parts.Scenarios, parts.Tools, parts.Policy, parts.Lexicon = ins.Scenarios, ins.Tools, ins.Policy, ins.Lexicon
		if parts.Policy, err = parts.Policy.Select(o.Jurisdiction); err != nil {
			p.add("--jurisdiction (pipeline.jurisdiction): %v", err)
		}
	}
	if parts.From, parts.Addr, parts.Domain, err = parseFrom(o.From); err != nil {
		p.addErr(err)
	}
	if parts.Extractor, err = serial.New(o.SerialPattern...); err != nil {
		p.add("--serial-pattern: %v", err)
	}
	if parts.Language, err = language.New(language.Config{Languages: o.Languages, Default: o.DefaultLanguage}); err != nil {
		p.add("--default-language/--languages: %v", err)
	}
	switch {
	case o.WarrantyURL != "":
		if err := checkURL("--warranty-url", o.WarrantyURL); err != nil {
			p.addErr(err)
		} else if parts.Checker, err = warranty.NewHTTP(warranty.HTTPConfig{BaseURL: o.WarrantyURL, Token: o.WarrantyToken}); err != nil {
			p.add("--warranty-url: %v", err)
		}
	case o.WarrantyCSV != "":
		if parts.Checker, err = warranty.LoadCSV(o.WarrantyCSV); err != nil {
			p.add("--warranty-csv: %v", err)
		}
	default:
		p.add("no warranty registry configured: set --warranty-csv FILE (or $TRIAGE_WARRANTY_CSV, or pipeline.warranty_csv in the watch configuration), or --warranty-url URL ($TRIAGE_WARRANTY_URL, pipeline.warranty_url)")
	}
	switch {
	case o.TicketsURL != "":
		if err := checkURL("--tickets-url", o.TicketsURL); err != nil {
			p.addErr(err)
		} else if parts.TicketsHTTP, err = tickets.NewHTTP(tickets.HTTPConfig{BaseURL: o.TicketsURL, Token: o.TicketsToken}); err != nil {
			p.add("--tickets-url: %v", err)
		}
	case o.Store != "":
		parts.TicketsDB = o.Store
	case o.TicketsDB != "":
		if err := checkParentDir("--tickets-db", o.TicketsDB); err != nil && !o.DryRun {
			p.addErr(err)
		}
		parts.TicketsDB = o.TicketsDB
	default:
		p.add("no ticket store configured: set --tickets-db FILE ($TRIAGE_TICKETS_DB, pipeline.tickets_db) or --tickets-url URL ($TRIAGE_TICKETS_URL, pipeline.tickets_url)")
	}
	if msg := o.modelOptions.check(o.Model); msg != "" && !o.Offline {
		p.add("%s", msg)
	}
	if msg := o.Verify.check(o.modelOptions, !o.Offline && o.OfflineFaults == "" && o.options().Live()); msg != "" {
		p.add("%s", msg)
	}
	if parts.Faults, err = model.ParseFaults(o.OfflineFaults); err != nil {
		p.add("--offline-faults: %v", err)
	}
	return parts
}

// checkCredentials refuses a daemon that would answer customers with the
// offline stand-in only because a key is missing: without
// model credentials, the offline model must be asked for explicitly.
func checkCredentials(o pipelineOptions, config string, p *problems) {
	if o.Offline || o.OfflineFaults != "" || o.options().Live() {
		return
	}
	if o.Provider == model.ProviderOpenAI {
		p.add("no model credentials: set OPENAI_API_KEY (or model.api_key_file), or model.base_url for a local server such as Ollama; or set pipeline.offline: true in %s", config)
		return
	}
	p.add("no model credentials: set GEMINI_API_KEY (or GOOGLE_API_KEY, or GOOGLE_GENAI_USE_VERTEXAI with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION) in the environment, e.g. the env file; or set pipeline.offline: true in %s to answer with the built-in offline stand-in on purpose", config)
}

// checkURL accepts an absolute http or https URL with a host. Its messages
// quote the URL without its password and query values (a key there would
// otherwise reach the terminal and the journal).
func checkURL(flag, s string) error {
	name := "" // the settings name the value themselves
	if flag != "" {
		name = flag + " "
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%snot a valid URL (it is not quoted here: it may hold a secret)", name)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s%q: want an http:// or https:// URL with a host", name, redactURL(u))
	}
	return nil
}

// redactURL is u with its password and query values replaced.
func redactURL(u *url.URL) string {
	c := *u
	if _, ok := c.User.Password(); ok {
		c.User = url.UserPassword(c.User.Username(), "redacted")
	}
	if c.RawQuery != "" {
		q := c.Query()
		for k := range q {
			q[k] = []string{"redacted"}
		}
		c.RawQuery = q.Encode()
	}
	return c.String()
}

// checkParentDir accepts a file path whose directory exists (the file itself
// is created later, only once everything is valid).
func checkParentDir(flag, path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("%s %s: directory %s: %v", flag, path, dir, errors.Unwrap(err))
	case !st.IsDir():
		return fmt.Errorf("%s %s: %s is not a directory", flag, path, dir)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s %s: is a directory, want a file", flag, path)
	}
	return nil
}

// checkDirOrParent accepts a directory that exists, or whose parent exists
// (it is created later).
func checkDirOrParent(flag, dir string) error {
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("%s %s: not a directory", flag, dir)
		}
		return nil
	}
	return checkParentDir(flag, dir)
}

// checkHostPort accepts host:port.
func checkHostPort(field, addr string) (host string, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return "", fmt.Errorf("%s %q: want host:port", field, addr)
	}
	return host, nil
}

// checkTLS checks the TLS mode of a server section (default def) for its
// host.
func checkTLS(field, mode, host, def string, p *problems) {
	if err := mail.CheckTLS(mode, host, def); err != nil {
		p.add("%s: %v", field, err)
	}
}
