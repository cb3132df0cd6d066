package sam

import (
	"fmt"
	"sort"
	"strings"
)

// TableGrant is one DynamoDB action a function's policies allow on one
// table of the template, or on some of its indexes.
type TableGrant struct {
	// Action is the IAM action as the policy writes it ("dynamodb:GetItem",
	// maybe with wildcards: "dynamodb:Get*", "*").
	Action string
	// Table is the table's logical id, or "*" for every table (a
	// Resource of "*").
	Table string
	// Suffix is what the resource adds to the table's ARN, as a pattern:
	// "" for the table itself, "/index/*" for its indexes, "/index/gsi1"
	// for one of them.
	Suffix string
}

// Allows reports whether g allows action ("dynamodb:Query") on the table
// with logical id table, or on its index when index is not empty.
func (g TableGrant) Allows(action, table, index string) bool {
	if !wildcard(strings.ToLower(g.Action), strings.ToLower(action)) {
		return false
	}
	if g.Table != "*" && g.Table != table {
		return false
	}
	suffix := ""
	if index != "" {
		suffix = "/index/" + index
	}
	return wildcard(g.Suffix, suffix)
}

// samDynamoDBPolicies are the actions of SAM's DynamoDB policy templates
// (policy_templates.json of the SAM translator), each granted on the
// table named by TableName and on its indexes.
var samDynamoDBPolicies = map[string][]string{
	"DynamoDBCrudPolicy":  {"GetItem", "DeleteItem", "PutItem", "Scan", "Query", "UpdateItem", "BatchWriteItem", "BatchGetItem", "DescribeTable", "ConditionCheckItem"},
	"DynamoDBReadPolicy":  {"GetItem", "Scan", "Query", "BatchGetItem", "DescribeTable"},
	"DynamoDBWritePolicy": {"PutItem", "UpdateItem", "BatchWriteItem"},
}

// DynamoDBGrants returns what the Allow statements of f's Policies grant
// on the template's DynamoDB tables: inline statements whose resources
// are !GetAtt X.Arn, !Sub "${X.Arn}<suffix>", !Sub "arn:...:table/${X}
// <suffix>" or "*", and SAM's DynamoDB policy templates (DynamoDBCrudPolicy,
// DynamoDBReadPolicy, DynamoDBWritePolicy). Conditions are not evaluated.
// It returns as unread the parts of the policies that may concern DynamoDB
// and that it cannot read (a Deny, NotAction, a resource of another form,
// another DynamoDB policy template or managed policy), so that a check
// built on it does not pass for want of reading them.
func (t *Template) DynamoDBGrants(f Function) (grants []TableGrant, unread []string) {
	props := t.Resources[f.LogicalID].Properties
	var policies []any
	switch p := props["Policies"].(type) {
	case []any:
		policies = p
	case nil:
	default:
		policies = []any{p}
	}
	for _, p := range policies {
		switch p := p.(type) {
		case string:
			if strings.Contains(strings.ToLower(p), "dynamodb") {
				unread = append(unread, "managed policy "+p)
			}
		case map[string]any:
			if st, ok := p["Statement"]; ok {
				g, u := statementGrants(st)
				grants, unread = append(grants, g...), append(unread, u...)
				continue
			}
			for _, name := range sortedNames(p) {
				actions, ok := samDynamoDBPolicies[name]
				table := ref(mapOr(p[name])["TableName"])
				switch {
				case ok && table != "":
					for _, a := range actions {
						grants = append(grants, TableGrant{Action: "dynamodb:" + a, Table: table}, TableGrant{Action: "dynamodb:" + a, Table: table, Suffix: "/index/*"})
					}
				case strings.Contains(strings.ToLower(name), "dynamodb"):
					unread = append(unread, fmt.Sprintf("policy template %s %v", name, p[name]))
				}
			}
		default:
			unread = append(unread, fmt.Sprintf("policy %v", p))
		}
	}
	return grants, unread
}

// statementGrants reads a policy document's Statement (one statement or a
// list).
func statementGrants(v any) (grants []TableGrant, unread []string) {
	var sts []any
	switch s := v.(type) {
	case []any:
		sts = s
	default:
		sts = []any{s}
	}
	for _, s := range sts {
		st := mapOr(s)
		if _, ok := st["NotAction"]; ok {
			unread = append(unread, fmt.Sprintf("statement with NotAction %v", st["NotAction"]))
			continue
		}
		var actions []string
		for _, a := range strings1(st["Action"]) {
			if la := strings.ToLower(a); strings.HasPrefix(la, "dynamodb:") || la == "*" {
				actions = append(actions, a)
			}
		}
		if len(actions) == 0 {
			continue
		}
		if str(st["Effect"]) != "Allow" {
			unread = append(unread, fmt.Sprintf("%s statement on %v", str(st["Effect"]), actions))
			continue
		}
		if _, ok := st["NotResource"]; ok {
			unread = append(unread, fmt.Sprintf("statement with NotResource %v", st["NotResource"]))
			continue
		}
		res, ok := st["Resource"].([]any)
		if !ok {
			res = []any{st["Resource"]}
		}
		for _, r := range res {
			table, suffix, ok := tableResource(r)
			if !ok {
				unread = append(unread, fmt.Sprintf("resource %v of %v", r, actions))
				continue
			}
			if table == "" {
				continue // a stream's ARN: no table access
			}
			for _, a := range actions {
				grants = append(grants, TableGrant{Action: a, Table: table, Suffix: suffix})
			}
		}
	}
	return grants, unread
}

// tableResource reads a statement's resource as a table's logical id and
// the suffix added to its ARN. A stream's ARN (!GetAtt X.StreamArn) gives
// an empty table; ok is false for a form it does not know.
func tableResource(r any) (table, suffix string, ok bool) {
	if s, isStr := r.(string); isStr {
		if s == "*" {
			return "*", "*", true
		}
		return "", "", false
	}
	m := mapOr(r)
	if att, has := m["Fn::GetAtt"]; has {
		id, attr := "", ""
		switch a := att.(type) {
		case string:
			id, attr, _ = strings.Cut(a, ".")
		case []any:
			if len(a) == 2 {
				id, attr = str(a[0]), str(a[1])
			}
		}
		switch attr {
		case "Arn":
			return id, "", id != ""
		case "StreamArn", "LatestStreamArn":
			return "", "", true
		}
		return "", "", false
	}
	s, isStr := m["Fn::Sub"].(string)
	if !isStr {
		return "", "", false
	}
	if strings.HasPrefix(s, "${") {
		ref, rest, found := strings.Cut(s[2:], "}")
		if id, ok := strings.CutSuffix(ref, ".Arn"); found && ok && !strings.Contains(rest, "${") {
			return id, rest, true
		}
		if _, ok := strings.CutSuffix(ref, ".StreamArn"); found && ok {
			return "", "", true
		}
		return "", "", false
	}
	// arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${X}<suffix>
	const prefix = "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${"
	if rest, found := strings.CutPrefix(s, prefix); found {
		id, suffix, found := strings.Cut(rest, "}")
		if found && !strings.Contains(id, ".") && !strings.Contains(suffix, "${") && !strings.HasPrefix(suffix, "/stream/") {
			return id, suffix, true
		}
	}
	return "", "", false
}

// wildcard matches s against an IAM pattern: * is any run of characters
// (slashes too), ? any one character.
func wildcard(pattern, s string) bool {
	for len(pattern) > 0 {
		switch pattern[0] {
		case '*':
			for i := len(s); i >= 0; i-- {
				if wildcard(pattern[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
		default:
			if s == "" || s[0] != pattern[0] {
				return false
			}
		}
		pattern, s = pattern[1:], s[1:]
	}
	return s == ""
}

// strings1 reads a scalar or a list of scalars.
func strings1(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			out = append(out, str(x))
		}
		return out
	}
	return nil
}

func mapOr(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func sortedNames(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
