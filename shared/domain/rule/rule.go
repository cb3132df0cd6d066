package rule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Operators of a condition.
var Operators = []string{"EQ", "NEQ", "GT", "GTE", "LT", "LTE", "IN", "NIN", "CONTAINS", "EXISTS"}

// Effect types.
const (
	GrantPerk         = "GRANT_PERK"
	AddToSegment      = "ADD_TO_SEGMENT"
	RemoveFromSegment = "REMOVE_FROM_SEGMENT"
)

// EffectTypes lists the effect types.
var EffectTypes = []string{GrantPerk, AddToSegment, RemoveFromSegment}

// Limits of a rule.
const (
	MaxConditions = 20
	MaxEffects    = 10
	maxTitle      = 255
	maxValueBytes = 4096
)

// Sentinel errors of the rule domain.
var (
	ErrNotFound   = apierr.New(apierr.NotFound, "rule not found")
	ErrConcurrent = apierr.New(apierr.Conflict, "the rule was changed by another request; retry")
)

// Condition is one test of an action: the value at path (a dotted path
// into the action: metadata.totalPrice, context.location._id,
// when.daypart) compared by operator with value.
type Condition struct {
	Path     string          `json:"path"`
	Operator string          `json:"operator"`
	Value    json.RawMessage `json:"value,omitempty"`
}

// Effect is what a rule does when it matches.
type Effect struct {
	Type string `json:"type"`
	// PerkID and one of Points (fixed), PointsPerUnit (per unit of the
	// order value, rounded down) and PointsPerItem (per basket item
	// matching the perk's basketQualification) for GRANT_PERK.
	PerkID        string   `json:"perkId,omitempty"`
	Points        *int     `json:"points,omitempty"`
	PointsPerUnit *float64 `json:"pointsPerUnit,omitempty"`
	PointsPerItem *int     `json:"pointsPerItem,omitempty"`
	// SegmentID for ADD_TO_SEGMENT and REMOVE_FROM_SEGMENT.
	SegmentID string `json:"segmentId,omitempty"`
}

// Definition is what an admin writes of a rule.
type Definition struct {
	Title string `json:"title"`
	// Trigger is the action type the rule reacts to (one of
	// TriggerTypes, or a short name of Aliases such as CHECKIN; a rule
	// stored before triggers were checked keeps what it was stored with).
	Trigger    string      `json:"trigger"`
	Conditions []Condition `json:"conditions"`
	Effects    []Effect    `json:"effects"`
}

// Rule is a stored rule as the API returns it.
type Rule struct {
	ID       string `json:"_id"`
	TenantID string `json:"tenantId"`
	Definition
	Enabled   bool   `json:"enabled"`
	Created   string `json:"created"`
	UpdatedAt string `json:"updatedAt"`
}

// Input is the body of POST /rules and PUT /rules/{ruleId}.
type Input struct {
	ID        *string `json:"_id"`
	TenantID  *string `json:"tenantId"`
	Created   *string `json:"created"`
	UpdatedAt *string `json:"updatedAt"`
	Definition
	Enabled *bool `json:"enabled"`
}

var (
	// typePattern and pathPattern are compiled on first use, not at every
	// cold start of the functions that link the rules.
	typePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`) })
	pathPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	})
	// roots are the top-level fields of an action a path may start with.
	roots = []string{"_id", "type", "tenantId", "when", "metadata", "context", "environment"}
)

// Validate checks a definition (the perks and segments it names are
// checked by the service).
func (d *Definition) Validate() error { return d.validate(true) }

// validate checks a definition; its trigger against TriggerTypes when
// known is set (an update that leaves a trigger stored before triggers
// were checked as it is only checks its form).
func (d *Definition) validate(known bool) error {
	d.Title = strings.TrimSpace(d.Title)
	if d.Title == "" {
		return apierr.Invalid("title", "is required (1 to %d characters)", maxTitle)
	}
	if utf8.RuneCountInString(d.Title) > maxTitle {
		return apierr.Invalid("title", "must be 1 to %d characters", maxTitle)
	}
	if d.Trigger == "" {
		return apierr.Invalid("trigger", "is required: an action type such as ORDER_COMPLETED")
	}
	if !typePattern().MatchString(d.Trigger) || len(d.Trigger) > 64 {
		return apierr.Invalid("trigger", "must be an UPPER_SNAKE action type such as ORDER_COMPLETED")
	}
	if known && !IsTrigger(d.Trigger) {
		return apierr.Invalid("trigger", "%s is not an action type the platform records; one of %s (or %s)",
			d.Trigger, strings.Join(TriggerTypes(), ", "), strings.Join(aliasNames(), ", "))
	}
	if d.Conditions == nil {
		d.Conditions = []Condition{}
	}
	if len(d.Conditions) > MaxConditions {
		return apierr.Invalid("conditions", "at most %d", MaxConditions)
	}
	for i := range d.Conditions {
		if err := d.Conditions[i].validate(fmt.Sprintf("conditions[%d]", i)); err != nil {
			return err
		}
	}
	if len(d.Effects) == 0 {
		return apierr.Invalid("effects", "is required: at least one effect")
	}
	if len(d.Effects) > MaxEffects {
		return apierr.Invalid("effects", "at most %d", MaxEffects)
	}
	for i, e := range d.Effects {
		if err := e.validate(fmt.Sprintf("effects[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

// TriggerTypes are the action types a rule may name as its trigger:
// every type the platform records (action.Types) but
// RULES_BUDGET_EXCEEDED, which never runs rules (so a chain that spent its
// budget cannot start another). The short names of Aliases are accepted
// too.
func TriggerTypes() []string {
	return slices.DeleteFunc(slices.Clone(action.Types), func(t string) bool { return t == ActionBudgetExceeded })
}

// IsTrigger tells whether a rule may name trigger: an action type of
// TriggerTypes or a short name of one (CHECKIN).
func IsTrigger(trigger string) bool {
	if to, ok := Aliases[trigger]; ok {
		trigger = to
	}
	return trigger != ActionBudgetExceeded && slices.Contains(action.Types, trigger)
}

// aliasNames are the short trigger names, sorted, each with its type.
func aliasNames() []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(Aliases)) {
		out = append(out, k+" for "+Aliases[k])
	}
	return out
}

func (c *Condition) validate(at string) error {
	if c.Path == "" || len(c.Path) > 200 || !pathPattern().MatchString(c.Path) {
		return apierr.Invalid(at+".path", "must be a dotted path into the action, such as metadata.totalPrice or context.location._id")
	}
	if root, _, _ := strings.Cut(c.Path, "."); !slices.Contains(roots, root) {
		return apierr.Invalid(at+".path", "must start with one of %s", strings.Join(roots, ", "))
	}
	if !slices.Contains(Operators, c.Operator) {
		return apierr.Invalid(at+".operator", "must be one of %s", strings.Join(Operators, ", "))
	}
	raw := bytes.TrimSpace(c.Value)
	if len(raw) > maxValueBytes {
		return apierr.Invalid(at+".value", "must be at most %d bytes of JSON", maxValueBytes)
	}
	if c.Operator == "EXISTS" {
		if len(raw) > 0 && !bytes.Equal(raw, []byte("true")) && !bytes.Equal(raw, []byte("false")) {
			return apierr.Invalid(at+".value", "must be true (present, the default) or false (absent) for EXISTS")
		}
		return nil
	}
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return apierr.Invalid(at+".value", "is required for %s", c.Operator)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return apierr.Invalid(at+".value", "must be JSON")
	}
	switch c.Operator {
	case "IN", "NIN":
		if _, ok := v.([]any); !ok {
			return apierr.Invalid(at+".value", "must be an array for %s", c.Operator)
		}
	case "GT", "GTE", "LT", "LTE":
		switch v.(type) {
		case float64, string:
		default:
			return apierr.Invalid(at+".value", "must be a number or a string for %s", c.Operator)
		}
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, raw)
	c.Value = compact.Bytes()
	return nil
}

func (e Effect) validate(at string) error {
	switch e.Type {
	case GrantPerk:
		if !web.ValidID(e.PerkID) {
			return apierr.Invalid(at+".perkId", "is required: the perk to grant")
		}
		n := 0
		if e.Points != nil {
			n++
			if *e.Points < 1 || *e.Points > 1_000_000_000 {
				return apierr.Invalid(at+".points", "must be an integer from 1 to 1000000000")
			}
		}
		if e.PointsPerUnit != nil {
			n++
			if *e.PointsPerUnit <= 0 || *e.PointsPerUnit > 1_000_000 {
				return apierr.Invalid(at+".pointsPerUnit", "must be a number above 0 and at most 1000000")
			}
		}
		if e.PointsPerItem != nil {
			n++
			if *e.PointsPerItem < 1 || *e.PointsPerItem > 1_000_000 {
				return apierr.Invalid(at+".pointsPerItem", "must be an integer from 1 to 1000000")
			}
		}
		if n != 1 {
			return apierr.Invalid(at, "a GRANT_PERK effect takes exactly one of points, pointsPerUnit and pointsPerItem")
		}
		if e.SegmentID != "" {
			return apierr.Invalid(at+".segmentId", "is only for segment effects")
		}
	case AddToSegment, RemoveFromSegment:
		if !web.ValidID(e.SegmentID) {
			return apierr.Invalid(at+".segmentId", "is required: the segment")
		}
		if e.PerkID != "" || e.Points != nil || e.PointsPerUnit != nil || e.PointsPerItem != nil {
			return apierr.Invalid(at, "a segment effect takes only segmentId")
		}
	case "":
		return apierr.Invalid(at+".type", "is required: %s", strings.Join(EffectTypes, ", "))
	default:
		return apierr.Invalid(at+".type", "must be one of %s", strings.Join(EffectTypes, ", "))
	}
	return nil
}
