package tool

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAbsPath(t *testing.T) {
	env := &Env{Caller: Caller{Cwd: "/work/repo"}}
	tests := []struct {
		name, p  string
		env      *Env
		want     string
		failText string
	}{
		{"absolute", "/work/repo/./a/../b.go", env, "/work/repo/b.go", ""},
		{"empty", "", env, "", "file_path is empty; pass the absolute path of the file"},
		{"relative", "sub/x.go", env, "",
			`file_path must be an absolute path; got "sub/x.go" (relative to the working directory that would be "/work/repo/sub/x.go")`},
		{"relative without a cwd", "x.go", nil, "", `file_path must be an absolute path; got "x.go"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AbsPath(tt.env, "file_path", tt.p)
			if tt.failText == "" {
				if err != nil || got != tt.want {
					t.Fatalf("AbsPath(%q) = %q, %v; want %q", tt.p, got, err, tt.want)
				}
				return
			}
			f, ok := err.(Failure)
			if !ok || string(f) != tt.failText {
				t.Fatalf("AbsPath(%q) error = %#v; want the Failure %q", tt.p, err, tt.failText)
			}
		})
	}
}

func TestResolvePath(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Caller: Caller{Cwd: "/work/repo/"}}
	tests := []struct {
		p    string
		env  *Env
		want string
	}{
		{"", env, "/work/repo"},
		{"src/../pkg", env, "/work/repo/pkg"},
		{"/elsewhere/./x", env, "/elsewhere/x"},
		{"sub", nil, filepath.Join(wd, "sub")},
		{"", &Env{}, wd},
	}
	for _, tt := range tests {
		if got, err := ResolvePath(tt.env, tt.p); err != nil || got != tt.want {
			t.Errorf("ResolvePath(%q) = %q, %v; want %q", tt.p, got, err, tt.want)
		}
	}
}
