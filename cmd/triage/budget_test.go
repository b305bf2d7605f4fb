package main

import (
	"context"
	"log/slog"
	"testing"
)

// The inboxes of one watch process share one model budget: a pipeline
// given one runs its model under it rather than making its own, so the
// per-minute limits bind the process, not each inbox (processor.Build puts
// the model under it).
func TestPipelinesShareTheModelBudget(t *testing.T) {
	ctx := context.Background()
	var o pipelineOptions
	o.RequestsPerMinute = 60
	first := &pipeline{}
	if err := first.limitModel(ctx, o, true, slog.Default()); err != nil {
		t.Fatal(err)
	}
	if first.budget == nil {
		t.Fatal("a limit set, and no budget made")
	}
	o.budget = first.budget
	second := &pipeline{}
	if err := second.limitModel(ctx, o, true, slog.Default()); err != nil {
		t.Fatal(err)
	}
	if second.budget != first.budget {
		t.Errorf("the second pipeline's budget is %p, want the first's %p", second.budget, first.budget)
	}
	var none pipeline
	if err := none.limitModel(ctx, pipelineOptions{}, true, slog.Default()); err != nil || none.budget != nil {
		t.Errorf("offline without a limit: budget %p, err %v; want none", none.budget, err)
	}
}
