package lint

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
)

// StoreActions are the requests the DynamoDB store sends (PutItem also
// covers the record's Put inside a TransactWriteItems; DescribeTable is
// sent once per cold start, to refuse a global table that cannot keep the
// guarantee): what a function needs on its idempotency table, and all it
// needs.
var StoreActions = []string{"dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:DeleteItem", "dynamodb:DescribeTable"}

// storeAction reports whether a is one of StoreActions: IAM action names
// are case-insensitive.
func storeAction(a string) bool {
	return slices.ContainsFunc(StoreActions, func(s string) bool { return strings.EqualFold(s, a) })
}

// policyTemplates are the actions that SAM's DynamoDB policy templates
// grant on their TableName; another DynamoDB template counts as
// dynamodb:*.
var policyTemplates = map[string][]string{
	"DynamoDBCrudPolicy":  {"dynamodb:GetItem", "dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:Scan", "dynamodb:Query", "dynamodb:UpdateItem", "dynamodb:BatchWriteItem", "dynamodb:BatchGetItem", "dynamodb:DescribeTable", "dynamodb:ConditionCheckItem"},
	"DynamoDBReadPolicy":  {"dynamodb:GetItem", "dynamodb:Scan", "dynamodb:Query", "dynamodb:BatchGetItem", "dynamodb:DescribeTable"},
	"DynamoDBWritePolicy": {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:BatchWriteItem"},
	// On the table's stream, not on its items.
	"DynamoDBStreamReadPolicy": nil,
}

// checkTable checks that the idempotency table id expires its records,
// and, for a global table, that its Regions keep the guarantee.
func (c *checker) checkTable(id string) {
	r := c.t.Resource(id)
	if r.Type == "AWS::DynamoDB::GlobalTable" {
		mode, _ := c.t.String(r.Prop("MultiRegionConsistency"))
		if mode == "STRONG" {
			// "Global tables configured for multi-Region strong
			// consistency (MRSC) do not support configuring Time To
			// Live (TTL) deletion" (V2globaltables_HowItWorks.html): the
			// records stay, and the store ignores the expired ones.
			return
		}
		if len(template.Items(r.Prop("Replicas"))) > 1 {
			c.add(id, RuleGlobalTable,
				"set MultiRegionConsistency: STRONG (three Regions: two replicas and a GlobalTableWitnesses entry, or three replicas; no TTL), or keep the records in a table of one Region; if only one Region ever writes it, set dynamo.Options.AcceptEventualGlobalTable in the function's code.",
				"it is a global table in multi-Region eventual consistency (MultiRegionConsistency %s) with replicas in several Regions: each Region decides the store's conditional writes on its own replica, so a duplicate delivered in another Region before the record replicates runs the effect again. The DynamoDB store refuses such a table at its first invocation unless AcceptEventualGlobalTable is set (docs/multi-region.md).",
				cmp.Or(mode, "EVENTUAL, the default"))
		}
	}
	ttl := r.Prop("TimeToLiveSpecification")
	attr, _ := c.t.String(template.Lookup(ttl, "AttributeName"))
	enabled, _ := c.t.Bool(template.Lookup(ttl, "Enabled"))
	if attr != ExpiryAttr || !enabled {
		state := "no TTL"
		switch {
		case attr != "" && attr != ExpiryAttr:
			state = fmt.Sprintf("TTL on the attribute %q", attr)
		case attr != "":
			state = "TTL switched off"
		}
		c.add(id, RuleTableTTL,
			fmt.Sprintf("set TimeToLiveSpecification: {AttributeName: %s, Enabled: true}.", ExpiryAttr),
			"it holds idempotency records but has %s, while the store writes each record's expiry to %q: expired records are never deleted, and the table grows forever.", state, ExpiryAttr)
	}
}

// grant is what one statement, policy template or managed policy allows,
// as far as the access rule is concerned.
type grant struct {
	actions []string // as written; may hold wildcards
	tables  []string // the logical IDs of the tables it is on
	all     bool     // on every table
	from    string   // where it is given
}

// on reports whether g applies to the table id.
func (g grant) on(id string) bool { return g.all || slices.Contains(g.tables, id) }

// checkAccess checks that fn may send the store's requests to table, and
// nothing more.
func (c *checker) checkAccess(fn *template.Function, table string) {
	grants := c.grants(fn)
	var missing, excess []string
	for _, a := range StoreActions {
		if !slices.ContainsFunc(grants, func(g grant) bool { return g.on(table) && g.allows(a) }) {
			missing = append(missing, a)
		}
	}
	for _, g := range grants {
		if !g.on(table) {
			continue
		}
		for _, a := range g.actions {
			if a != "*" && !strings.HasPrefix(strings.ToLower(a), "dynamodb:") {
				continue
			}
			switch {
			case !storeAction(a):
				excess = append(excess, fmt.Sprintf("%s (%s)", a, g.from))
			case g.all:
				excess = append(excess, fmt.Sprintf("%s on every table (%s)", a, g.from))
			}
		}
	}
	fix := fmt.Sprintf("grant exactly dynamodb:PutItem, dynamodb:GetItem, dynamodb:DeleteItem and dynamodb:DescribeTable on !GetAtt %s.Arn, in a statement of its own.", table)
	if len(missing) > 0 {
		c.add(fn.ID, RuleTableAccess, fix,
			"it may not send %s to its idempotency table %s: the store's requests fail with AccessDeniedException, and every invocation fails.", strings.Join(missing, ", "), table)
	}
	if len(excess) > 0 {
		c.add(fn.ID, RuleTableAccess, fix,
			"it may do more with its idempotency table %s than the store needs: %s. A bug or a stolen credential could then read every stored response, or rewrite a record to replay a forged one.", table, strings.Join(excess, ", "))
	}
}

// allows reports whether g allows the action a, whose case does not
// matter.
func (g grant) allows(a string) bool {
	return slices.ContainsFunc(g.actions, func(p string) bool {
		ok, _ := path.Match(strings.ToLower(p), strings.ToLower(a))
		return ok
	})
}

// grants returns what fn's permissions allow, wherever the template gives
// them: a SAM function's Policies, or its role (its Role, or the one SAM
// makes for it, <ID>Role), that role's inline and managed policies, and
// the AWS::IAM::Policy and AWS::IAM::ManagedPolicy resources attached to
// it.
func (c *checker) grants(fn *template.Function) []grant {
	var out []grant
	role, _ := c.t.Ref(fn.Prop("Role"))
	if fn.Prop("Role") == nil && fn.Type == template.ServerlessFunction {
		role = fn.ID + "Role"
		for _, p := range template.Items(fn.Resource.Prop("Policies")) {
			out = append(out, c.policy(p, "its Policies")...)
		}
	}
	r := c.t.Resource(role)
	if r != nil && r.Type == "AWS::IAM::Role" {
		for _, p := range template.Items(r.Prop("Policies")) {
			out = append(out, c.document(template.Lookup(p, "PolicyDocument"), "role "+role)...)
		}
		for _, p := range template.Items(r.Prop("ManagedPolicyArns")) {
			out = append(out, c.policy(p, "role "+role)...)
		}
	}
	for _, id := range c.t.IDs {
		p := c.t.Resource(id)
		if p.Type != "AWS::IAM::Policy" && p.Type != "AWS::IAM::ManagedPolicy" {
			continue
		}
		if slices.ContainsFunc(template.Items(p.Prop("Roles")), func(n *yaml.Node) bool {
			return role != "" && template.RefName(n) == role
		}) {
			out = append(out, c.document(p.Prop("PolicyDocument"), id)...)
		}
	}
	return out
}

// policy reads one entry of SAM's Policies (or a role's
// ManagedPolicyArns): a policy document, a policy template, a managed
// policy by name or ARN, or a reference to an AWS::IAM::ManagedPolicy.
func (c *checker) policy(p *yaml.Node, from string) []grant {
	if id, _ := c.t.Ref(p); id != "" {
		if r := c.t.Resource(id); r.Type == "AWS::IAM::ManagedPolicy" {
			return c.document(r.Prop("PolicyDocument"), id)
		}
		return nil
	}
	if name, ok := c.t.String(p); ok {
		// An AWS managed policy: any about DynamoDB is broader than the
		// store needs, and none is about one table.
		if strings.Contains(strings.ToLower(name), "dynamodb") {
			return []grant{{actions: []string{"dynamodb:*"}, all: true, from: "managed policy " + name}}
		}
		return nil
	}
	if template.Lookup(p, "Statement") != nil {
		return c.document(p, from)
	}
	keys, values := template.Entries(p)
	if len(keys) != 1 || !strings.HasPrefix(keys[0], "DynamoDB") {
		return nil
	}
	actions, known := policyTemplates[keys[0]]
	if !known {
		actions = []string{"dynamodb:*"}
	}
	g := grant{actions: actions, from: keys[0] + " in " + from}
	if id, _ := c.t.Ref(template.Lookup(values[0], "TableName")); id != "" {
		g.tables = []string{id}
	}
	return []grant{g}
}

// document reads the Allow statements of a policy document.
func (c *checker) document(doc *yaml.Node, from string) []grant {
	var out []grant
	for _, st := range template.Items(template.Lookup(doc, "Statement")) {
		if effect, _ := c.t.String(template.Lookup(st, "Effect")); effect != "Allow" {
			continue
		}
		g := grant{from: from}
		if template.Lookup(st, "NotAction") != nil {
			g.actions = []string{"*"}
		}
		for _, a := range template.Items(template.Lookup(st, "Action")) {
			if s, ok := c.t.String(a); ok {
				g.actions = append(g.actions, s)
			}
		}
		if template.Lookup(st, "NotResource") != nil {
			g.all = true
		}
		for _, r := range template.Items(template.Lookup(st, "Resource")) {
			c.resource(r, &g)
		}
		out = append(out, g)
	}
	return out
}

// resource notes in g the table of the template that the statement
// resource r is (a reference, or an Fn::Sub of its name or ARN), or that
// it is every table (a wildcard).
func (c *checker) resource(r *yaml.Node, g *grant) {
	if id, _ := c.t.Ref(r); id != "" {
		g.tables = append(g.tables, id)
		return
	}
	s, ok := c.t.String(r)
	if !ok {
		s, ok = c.t.Sub(r)
	}
	if !ok {
		return
	}
	table := s
	if i := strings.LastIndex(s, ":table/"); i >= 0 {
		table = s[i+len(":table/"):]
	}
	if strings.HasPrefix(table, "*") {
		g.all = true
		return
	}
	// arn:...:table/${IdempotencyTable}, ${IdempotencyTable.Arn}
	for _, v := range subVariables(table) {
		id, _, _ := strings.Cut(v, ".")
		if r := c.t.Resource(id); r != nil && template.IsTable(r.Type) {
			g.tables = append(g.tables, id)
		}
	}
}

// subVariables returns the names inside ${} in an Fn::Sub string.
func subVariables(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return out
		}
		j := strings.Index(s[i:], "}")
		if j < 0 {
			return out
		}
		out = append(out, s[i+2:i+j])
		s = s[i+j+1:]
	}
}
