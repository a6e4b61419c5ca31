//go:build ignore

// gqlgen generates the GraphQL layer: gqlgen's own generator (models,
// resolvers, and its execution code, which it checks compiles), and then the
// execution code of graph/generated again from gqlgen's own templates (read
// from the pinned module), with the few in graph/templates in place of
// theirs of the same name: those change where a read of many objects paid
// for work it did not need (docs/generated-code.md says what and why, and
// how `make check-generated` shows what an upgrade changed under them). Run
// it from the repository root: `make generate`.
package main

import (
	"errors"
	"fmt"
	"go/types"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing/fstest"
	"text/template"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
	"github.com/99designs/gqlgen/codegen/templates"
	"github.com/vektah/gqlparser/v2/ast"
)

func main() {
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err != nil {
		log.Fatalf("loading gqlgen.yml: %v", err)
	}
	var data *codegen.Data
	if err := api.Generate(cfg, api.AddPlugin(capture{&data})); err != nil {
		log.Fatalf("gqlgen: %v", err)
	}
	if cfg.Exec.Layout != config.ExecLayoutFollowSchema {
		log.Fatalf("graph/gqlgen.go renders the follow-schema layout only, not %q", cfg.Exec.Layout)
	}
	root, schema, err := execTemplates("graph/templates")
	if err != nil {
		log.Fatalf("reading the execution templates: %v", err)
	}
	funcs = execFuncs(data)
	if err := renderExec(data, root, schema); err != nil {
		log.Fatalf("rendering graph/generated: %v", err)
	}
}

// execTemplates are the templates of the root file and of the per-schema
// files: gqlgen's own, as its codegen package embeds them (the lists are
// read from its go:embed lines, so a template an upgrade adds is used), with
// the files of dir/root and dir/schema in place of theirs or beside them.
func execTemplates(dir string) (root, schema fs.FS, err error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/99designs/gqlgen").Output()
	if err != nil {
		return nil, nil, fmt.Errorf("finding gqlgen's module: %w", err)
	}
	codegenDir := filepath.Join(strings.TrimSpace(string(out)), "codegen")
	embeds, err := embedLists(filepath.Join(codegenDir, "generate.go"))
	if err != nil {
		return nil, nil, err
	}
	layer := func(embedVar, forks string) (fs.FS, error) {
		names := embeds[embedVar]
		if len(names) == 0 {
			return nil, fmt.Errorf("gqlgen's codegen embeds no %s", embedVar)
		}
		files := fstest.MapFS{}
		for _, name := range names {
			b, err := os.ReadFile(filepath.Join(codegenDir, name))
			if err != nil {
				return nil, err
			}
			files[name] = &fstest.MapFile{Data: b}
		}
		entries, err := os.ReadDir(filepath.Join(dir, forks))
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, forks, e.Name()))
			if err != nil {
				return nil, err
			}
			files[e.Name()] = &fstest.MapFile{Data: b}
		}
		return files, nil
	}
	if root, err = layer("rootTemplateFS", "root"); err != nil {
		return nil, nil, err
	}
	schema, err = layer("schemaTemplateFS", "schema")
	return root, schema, err
}

// embedLists reads the file names of each `//go:embed` line in a Go file,
// by the variable declared under it.
func embedLists(path string) (map[string][]string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lists := map[string][]string{}
	lines := strings.Split(string(src), "\n")
	for i, line := range lines {
		names, ok := strings.CutPrefix(line, "//go:embed ")
		if !ok || i+1 == len(lines) {
			continue
		}
		if decl := strings.Fields(lines[i+1]); len(decl) >= 2 && decl[0] == "var" {
			lists[decl[1]] = strings.Fields(names)
		}
	}
	return lists, nil
}

// capture keeps the data gqlgen renders its execution code from.
type capture struct{ data **codegen.Data }

func (capture) Name() string { return "capture" }

func (c capture) GenerateCode(data *codegen.Data) error {
	*c.data = data
	return nil
}

// renderExec writes the execution code as gqlgen's follow-schema layout does
// (codegen.GenerateCode): a root file, and one file per schema file with the
// objects, inputs, interfaces and types it declares.
func renderExec(data *codegen.Data, root, schema fs.FS) error {
	dir := data.Config.Exec.DirName
	if err := render(data, filepath.Join(dir, "root_.generated.go"), false, root); err != nil {
		return err
	}
	builds := map[string]*codegen.Data{}
	build := func(p *ast.Position) *codegen.Data {
		name := execFilename(p, data.Config)
		if builds[name] == nil {
			c := *data.Config
			if p != nil {
				c.Sources = []*ast.Source{p.Src}
			}
			builds[name] = &codegen.Data{
				Config: &c, QueryRoot: data.QueryRoot, MutationRoot: data.MutationRoot,
				SubscriptionRoot: data.SubscriptionRoot, AllDirectives: data.AllDirectives,
			}
		}
		return builds[name]
	}
	for _, o := range data.Objects {
		b := build(o.Position)
		b.Objects = append(b.Objects, o)
	}
	for _, in := range data.Inputs {
		b := build(in.Position)
		b.Inputs = append(b.Inputs, in)
	}
	for k, inf := range data.Interfaces {
		b := build(inf.Position)
		if b.Interfaces == nil {
			b.Interfaces = map[string]*codegen.Interface{}
		}
		b.Interfaces[k] = inf
	}
	for k, rt := range data.ReferencedTypes {
		b := build(rt.Definition.Position)
		if b.ReferencedTypes == nil {
			b.ReferencedTypes = map[string]*config.TypeReference{}
		}
		b.ReferencedTypes[k] = rt
	}
	for _, d := range data.Directives() {
		if len(d.Args) > 0 {
			build(d.Position)
		}
	}
	for name, b := range builds {
		if name == "" {
			continue
		}
		if b.HasBatchResolverFields() {
			// Batch parents span schema files; gqlgen keeps a schema-wide
			// set this renderer cannot reach. The schema has none.
			return errors.New("batch resolvers are not supported by graph/gqlgen.go")
		}
		if err := render(b, filepath.Join(dir, name), true, schema); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// funcs are the template functions graph/templates adds to gqlgen's.
var funcs template.FuncMap

// execFuncs decides, for the templates, what gqlgen's execution may skip.
//
//   - concurrentField: only a resolver runs on a goroutine of its own. gqlgen
//     also starts one for every bound method that takes a context, which
//     entgql's edges (Session.turns, Session.refs) are: their pages are
//     loaded with the parent's query, so the goroutine only costs.
//   - inOrderList: a list of objects none of whose fields is a resolver is
//     marshalled in order on the caller's goroutine, where gqlgen starts a
//     goroutine per element (a page of 20 sessions with 10 turns and 20 refs
//     each started 620).
//   - leafField: a scalar or enum read from a struct field, with no
//     arguments, no directives and no way to be a null where the schema
//     forbids one, is marshalled straight from the field: no field context,
//     no resolver closure, no boxing. Field middleware (AroundFields) does not
//     see such fields; the server installs none (graph/server.go).
func execFuncs(data *codegen.Data) template.FuncMap {
	hasResolver := map[string]bool{}
	for _, o := range data.Objects {
		for _, f := range o.Fields {
			if f.IsResolver {
				hasResolver[o.Name] = true
			}
		}
	}
	objects := map[string]bool{}
	for _, o := range data.Objects {
		objects[o.Name] = true
	}
	return template.FuncMap{
		// carriesJSON: an object whose Go type has a field Compiled of
		// type graphql.Marshaler is written by it when it is set
		// (graph/model.SessionConnection, set by graph's compiled reads).
		"carriesJSON": func(o *codegen.Object) bool {
			if o.Type == nil {
				return false
			}
			obj, _, _ := types.LookupFieldOrMethod(o.Type, true, nil, "Compiled")
			v, ok := obj.(*types.Var)
			return ok && v.IsField() && v.Type().String() == "github.com/99designs/gqlgen/graphql.Marshaler"
		},
		"concurrentField": func(f *codegen.Field) bool {
			return f.IsResolver && !f.Object.DisableConcurrency
		},
		"inOrderList": func(t *config.TypeReference) bool {
			name := t.Elem().Definition.Name
			return objects[name] && !hasResolver[name]
		},
		"leafField": func(f *codegen.Field) bool {
			t := f.TypeReference
			kind := t.Definition.Kind
			return !f.Object.Root && !f.IsResolver && f.IsVariable() && !f.HasHaser &&
				len(f.Args) == 0 && !f.HasDirectives() &&
				(kind == ast.Scalar || kind == ast.Enum) && !t.IsSlice() &&
				!(t.GQL.NonNull && t.IsNilable())
		},
	}
}

func render(data *codegen.Data, filename string, regionTags bool, tmpl fs.FS) error {
	return templates.Render(templates.Options{
		Funcs:           funcs,
		PackageName:     data.Config.Exec.Package,
		Filename:        filename,
		Data:            data,
		RegionTags:      regionTags,
		GeneratedHeader: true,
		Packages:        data.Config.Packages,
		TemplateFS:      tmpl,
		PruneOptions:    data.Config.GetPruneOptions(),
	})
}

// execFilename is the generated file of the schema file at p, as gqlgen
// names it.
func execFilename(p *ast.Position, cfg *config.Config) string {
	name := "common!"
	if p != nil && p.Src != nil {
		name = strings.TrimSuffix(filepath.Base(p.Src.Name), filepath.Ext(p.Src.Name))
	}
	tmpl := cfg.Exec.FilenameTemplate
	if tmpl == "" {
		tmpl = "{name}.generated.go"
	}
	return strings.ReplaceAll(tmpl, "{name}", name)
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
