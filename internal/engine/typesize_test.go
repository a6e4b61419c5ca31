package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// No type in internal/ has more than 40 methods, counting those its tests
// declare: a type with more holds more than one use case, and is split
// where its callers split.
func TestNoTypeInInternalHasMoreThanFortyMethods(t *testing.T) {
	methods := map[string]int{} // "dir.Type" → its methods
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv != nil {
				recv := fn.Recv.List[0].Type
				for {
					switch x := recv.(type) {
					case *ast.StarExpr:
						recv = x.X
						continue
					case *ast.IndexExpr: // a generic type's type parameter
						recv = x.X
						continue
					case *ast.IndexListExpr:
						recv = x.X
						continue
					}
					break
				}
				methods[filepath.Dir(path)+"."+recv.(*ast.Ident).Name]++
			}
		}
		return nil
	})
	if err != nil || len(methods) < 50 {
		t.Fatalf("the methods of %d types (the walk should see all of internal/): %v", len(methods), err)
	}
	for typ, n := range methods {
		if n > 40 {
			t.Errorf("%s has %d methods; at most 40: split it by use case", typ, n)
		}
	}
}
