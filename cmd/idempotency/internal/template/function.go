package template

import (
	"gopkg.in/yaml.v3"
)

// Resource types of functions.
const (
	ServerlessFunction = "AWS::Serverless::Function"
	LambdaFunction     = "AWS::Lambda::Function"
)

// defaultTimeout is Lambda's, in seconds, for a function that sets none.
const defaultTimeout = 3

// Function is a function resource, with SAM's Globals applied to an
// AWS::Serverless::Function.
type Function struct {
	*Resource
	t *Template
}

// Function returns the function resource id, or nil when id is not a
// function of the template.
func (t *Template) Function(id string) *Function {
	r := t.resources[id]
	if r == nil || (r.Type != ServerlessFunction && r.Type != LambdaFunction) {
		return nil
	}
	return &Function{Resource: r, t: t}
}

// Functions returns the template's functions, in its order.
func (t *Template) Functions() []*Function {
	var fns []*Function
	for _, id := range t.IDs {
		if f := t.Function(id); f != nil {
			fns = append(fns, f)
		}
	}
	return fns
}

// Prop follows keys through the function's Properties, then through
// Globals.Function for a SAM function; nil when neither has them.
func (f *Function) Prop(keys ...string) *yaml.Node {
	if n := f.Resource.Prop(keys...); n != nil {
		return n
	}
	if f.Type == ServerlessFunction {
		return Lookup(f.t.Globals("Function"), keys...)
	}
	return nil
}

// Timeout returns the function's timeout in seconds: its own, else the
// Globals' (SAM), else Lambda's default of 3.
func (f *Function) Timeout() int {
	if v, ok := f.t.Int(f.Prop("Timeout")); ok {
		return v
	}
	return defaultTimeout
}

// Variable returns the environment variable name as the template gives
// it: the function's own, else the Globals' (SAM merges the two maps).
func (f *Function) Variable(name string) *yaml.Node {
	if n := f.Resource.Prop("Environment", "Variables", name); n != nil {
		return n
	}
	if f.Type == ServerlessFunction {
		return Lookup(f.t.Globals("Function"), "Environment", "Variables", name)
	}
	return nil
}

// Env returns the function's environment variables whose values the
// template gives as strings (see [Template.String]), Globals included,
// plus AWS_LAMBDA_FUNCTION_NAME when FunctionName is one.
func (f *Function) Env() map[string]string {
	env := map[string]string{}
	var maps []*yaml.Node
	if f.Type == ServerlessFunction {
		maps = append(maps, Lookup(f.t.Globals("Function"), "Environment", "Variables"))
	}
	maps = append(maps, f.Resource.Prop("Environment", "Variables"))
	for _, m := range maps {
		keys, values := Entries(m)
		for i, k := range keys {
			if v, ok := f.t.String(values[i]); ok {
				env[k] = v
			} else {
				delete(env, k)
			}
		}
	}
	if name, ok := f.Name(); ok {
		env[FunctionNameEnv] = name
	}
	return env
}
