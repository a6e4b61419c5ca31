package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"

	"sessiongraph/ent/apikey"
	"sessiongraph/graph/generated"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

// The hostile walk: every field of the schema, enumerated from the schema
// itself (a new field is walked without touching this test), gets
// generated arguments (plausible ones, then one position at a time made
// hostile: nulls, empty objects, huge, NUL-bearing and invalid UTF-8
// strings, extreme integers, deep nesting, ids of another tenant), sent
// with an admin key, a key of another tenant, a READER key and a revoked
// key. Queries and mutations go over HTTP POST, subscriptions over
// WebSocket. It fails on any INTERNAL or uncoded error, any 5xx, any
// panic or internal error in the server's log, and any change to the
// data by a request that answered an error.
//
// make test visits every field with HOSTILE_VARIANTS (default 12) argument
// sets each from a fixed seed; make fuzz runs more, from a random seed
// (HOSTILE_SEED=random), and prints the seed to replay a failure.
func TestEveryFieldSurvivesHostileArguments(t *testing.T) {
	variants, seed := hostileSettings(t)
	errs := &logRecorder{level: slog.LevelError} // a panic or an internal error logs at ERROR
	s := apitest.New(t, func(c *app.Config) {
		c.Logger = slog.New(errs)
		c.NoReaper = true
	})
	w := &hostileWalk{t: t, s: s, schema: generated.NewExecutableSchema(generated.Config{}).Schema(), dirty: true}
	w.keys = map[string]string{"admin": s.AdminKey, "client": s.NewKey(t, "CLIENT", "acme"), "reader": s.NewKey(t, "READER", "acme")}
	revoked := s.NewKey(t, "CLIENT", "acme")
	w.revoke(revoked)
	w.keys["revoked"] = revoked
	var other openedSession
	s.MustDo(t, openSession, map[string]any{"in": map[string]any{"tenant": "globex", "externalKey": "other-tenant"}}, &other)
	w.otherSessionID = other.OpenSession.Session.ID

	fields := w.fields()
	require.NotEmpty(t, fields)
	for _, f := range fields {
		fx := w.fixture()
		gen := &argGen{schema: w.schema, fx: fx, rnd: rand.New(rand.NewPCG(seed, fieldHash(f))), field: f.def.Name}
		ops := w.variants(f, gen, variants)
		if f.root == "Subscription" {
			w.subscribe(f, ops)
			continue
		}
		for _, op := range ops {
			w.post(f, op)
		}
	}
	w.revokedSocketIsRefused(revoked)
	assert.Empty(t, errs.recorded(), "the server logged errors: a panic or an internal error")
	t.Logf("walked %d fields, %d requests (seed %d)", len(fields), w.requests, seed)
}

// hostileSettings reads HOSTILE_VARIANTS and HOSTILE_SEED.
func hostileSettings(t *testing.T) (int, uint64) {
	variants := 12
	if v := os.Getenv("HOSTILE_VARIANTS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "HOSTILE_VARIANTS")
		variants = n
	}
	seed := uint64(13)
	switch v := os.Getenv("HOSTILE_SEED"); v {
	case "":
	case "random":
		seed = uint64(time.Now().UnixNano())
	default:
		n, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "HOSTILE_SEED")
		seed = n
	}
	t.Logf("HOSTILE_SEED=%d HOSTILE_VARIANTS=%d", seed, variants)
	return max(variants, 4), seed
}

type hostileWalk struct {
	t              *testing.T
	s              *apitest.Server
	schema         *ast.Schema
	keys           map[string]string
	otherSessionID string
	baseline       map[string]string
	dirty          bool
	requests       int
	fixtures       int
	current        *hostileFixture
}

// walkedField is a field and how to reach it: a root field, or a field of
// a Node type reached through node(id).
type walkedField struct {
	root   string // Query, Mutation, Subscription
	parent string // the object type, for a field reached through node
	// through is the mutation whose answer holds the field, for a field of
	// a payload (reached by a plausible write, $in its input).
	through string
	def     *ast.FieldDefinition
}

// answerFields are the payloads whose fields take arguments, and the write
// that answers each: a plausible read of one record into the fixture's
// session.
var answerFields = map[string]string{
	"RecordReadPayload":    "recordRead",
	"RecordUpdatedPayload": "recordUpdated",
}

func (f walkedField) String() string {
	if f.through != "" {
		return f.through + "." + f.def.Name
	}
	if f.parent != "" {
		return f.parent + "." + f.def.Name
	}
	return f.root + "." + f.def.Name
}

func fieldHash(f walkedField) uint64 {
	h := fnv.New64a()
	h.Write([]byte(f.String()))
	return h.Sum64()
}

// fields lists every root field, and every field with arguments of the
// other object types, which must be Nodes to be reached.
func (w *hostileWalk) fields() []walkedField {
	var out []walkedField
	for _, root := range []*ast.Definition{w.schema.Query, w.schema.Mutation, w.schema.Subscription} {
		for _, f := range root.Fields {
			if !strings.HasPrefix(f.Name, "__") {
				out = append(out, walkedField{root: root.Name, def: f})
			}
		}
	}
	names := make([]string, 0, len(w.schema.Types))
	for name := range w.schema.Types {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		def := w.schema.Types[name]
		if def.Kind != ast.Object || strings.HasPrefix(name, "__") || def == w.schema.Query || def == w.schema.Mutation || def == w.schema.Subscription {
			continue
		}
		for _, f := range def.Fields {
			if len(f.Arguments) == 0 {
				continue
			}
			if through, ok := answerFields[name]; ok {
				out = append(out, walkedField{root: "Mutation", through: through, def: f})
				continue
			}
			require.Contains(w.t, def.Interfaces, "Node", "%s.%s takes arguments, but %s is not a Node: give the walk a way to reach it", name, f.Name, name)
			out = append(out, walkedField{root: "Query", parent: name, def: f})
		}
	}
	return out
}

// hostileOp is one request: its variables and the key it is sent with.
type hostileOp struct {
	args map[string]any
	key  string
	what string
}

// variants makes n requests for a field: plausible arguments with each
// kind of key (another tenant's ids for the CLIENT key), then plausible
// arguments with one position made hostile.
func (w *hostileWalk) variants(f walkedField, gen *argGen, n int) []hostileOp {
	plausible := func() map[string]any {
		args := map[string]any{}
		for _, a := range f.def.Arguments {
			if a.Type.NonNull && a.DefaultValue == nil || a.Name == "first" {
				args[a.Name] = gen.plausible(a.Name, a.Type, 0)
			}
		}
		return args
	}
	foreign := func() map[string]any {
		b, _ := json.Marshal(plausible())
		var out map[string]any
		_ = json.Unmarshal(bytes.ReplaceAll(b, []byte(gen.fx.sessionID), []byte(w.otherSessionID)), &out)
		return out
	}
	ops := []hostileOp{
		{plausible(), "admin", "plausible"},
		{foreign(), "client", "another tenant's ids"},
		{plausible(), "reader", "a READER key"},
		{plausible(), "revoked", "a revoked key"},
	}
	// Every other nullable argument sent as an explicit null, in every walk:
	// a null is valid GraphQL wherever a type allows it, and once reached
	// code that took "given" for "not null" (where: null through node(id:)).
	nulls := plausible()
	for _, a := range f.def.Arguments {
		if _, given := nulls[a.Name]; !given && !a.Type.NonNull {
			nulls[a.Name] = nil
		}
	}
	ops = append(ops, hostileOp{nulls, "admin", "every nullable argument null"})
	positions := gen.positions(f.def.Arguments)
	for len(ops) < n && len(positions) > 0 {
		p := positions[gen.rnd.IntN(len(positions))]
		args, v := plausible(), gen.hostile(p.typ)
		p.set(args, v)
		key := "admin"
		if gen.rnd.IntN(4) == 0 {
			key = "client"
		}
		ops = append(ops, hostileOp{args, key, fmt.Sprintf("%v = %.80q", p.path, fmt.Sprint(v))})
	}
	return ops
}

// document writes the operation that calls f with its arguments as
// variables ($a_<name>; those not given are left out), selecting __typename from an object result.
func (w *hostileWalk) document(f walkedField, op hostileOp) string {
	var defs, args []string
	for _, a := range f.def.Arguments {
		if _, given := op.args[a.Name]; !given {
			continue // left out: its default applies
		}
		defs = append(defs, fmt.Sprintf("$a_%s: %s", a.Name, a.Type))
		args = append(args, fmt.Sprintf("%s: $a_%s", a.Name, a.Name))
	}
	call := f.def.Name
	if len(args) > 0 {
		call += "(" + strings.Join(args, ", ") + ")"
	}
	switch w.schema.Types[f.def.Type.Name()].Kind {
	case ast.Object, ast.Interface, ast.Union:
		call += " { __typename }"
	}
	if f.parent != "" {
		defs = append(defs, "$node: ID!")
		call = fmt.Sprintf("node(id: $node) { ... on %s { %s } }", f.parent, call)
	}
	if f.through != "" {
		defs = append(defs, "$in: "+w.schema.Mutation.Fields.ForName(f.through).Arguments.ForName("input").Type.String())
		call = fmt.Sprintf("%s(input: $in) { %s }", f.through, call)
	}
	head := strings.ToLower(f.root)
	if len(defs) > 0 {
		head += "(" + strings.Join(defs, ", ") + ")"
	}
	return head + " { " + call + " }"
}

func (w *hostileWalk) variables(f walkedField, op hostileOp, fx *hostileFixture) map[string]any {
	vars := map[string]any{}
	for k, v := range op.args {
		vars["a_"+k] = v
	}
	if f.parent != "" {
		vars["node"] = fx.nodeIDs[f.parent]
	}
	if f.through != "" {
		vars["in"] = map[string]any{"sessionID": fx.sessionID, "table": "recipes",
			"records": []any{map[string]any{"id": "0b0e4f2a-6a8f-4c3e-9d7a-0c1f2e3d4b5a", "name": "Hostile Dal"}}}
	}
	return vars
}

// body marshals a request, sending "\xff\xfe" as the invalid UTF-8 it is
// (encoding/json would have replaced it).
func body(query string, vars map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return bytes.ReplaceAll(b, []byte(`\ufffd\ufffd`), []byte{0xff, 0xfe})
}

// post sends one operation over HTTP and checks what it answered.
func (w *hostileWalk) post(f walkedField, op hostileOp) {
	t := w.t
	fx := w.current
	mutation := f.root == "Mutation"
	if mutation && w.dirty {
		w.baseline, w.dirty = dataDigest(t, w.s), false
	}
	req, err := http.NewRequest(http.MethodPost, w.s.URL+"/graphql", bytes.NewReader(body(w.document(f, op), w.variables(f, op, fx))))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+w.keys[op.key])
	res, err := (&http.Client{Timeout: time.Minute}).Do(req)
	require.NoError(t, err)
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	w.requests++
	where := fmt.Sprintf("%s with %s (%s key)", f, op.what, op.key)
	assert.Less(t, res.StatusCode, 500, "%s: %s", where, raw)
	var out apitest.Response
	require.NoError(t, json.Unmarshal(raw, &out), "%s: %s", where, raw)
	w.checkErrors(where, out.Errors)
	if !mutation {
		return
	}
	if len(out.Errors) == 0 {
		w.dirty = true
		return
	}
	assert.Equal(t, w.baseline, dataDigest(t, w.s), "%s answered an error but changed data: %s", where, raw)
}

func (w *hostileWalk) checkErrors(where string, errs []apitest.Error) {
	for _, e := range errs {
		code := e.Code()
		assert.NotEmpty(w.t, code, "%s: an error without a code: %s", where, e.Message)
		assert.NotEqual(w.t, "INTERNAL", code, "%s: %s", where, e.Message)
	}
}

// revoke revokes a key through the API.
func (w *hostileWalk) revoke(key string) {
	ctx := access.System(context.Background())
	row := w.s.Client.APIKey.Query().Where(apikey.Prefix(key[:len("sg_")+6])).OnlyX(ctx)
	w.s.MustDo(w.t, `mutation($id: ID!) { revokeAPIKey(input: {id: $id}) { apiKey { revokedAt } } }`, map[string]any{"id": row.ID.String()}, nil)
}

// revokedSocketIsRefused: a revoked key cannot open a WebSocket.
func (w *hostileWalk) revokedSocketIsRefused(key string) {
	assert.Equal(w.t, websocket.StatusCode(4403), initStatus(w.t, w.s, map[string]any{"Authorization": "Bearer " + key}))
}
