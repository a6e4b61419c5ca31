package registry

// Scrub returns v with every UUID replaced by the ref of a loaded entry, or
// by Unregistered, so that data given for a prompt carries no UUID.
func (r *Registry) Scrub(v any) any { return r.scrub(v) }

// Known returns the names among names that are refs of the loaded entries,
// once each, in the order first named.
func (r *Registry) Known(names []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, n := range names {
		if _, ok := r.byRef[n]; ok && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// WrittenItem is how a write the runtime reported appears in its step's
// result: the ref in the type's id field, with the label and the action.
func WrittenItem(t *EntityType, e *Entry) map[string]any {
	item := map[string]any{t.IDField: e.Ref, "action": e.Action}
	if e.Label != "" {
		item["label"] = e.Label
	}
	return item
}
