// Package compiled answers a page of Query.sessions with one SQL statement
// whose values Go writes as the JSON gqlgen would have written. gqlgen's
// execution of the session graph page (20 sessions, each with 10 turns and
// 20 refs: 620 objects) spends most of its CPU on a field context, a
// marshaller and allocations per value; here the page is 20 rows appended
// to one buffer.
//
// # What it answers
//
// Sessions answers the field when every field selected under it is one it
// knows (after gqlgen's CollectFields: fragments, aliases, @skip and
// @include applied):
//
//   - on the connection: __typename, totalCount, pageInfo (any of its
//     fields), edges;
//   - on an edge: __typename, cursor, node;
//   - on a node: __typename, any field that ent.CompiledTypes gives a
//     column and a JSON kind (not CompiledNone) and that takes no argument,
//     and any relay connection of the type (ent.CompiledConnection);
//   - on a nested connection: its first page only, with first between 1
//     and 1000 and at most an orderBy of its order fields; of it
//     __typename, totalCount, edges (no cursor) and pageInfo's hasNextPage
//     and hasPreviousPage.
//
// The root page's own arguments (after, first, before, last, orderBy,
// where) are read by entgql's pager (ent's CompiledPage and CompiledEdges),
// so its filter, order, cursors and pageInfo are entgql's. A nested page
// reads its rows with the predicates its node type's interceptors add, run
// as ent's own read would run them (CompiledConnection.Predicates).
//
// # The contract: its bytes are gqlgen's
//
// The JSON written is byte for byte what gqlgen writes for the same
// selection, from the same rows: field order, aliases, nulls, numbers,
// times as RFC 3339, and strings escaped as gqlgen's MarshalString escapes
// them (appendQuoted, checked for all 256 bytes by TestAppendQuotedIsGqlgensString). graph's
// TestCompiledReadsAnswerEveryFieldAsGqlgenDoes,
// TestCompiledReadsAnswerEveryPageShapeAsGqlgenDoes and
// TestCompiledReadsAnswerEveryNestedConnectionAsGqlgenDoes compare whole
// response bodies of servers with and without compiled reads;
// TestCompiledPlanHasEveryFieldOfEveryType fails when a field of ent's
// GraphQL schema has no column in ent.CompiledTypes or a JSON kind other
// than the one gqlgen's marshaller of its type writes.
//
// # When it declines
//
// Sessions reports ok false, and gqlgen's resolver answers the whole field
// (a compiled answer is never a partial one), when the selection holds
// anything else: a field with a resolver or arguments, a JSON field other
// than a StringMap, a nested page with after, before, last, a where, no
// first or a first outside 1..1000, a nested page's cursors, or a node
// type one of whose interceptors is not a plain Traverser. It declines too
// outside a gqlgen field context. The server's --compiled-reads=false
// (COMPILED_READS) sends every page to gqlgen.
//
// # How the JSON reaches the response
//
// Sessions returns a model.SessionConnection whose Compiled marshaller
// writes the page. The schema marks SessionConnection @goCompiled, and
// gqlgen's marshaller of such a type writes Compiled when it is set
// (patches/gqlgen-compiled-objects.patch).
//
// # Files
//
// reads.go plans a field from its selection; plans.go keeps the plans of
// root fields that depend on the document alone; sql.go writes the
// statement's value list; values.go reads PostgreSQL's text values;
// write.go writes the JSON. A page's statement runs through the Query
// Sessions is given (the store's, on pgx): a cursorless page's raw values
// are read without a driver value per column (write.go's edgeRows), and a
// page with cursors or counts has its id and order values scanned by pgx
// into each row's node, its nodes' text read raw (rows.go's pageRows, for
// ent's CompiledPage). What each type's columns, kinds and nested
// connections are is generated from ent/schema into ent.CompiledTypes
// (ent/template/gql_compiled_page.tmpl).
package compiled
