package registry_test

import (
	"encoding/json"
	"testing"

	"sessiongraph/internal/registry"
)

// FuzzReadRecords feeds arbitrary JSON records to a read: it must never
// panic, and whatever it accepts must come back with no UUID left in it.
func FuzzReadRecords(f *testing.F) {
	f.Add("recipes", `[{"id":"a508000d-9b55-40f0-8886-dbdd88bd2de2","name":"Thai Curry"}]`)
	f.Add("meal_plans", `[{"id":"a508000d-9b55-40f0-8886-dbdd88bd2de2","date":"2026-01-12","meal_type":"lunch","recipe_id":"b508000d-9b55-40f0-8886-dbdd88bd2de2"}]`)
	f.Add("recipes", `[{"id":"a508000d-9b55-40f0-8886-dbdd88bd2de2","recipe_ingredients":[{"id":"c508000d-9b55-40f0-8886-dbdd88bd2de2","ingredient_id":["d508000d-9b55-40f0-8886-dbdd88bd2de2"]}]}]`)
	f.Add("tasks", `[{"id":"not-a-uuid"}]`)
	f.Add("recipes", `[{"name":"no id"}, 7, null, "text"]`)
	f.Fuzz(func(t *testing.T, table, raw string) {
		var records []map[string]any
		if json.Unmarshal([]byte(raw), &records) != nil {
			return
		}
		d := kitchen(t)
		et, err := d.TypeOfTable(table)
		if err != nil {
			return
		}
		r := registry.New(1, nil, nil)
		out, err := r.Read(d, et, records, registry.ActionRead, nil)
		if err != nil {
			return
		}
		if leaks := uuidLeaks(out); len(leaks) > 0 {
			t.Fatalf("UUIDs reached the LLM-facing records: %v", leaks)
		}
		for _, e := range r.Changed() {
			if registry.ContainsUUID(e.Label) {
				t.Fatalf("a label carries a UUID: %q", e.Label)
			}
		}
	})
}

// FuzzArtifactContent generates, revises and reads back arbitrary content.
func FuzzArtifactContent(f *testing.F) {
	f.Add(`{"name":"Dal","ingredients":["lentils"]}`, `{"name":"Red Lentil Dal"}`)
	f.Add(`{"name":"see a508000d-9b55-40f0-8886-dbdd88bd2de2"}`, `{}`)
	f.Add(`{"a":{"b":[1,2,{"c":null}]}}`, `{"name":""}`)
	f.Fuzz(func(t *testing.T, first, second string) {
		var a, b map[string]any
		if json.Unmarshal([]byte(first), &a) != nil || json.Unmarshal([]byte(second), &b) != nil || a == nil || b == nil {
			return
		}
		d := kitchen(t)
		et, err := d.Type("recipe")
		if err != nil {
			t.Fatal(err)
		}
		r := registry.New(1, nil, nil)
		gen := r.Generate(et, a, "", nil)
		if _, err := r.UpdateArtifact(et, gen.Ref, b, ""); err != nil {
			t.Fatalf("revising a pending artifact: %v", err)
		}
		records, fromDB, err := r.ReadRefs(d, []string{gen.Ref})
		if err != nil || len(fromDB) != 0 || len(records) != 1 {
			t.Fatalf("reading back %s: %v %v %v", gen.Ref, records, fromDB, err)
		}
		if leaks := uuidLeaks(records); len(leaks) > 0 {
			t.Fatalf("UUIDs reached the LLM-facing record: %v", leaks)
		}
		if records[0]["id"] != gen.Ref {
			t.Fatalf("the record's id is %v, want %s", records[0]["id"], gen.Ref)
		}
	})
}
