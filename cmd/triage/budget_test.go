package main

import (
	"context"
	"log/slog"
	"testing"

	"triage/internal/model"
)

// The inboxes of one watch process share one model budget: a pipeline
// given one wraps its model in it rather than making its own, so the
// per-minute limits bind the process, not each inbox.
func TestPipelinesShareTheModelBudget(t *testing.T) {
	ctx := context.Background()
	var o pipelineOptions
	o.RequestsPerMinute = 60
	first := &pipeline{Model: &model.Model{Offline: true}}
	if err := first.limitModel(ctx, o, slog.Default()); err != nil {
		t.Fatal(err)
	}
	if first.budget == nil {
		t.Fatal("a limit set, and no budget made")
	}
	o.budget = first.budget
	second := &pipeline{Model: &model.Model{Offline: true}}
	if err := second.limitModel(ctx, o, slog.Default()); err != nil {
		t.Fatal(err)
	}
	bm, ok := second.Model.Model.(*model.Budgeted)
	if second.budget != first.budget || !ok || bm.Budget != first.budget {
		t.Errorf("the second pipeline's budget is %p (model under %T), want the first's %p", second.budget, second.Model.Model, first.budget)
	}
}
