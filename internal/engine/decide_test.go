package engine

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/domains"
	"sessiongraph/ent/stepresult"
	"sessiongraph/internal/registry"
)

// A read's rules are plain code over values: given the refs a session
// already holds, readRecords decides every ref, the records the LLM sees,
// the enrichment queue, the event and the step's items, with no database.
func TestReadRecordsDecidesWithoutTheDatabase(t *testing.T) {
	d, err := domains.Kitchen()
	require.NoError(t, err)
	inv, err := d.Type("inv")
	require.NoError(t, err)
	known, fresh, rice := uuid.New(), uuid.New(), uuid.New()
	// The session is at turn 4, has numbered two inventory items and one
	// ingredient, and already holds inv_2 for the known item.
	r := registry.New(4, map[string]int{"inv": 2, "ingredient": 1}, nil,
		&registry.Entry{Ref: "inv_2", EntityType: "inv", EntityID: &known, Label: "Basmati", Action: registry.ActionRead,
			TurnCreated: 1, TurnLastReferenced: 1})
	step := 2
	in := RecordReadInput{SessionID: uuid.New(), Step: &step, Records: []map[string]any{
		{"id": fresh.String(), "name": "Coconut milk", "ingredient_id": rice.String()},
		{"id": known.String(), "name": "Basmati"},
	}}

	out, ev, items, err := readRecords(r, d, inv, in, registry.ActionRead, KindRefsRead, stepresult.KindRead)
	require.NoError(t, err)

	assert.Equal(t, []map[string]any{
		{"id": "inv_3", "name": "Coconut milk", "ingredient_id": "ingredient_2"},
		{"id": "inv_2", "name": "Basmati"},
	}, out.Records, "the next number of each type, and the ref a known entity already has")
	assert.Equal(t, []string{"inv_3", "ingredient_2", "inv_2"}, out.Refs, "every ref the read touched, in the order it touched them")
	require.Len(t, out.EnrichmentQueue, 1, "the foreign key's label is not known yet")
	assert.Equal(t, EnrichmentRequest{Ref: "ingredient_2", EntityType: "ingredient", EntityID: rice,
		Table: "ingredients", NameColumn: "name"}, out.EnrichmentQueue[0])
	assert.Equal(t, map[string]int{"inv": 3, "ingredient": 2}, r.Counters, "counters only grow")

	assert.Equal(t, KindRefsRead, ev.Kind)
	stored, err := json.Marshal(ev.Payload)
	require.NoError(t, err)
	assert.JSONEq(t, `{"table": "inventory", "changes": [
		{"ref": "inv_3", "entityType": "inv", "action": "read"},
		{"ref": "ingredient_2", "entityType": "ingredient", "action": "linked"},
		{"ref": "inv_2", "entityType": "inv", "action": "read"}]}`, string(stored), "the event's payload as stored")
	list, err := json.Marshal(ev.Payload["changes"])
	require.NoError(t, err)
	assert.Equal(t, `[{"action":"read","entityType":"inv","ref":"inv_3"},`+
		`{"action":"linked","entityType":"ingredient","ref":"ingredient_2"},{"action":"read","entityType":"inv","ref":"inv_2"}]`,
		string(list), "the bytes a map per change gave: keys in order")

	require.NotNil(t, items, "a read with a step adds to the step")
	var encoded []json.RawMessage
	for _, rec := range out.Records {
		b, err := json.Marshal(rec)
		require.NoError(t, err)
		encoded = append(encoded, b)
	}
	assert.Equal(t, encoded, out.RecordsJSON, "each record's bytes are json.Marshal's, as the Map scalar writes a record")
	assert.Equal(t, stepItems{Step: 2, Kind: stepresult.KindRead, Items: encoded, Refs: out.Refs}, *items)

	in.Step = nil
	_, _, items, err = readRecords(registry.New(4, nil, nil), d, inv, in, registry.ActionRead, KindRefsRead, stepresult.KindRead)
	require.NoError(t, err)
	assert.Nil(t, items, "a read without a step adds to none")
}
