// Package scalar marshals the GraphQL scalars whose input can be wrong, so
// that each bad value fails with a stable code instead of an internal error:
// ID and UUID as uuid.UUID, Map, StringMap, Time and Cursor.
package scalar

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"

	"sessiongraph/internal/apperr"
)

// MarshalUUID writes a UUID as its canonical string.
func MarshalUUID(u uuid.UUID) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(u.String()))
	})
}

// UnmarshalUUID reads a UUID, saying what was wrong when it is not one.
func UnmarshalUUID(v any) (uuid.UUID, error) {
	s, ok := v.(string)
	if !ok {
		return uuid.Nil, apperr.New(apperr.InvalidID, "an id must be a UUID string, got %T", v)
	}
	u, err := uuid.Parse(s)
	if err != nil || len(s) != 36 {
		return uuid.Nil, apperr.New(apperr.InvalidID, "%q is not a UUID (want 8-4-4-4-12 hex digits)", s)
	}
	return u, nil
}

// MarshalMap writes a JSON object. gqlgen's own MarshalMap uses a
// json.Encoder, which ends every object with a newline: a response with a
// list of records came back with one between each record.
func MarshalMap(m map[string]any) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		b, err := json.Marshal(m)
		if err != nil {
			panic(err) // as gqlgen's: a map from the database or a request always encodes
		}
		_, _ = w.Write(b)
	})
}

// UnmarshalMap reads a JSON object.
func UnmarshalMap(v any) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, apperr.New(apperr.InvalidContent, "expected a JSON object, got %s", jsonKind(v))
	}
	return m, nil
}

// MarshalStringMap writes a map of strings as a JSON object, keys in byte
// order, each string escaped as gqlgen escapes every String of a response
// (only quotes, backslashes and control characters: encoding/json would
// write <, >, & and U+2028 as \u escapes, so the same text would read
// differently in a String field and in a map).
func MarshalStringMap(m map[string]string) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		_, _ = io.WriteString(w, "{")
		for i, k := range keys {
			if i > 0 {
				_, _ = io.WriteString(w, ",")
			}
			graphql.MarshalString(k).MarshalGQL(w)
			_, _ = io.WriteString(w, ":")
			graphql.MarshalString(m[k]).MarshalGQL(w)
		}
		_, _ = io.WriteString(w, "}")
	})
}

// UnmarshalStringMap reads a JSON object whose values are all strings.
func UnmarshalStringMap(v any) (map[string]string, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, apperr.New(apperr.BadUserInput, "expected a JSON object of strings, got %s", jsonKind(v))
	}
	out := make(map[string]string, len(obj))
	for k, val := range obj {
		s, ok := val.(string)
		if !ok {
			return nil, apperr.New(apperr.BadUserInput, "the value of %q must be a string, got %s", k, jsonKind(val))
		}
		out[k] = s
	}
	return out, nil
}

// MarshalTime writes an RFC 3339 timestamp with nanoseconds.
func MarshalTime(t time.Time) graphql.Marshaler { return graphql.MarshalTime(t) }

// UnmarshalTime reads an RFC 3339 timestamp.
func UnmarshalTime(v any) (time.Time, error) {
	t, err := graphql.UnmarshalTime(v)
	if err != nil {
		return time.Time{}, apperr.New(apperr.BadUserInput, "%v is not an RFC 3339 time such as 2026-01-02T15:04:05Z", v)
	}
	return t, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("a %T", v)
	}
}

// MarshalRawMap writes a JSON object encoded already (json.Marshal's
// bytes of a map, as MarshalMap would write them): a read's records are
// encoded once, for the step's data and the answer.
func MarshalRawMap(b json.RawMessage) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = w.Write(b)
	})
}

// UnmarshalRawMap reads a JSON object as UnmarshalMap does, and encodes it.
func UnmarshalRawMap(v any) (json.RawMessage, error) {
	m, err := UnmarshalMap(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(m)
}
