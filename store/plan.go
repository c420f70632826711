package store

import "dalo/store/plan"

// The dispatch plan format lives in package dalo/store/plan, a leaf package,
// so that dispatch reads it without linking the rest of the store (which
// uses the validator and CUE). These aliases keep its names here.

// PlanSchema is the version of the plan format.
const PlanSchema = plan.Schema

type (
	Plan           = plan.Plan
	PlannedHook    = plan.PlannedHook
	PlannedBinding = plan.PlannedBinding
	GrantRef       = plan.GrantRef
	PlannedTool    = plan.PlannedTool
	PlannedInput   = plan.PlannedInput
)
