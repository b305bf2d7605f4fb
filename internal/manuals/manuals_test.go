package manuals_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"triage/internal/manuals"
)

// The shipped sample manuals.
const shipped = "../../examples/manuals"

func load(t *testing.T) *manuals.Library {
	t.Helper()
	lib, err := manuals.Load(shipped)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func TestSearch(t *testing.T) {
	lib := load(t)
	for _, tc := range []struct {
		query, manual, section string // section "" = no hit
	}{
		{"descale", "Aroma 5000", "Descaling"},
		{"How do I descale my kettle?", "Boil Pro", "Descaling the kettle"},
		{"descaling", "Aroma 5000", "Descaling"},
		{"Odkamienianie ekspresu Aroma", "Aroma 5000", "Descaling"},
		{"reset ustawień fabrycznych", "Aroma 5000", "Resetting to factory settings"},
		{"resetting", "Aroma 5000", "Resetting"},
		{"Bluetooth pairing Cyclone", "Cyclone X2", "Bluetooth pairing"},
		{"parowanie bluetooth odkurzacza", "Cyclone X2", "Bluetooth pairing"},
		{"filter", "Boil Pro", "Cleaning the limescale filter"},
		{"xyzzy quux", "", ""},
		{"the and how", "", ""},
	} {
		hits := lib.Search(tc.query, 3)
		if tc.section == "" {
			if len(hits) != 0 {
				t.Errorf("%q: want no hit, got %s / %s", tc.query, hits[0].Manual, hits[0].Heading)
			}
			continue
		}
		if len(hits) == 0 {
			t.Errorf("%q: no hit, want %s / %s", tc.query, tc.manual, tc.section)
			continue
		}
		if !strings.Contains(hits[0].Manual, tc.manual) || !strings.HasPrefix(hits[0].Heading, tc.section) {
			t.Errorf("%q: got %s / %s, want %s / %s", tc.query, hits[0].Manual, hits[0].Heading, tc.manual, tc.section)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "notes.md"), []byte("# Title only\n\nno sections\n"), 0o644)
	for _, dir := range []string{filepath.Join(empty, "missing"), empty} {
		if _, err := manuals.Load(dir); err == nil || !strings.HasPrefix(err.Error(), "manuals: ") {
			t.Errorf("Load(%s) = %v, want a manuals error", dir, err)
		}
	}
}

// The MCP tool, through the SDK's in-memory transport.
func TestSearchManualTool(t *testing.T) {
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := manuals.NewServer(load(t)).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "search_manual", Arguments: map[string]any{"query": "pairing cyclone"}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	out, _ := res.StructuredContent.(map[string]any)
	if res.IsError || !strings.Contains(text, `"CYCLONE-X2"`) || out["found"] != true || out["section"] != "Bluetooth pairing with the Cyclone app (parowanie Bluetooth)" {
		t.Errorf("result: %s %v", text, out)
	}

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "search_manual", Arguments: map[string]any{"query": "zzzz"}})
	if err != nil || res.IsError || res.StructuredContent.(map[string]any)["found"] != false {
		t.Errorf("no match: %v %+v", err, res)
	}
	for _, q := range []string{"", strings.Repeat("x", 600)} {
		res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "search_manual", Arguments: map[string]any{"query": q}})
		if err != nil || !res.IsError {
			t.Errorf("query of %d bytes: want an isError result, got %v %+v", len(q), err, res)
		}
	}
}
