package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"sessiongraph/internal/apperr"
	"sessiongraph/internal/jsontext"
)

// The GraphQL-over-HTTP transports (https://graphql.github.io/graphql-over-http/):
// POST and GET answer in the media type the client accepts. A request that
// is not a GraphQL request at all (malformed JSON, bad parameters) is 400
// INVALID_REQUEST whatever it accepts, and never echoes its body. A request
// that fails to parse, validate or coerce its variables is 200 with errors
// under application/json (what older clients expect) and 400 without a
// data entry under application/graphql-response+json, as the spec says.

const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// responseType is the media type to answer in: the first of ours that the
// Accept header names, application/json when it names none or is absent.
func responseType(r *http.Request) string {
	for part := range strings.SplitSeq(r.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case mediaGraphQLResponse:
			return mediaGraphQLResponse
		case mediaJSON, "application/*", "*/*":
			return mediaJSON
		}
	}
	return mediaJSON
}

// errorResponse is a response with no data entry: the request never
// executed (graphql.Response would write "data": null).
type errorResponse struct {
	Errors     gqlerror.List  `json:"errors"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, media string, v any) {
	if resp, ok := v.(*graphql.Response); ok && len(resp.Data) > 0 && len(resp.Errors) == 0 && bareResponse(resp) {
		// Most answers: the data, as gqlgen wrote it, and nothing else.
		w.Header().Set("Content-Type", media+"; charset=utf-8")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"data":`)
		_, _ = w.Write(resp.Data)
		_, _ = io.WriteString(w, "}")
		return
	}
	var b []byte
	var err error
	if resp, ok := v.(*graphql.Response); ok && len(resp.Data) > 0 {
		b, err = encodeResponse(resp)
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"errors":[{"message":"internal error","extensions":{"code":"INTERNAL"}}]}`)
	}
	w.Header().Set("Content-Type", media+"; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// responseRest is what follows a response's data, in graphql.Response's
// order.
type responseRest struct {
	Label      string         `json:"label,omitempty"`
	Path       ast.Path       `json:"path,omitempty"`
	HasNext    *bool          `json:"hasNext,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// bareResponse reports whether resp has nothing after its data.
func bareResponse(resp *graphql.Response) bool {
	return resp.Label == "" && len(resp.Path) == 0 && resp.HasNext == nil && len(resp.Extensions) == 0
}

// encodeResponse writes resp as encoding/json would, but copies its data as
// gqlgen wrote it: encoding/json would scan and re-escape the whole of it
// (a tenth of a large page's CPU) only to write the same JSON.
func encodeResponse(resp *graphql.Response) ([]byte, error) {
	rest, err := json.Marshal(responseRest{Label: resp.Label, Path: resp.Path, HasNext: resp.HasNext, Extensions: resp.Extensions})
	if err != nil {
		return nil, err
	}
	var errs []byte
	if len(resp.Errors) > 0 {
		if errs, err = json.Marshal(resp.Errors); err != nil {
			return nil, err
		}
	}
	b := make([]byte, 0, len(resp.Data)+len(errs)+len(rest)+24)
	b = append(b, '{')
	if errs != nil {
		b = append(append(append(b, `"errors":`...), errs...), ',')
	}
	b = append(append(b, `"data":`...), resp.Data...)
	if len(rest) > 2 { // more than {}
		b = append(append(b, ','), rest[1:len(rest)-1]...)
	}
	return append(b, '}'), nil
}

// invalidText refuses a request with a string that is not UTF-8 at path:
// decoding would have turned it into U+FFFD, and two different keys into
// one.
type invalidText struct{ path string }

func (e invalidText) Error() string {
	return jsontext.Refusal(e.path)
}

// refuseRequest answers a request whose body or query string could not be
// read as a GraphQL request: 400, INVALID_REQUEST, or BAD_USER_INPUT with
// extensions.field for text that is not UTF-8.
func refuseRequest(w http.ResponseWriter, media string, err error) {
	var bad invalidText
	if errors.As(err, &bad) {
		e := &gqlerror.Error{Message: err.Error(), Extensions: map[string]any{"code": apperr.BadUserInput, "field": bad.path}}
		writeJSON(w, http.StatusBadRequest, media, errorResponse{Errors: gqlerror.List{e}})
		return
	}
	writeRequestError(w, http.StatusBadRequest, media, apperr.InvalidRequest, err.Error())
}

// writeRequestError answers a request that was refused before it was a
// GraphQL operation.
func writeRequestError(w http.ResponseWriter, status int, media string, code apperr.Code, message string) {
	err := &gqlerror.Error{Message: message, Extensions: map[string]any{"code": code}}
	writeJSON(w, status, media, errorResponse{Errors: gqlerror.List{err}})
}

// hasCode reports whether any of errs carries code.
func hasCode(errs gqlerror.List, code apperr.Code) bool {
	for _, e := range errs {
		if e.Extensions["code"] == string(code) {
			return true
		}
	}
	return false
}

// readBody reads a request's body; one that internal/app read whole
// already is not copied again.
func readBody(body io.Reader) ([]byte, error) {
	if b, ok := body.(interface{ Unread() []byte }); ok {
		return b.Unread(), nil
	}
	return io.ReadAll(body)
}

// httpTransport serves GET and POST with a JSON body: a GET runs queries
// only, so that a link or an image tag cannot change anything. It
// executes the operation itself, so that an operation's resolvers run one
// frame below the transport (docs/architecture.md counts them).
type httpTransport struct{}

var _ graphql.Transport = httpTransport{}

// Supports implements graphql.Transport.
func (httpTransport) Supports(r *http.Request) bool {
	return r.Header.Get("Upgrade") == "" && (r.Method == http.MethodGet || r.Method == http.MethodPost && isJSON(r))
}

// Do implements graphql.Transport.
func (httpTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	media := responseType(r)
	start := graphql.Now()
	params, err := readParams(r)
	if err != nil {
		refuseRequest(w, media, err)
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	ctx := r.Context()
	rc, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		status := http.StatusOK
		if media == mediaGraphQLResponse {
			status = http.StatusBadRequest
		}
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs)
		writeJSON(w, status, media, errorResponse{Errors: resp.Errors, Extensions: resp.Extensions})
		return
	}
	if err := allowedOverGet(r, rc.Operation.Operation); err != nil {
		w.Header().Set("Allow", http.MethodPost)
		writeRequestError(w, http.StatusMethodNotAllowed, media, apperr.MethodNotAllowed, err.Error())
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, rc)
	resp := responses(ctx)
	if resp == nil {
		// gqlgen answers nothing for an operation whose context ended
		// before it ran: past the request's deadline (internal/app's
		// door keeps a client's leaving from ending it).
		resp = exec.DispatchError(ctx, gqlerror.List{{Message: "the request ended before it ran", Err: ctx.Err()}})
	}
	status := http.StatusOK
	switch {
	case len(resp.Errors) == 1 && resp.Errors[0].Extensions["code"] == string(apperr.RateLimited):
		// Refused at admission (fairness.go), before anything ran: what
		// HTTP says of a client to slow down, with when to send again.
		w.Header().Set("Retry-After", fmt.Sprint(resp.Errors[0].Extensions["retryAfter"]))
		status = http.StatusTooManyRequests
	case r.Method == http.MethodPost && hasCode(resp.Errors, apperr.Unavailable):
		// The database was down: retryable, and load balancers and clients
		// should tell it from an error of ours.
		w.Header().Set("Retry-After", strconv.Itoa(apperr.RetryAfterSeconds))
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, media, resp)
}

// readParams reads a request's parameters: a GET's from its query string,
// a POST's from its body.
func readParams(r *http.Request) (*graphql.RawParams, error) {
	if r.Method == http.MethodGet {
		return decodeQueryString(r.URL.RawQuery)
	}
	body, err := readBody(r.Body)
	if err != nil {
		return nil, errUnreadableBody
	}
	return decodeBody(body)
}

// errUnreadableBody is a POST whose body could not be read.
var errUnreadableBody = errors.New("the request body could not be read")

// allowedOverGet refuses, over GET, what is not a query.
func allowedOverGet(r *http.Request, op ast.Operation) error {
	switch {
	case r.Method != http.MethodGet || op == ast.Query:
		return nil
	case op == ast.Subscription:
		return errors.New("a subscription cannot run over GET: subscribe over WebSocket (graphql-transport-ws) or SSE")
	}
	return errors.New("GET requests only allow query operations: send a mutation as POST")
}

// unsupported answers every request no other transport took: a POST that
// is not JSON, or a method GraphQL does not use. It goes last.
type unsupported struct{}

var _ graphql.Transport = unsupported{}

// Supports implements graphql.Transport.
func (unsupported) Supports(*http.Request) bool { return true }

// Do implements graphql.Transport.
func (unsupported) Do(w http.ResponseWriter, r *http.Request, _ graphql.GraphExecutor) {
	media := responseType(r)
	if r.Method == http.MethodPost {
		writeRequestError(w, http.StatusUnsupportedMediaType, media, apperr.UnsupportedMediaType,
			fmt.Sprintf("a POST body must be JSON, sent with 'Content-Type: application/json' (got %q)", r.Header.Get("Content-Type")))
		return
	}
	w.Header().Set("Allow", "GET, POST, OPTIONS")
	writeRequestError(w, http.StatusMethodNotAllowed, media, apperr.MethodNotAllowed,
		fmt.Sprintf("%s is not a GraphQL method: send queries as GET or POST, mutations as POST", r.Method))
}

func isJSON(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == mediaJSON
}

// decodeBody reads exactly one JSON object from body, each parameter of
// its type: query a string (absent only with a persisted query's hash in
// extensions), operationName a string, variables and extensions objects,
// any of them null. Numbers stay json.Number, as gqlgen expects. Its errors
// are short and never quote the body, which may be megabytes.
func decodeBody(body []byte) (*graphql.RawParams, error) {
	if p, ok := decodeParams(body); ok {
		if path, bad := jsontext.InvalidText(body); bad {
			return nil, invalidText{path}
		}
		return p, needQuery(p)
	}
	// Anything decodeParams does not take is decoded again, for the error
	// to say what is wrong.
	return decodeStream(body)
}

// decodeStream is decodeBody with a stream decoder over the whole body.
func decodeStream(body []byte) (*graphql.RawParams, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	p := &graphql.RawParams{}
	if err := dec.Decode(p); err != nil {
		return nil, jsonError(err)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("the request body continues after its JSON object (at byte %d): send exactly one object", end)
	}
	if path, bad := jsontext.InvalidText(body); bad {
		return nil, invalidText{path}
	}
	return p, needQuery(p)
}

// rawParams are a request's parameters with its objects left as JSON.
type rawParams struct {
	Query         string          `json:"query"`
	OperationName string          `json:"operationName"`
	Variables     json.RawMessage `json:"variables"`
	Extensions    json.RawMessage `json:"extensions"`
}

// decodeParams decodes a body that is exactly one object of the right
// types as decodeBody does, without a stream decoder's buffer for the
// whole body (a decoder reads only variables and extensions, when given);
// false for anything else.
func decodeParams(body []byte) (*graphql.RawParams, bool) {
	var raw rawParams
	if json.Unmarshal(body, &raw) != nil {
		return nil, false
	}
	p := &graphql.RawParams{Query: raw.Query, OperationName: raw.OperationName}
	if !decodeObject(raw.Variables, &p.Variables) || !decodeObject(raw.Extensions, &p.Extensions) {
		return nil, false
	}
	return p, true
}

// decodeObject decodes a JSON object or null, numbers as json.Number.
func decodeObject(raw json.RawMessage, into *map[string]any) bool {
	if len(raw) == 0 || string(raw) == "null" {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(into) == nil
}

// paramTypes says what each parameter must be, for error messages.
var paramTypes = map[string]string{
	"query": "a string", "operationName": "a string", "variables": "an object", "extensions": "an object",
}

// jsonError says what is wrong with a body without quoting it.
func jsonError(err error) error {
	var syntax *json.SyntaxError
	var wrongType *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return errors.New(`the request body is empty: send a JSON object such as {"query": "{ viewer { role } }"}`)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the request body is not valid JSON: it ends before the object does")
	case errors.As(err, &syntax):
		return fmt.Errorf("the request body is not valid JSON: %s at byte %d", syntax.Error(), syntax.Offset)
	case errors.As(err, &wrongType) && wrongType.Field == "":
		return fmt.Errorf(`the request body must be a JSON object {"query": ...}, not %s`, wrongType.Value)
	case errors.As(err, &wrongType):
		name, _, _ := strings.Cut(wrongType.Field, ".")
		if want, ok := paramTypes[name]; ok {
			return fmt.Errorf("the %s parameter must be %s", name, want)
		}
	}
	return errors.New("the request body is not a GraphQL request")
}

func needQuery(p *graphql.RawParams) error {
	if p.Query == "" && p.Extensions["persistedQuery"] == nil {
		return errors.New(`the request has no query: send {"query": "..."}`)
	}
	return nil
}

// decodeQueryString reads a GET request's parameters; variables and
// extensions are JSON text.
func decodeQueryString(raw string) (*graphql.RawParams, error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, errors.New("the query string is malformed: URL-encode the query, variables and extensions")
	}
	p := &graphql.RawParams{Query: q.Get("query"), OperationName: q.Get("operationName")}
	for _, name := range []string{"query", "operationName"} {
		if !utf8.ValidString(q.Get(name)) {
			return nil, invalidText{name}
		}
	}
	for _, param := range []struct {
		name string
		dst  *map[string]any
	}{{"variables", &p.Variables}, {"extensions", &p.Extensions}} {
		v := q.Get(param.name)
		if v == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(v))
		dec.UseNumber()
		var wrongType *json.UnmarshalTypeError
		if err := dec.Decode(param.dst); errors.As(err, &wrongType) {
			return nil, fmt.Errorf("the %s parameter must be %s", param.name, paramTypes[param.name])
		} else if err != nil || dec.More() {
			return nil, fmt.Errorf("the %s parameter is not valid JSON", param.name)
		}
		if path, bad := jsontext.InvalidText([]byte(v)); bad {
			return nil, invalidText{strings.TrimSuffix(param.name+"."+path, ".")}
		}
	}
	return p, needQuery(p)
}
