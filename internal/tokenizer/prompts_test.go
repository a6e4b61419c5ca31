package tokenizer

// prompts are realistic prompt texts: the markdown, code, JSON and lists a
// context build assembles, with the spacing and punctuation they bring.
var prompts = []string{
	"## Active entities\n\n| Ref | Kind | Tier | Last read |\n|-----|------|------|-----------|\n" +
		"| `recipe_1` | recipe | T3 | 2026-01-12T09:30:00Z |\n| `note_42` | note | T1 | — |\n\n",
	"```go\nfunc (s *Store) RecordRead(ctx context.Context, in RecordReadInput) (*Ref, error) {\n" +
		"\tif in.SessionID == \"\" {\n\t\treturn nil, apperr.New(apperr.BadUserInput, \"session id is required\")\n\t}\n" +
		"\t// Lock the session row so two reads cannot race.\n\treturn s.tx(ctx, func(tx *ent.Tx) error { return nil })\n}\n```\n",
	"{\n  \"id\": \"ses_01HZX3\",\n  \"tokens\": 1234,\n  \"tiers\": [\"T1\", \"T2\"],\n  \"ratio\": 0.75,\n" +
		"  \"nested\": {\"ok\": true, \"note\": null, \"path\": \"/var/lib/app/data.json\"}\n}\n",
	"- First item: it's done.\n- Second item — we'll see.\n  - Nested, with `code` and **bold**.\n" +
		"1. Numbered (one)\n2. Numbered (two)\n\n> A quote, they'd say.\n\n---\n\n",
	"User: Can you summarise https://example.com/docs/v2/api?page=3#auth for me?\r\n" +
		"Assistant: Sure! The page explains OAuth 2.0 flows:\r\n\r\n  * client credentials\r\n  * PKCE (RFC 7636)\r\n",
	"<system>\nYou are a helpful assistant. Today is 2026-11-21.\n</system>\n\n[read:full] T3 → 5 items, ~1.2k tokens\n",
	"Résumé: naïve café owner, Zürich; 東京で働いた経験あり。 Привет! مرحبا ١٢٣ 🎉👍🏽\n\tIndented\tcolumns\t42\n",
	"SELECT id, name FROM sessions WHERE idle_for > interval '30 minutes' AND tier IN ('T1','T2');\n",
	"    def count(self, text: str) -> int:\n        \"\"\"Return the number of tokens.\"\"\"\n        return len(self.enc.encode(text))  # noqa: E501\n",
	"diff --git a/x.go b/x.go\n@@ -1,3 +1,4 @@\n-old line\n+new line\n+another  \n \n",
}
