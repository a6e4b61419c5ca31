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

// maxMethods bounds the methods of one type in internal/: a type with more
// holds more than one use case, and is split where its callers split.
const maxMethods = 40

// No type in internal/ has more than maxMethods methods, counting those its
// tests declare.
func TestNoTypeInInternalHasMoreThanFortyMethods(t *testing.T) {
	methods := map[string]int{} // "dir.Type" → its methods
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv != nil {
				methods[filepath.Dir(path)+"."+receiverType(fn.Recv.List[0].Type)]++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(methods) < 50 {
		t.Fatalf("found the methods of %d types only: the walk missed internal/", len(methods))
	}
	for typ, n := range methods {
		if n > maxMethods {
			t.Errorf("%s has %d methods; at most %d: split it by use case", typ, n, maxMethods)
		}
	}
}

// receiverType names a method's receiver type, without pointer or type
// parameters.
func receiverType(x ast.Expr) string {
	for {
		switch v := x.(type) {
		case *ast.StarExpr:
			x = v.X
		case *ast.IndexExpr:
			x = v.X
		case *ast.IndexListExpr:
			x = v.X
		case *ast.Ident:
			return v.Name
		default:
			return "?"
		}
	}
}
