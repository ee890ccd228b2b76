package sandbox

import "testing"

func TestExplain(t *testing.T) {
	w, ro := []string{"/proj", "/tmp/s"}, []string{"/proj/.git/hooks"}
	tests := []struct{ out, want string }{
		{"touch: cannot touch '/etc/x': Permission denied", "blocked by the sandbox: /etc/x is outside the writable dirs; the user can add it to sandbox.allowWrite"},
		{"bash: line 1: ../up.txt: Permission denied", "blocked by the sandbox: /up.txt is outside the writable dirs; the user can add it to sandbox.allowWrite"},
		{"PermissionError: [Errno 13] Permission denied: '/home/u/x'", "blocked by the sandbox: /home/u/x is outside the writable dirs; the user can add it to sandbox.allowWrite"},
		{"cp: cannot create regular file '.git/hooks/pre-commit': Read-only file system", "blocked by the sandbox: /proj/.git/hooks/pre-commit is a protected path (git hooks and config, settings, hook scripts), read-only for commands; change it with the Edit or Write tool, which asks the user"},
		// Go's errors say it in lower case (go test -coverprofile=/tmp/…).
		{"open /tmp/cover.out: permission denied", "blocked by the sandbox: /tmp/cover.out is outside the writable dirs; the user can add it to sandbox.allowWrite"},
		{"touch: cannot touch 'ok.txt': Permission denied", ""}, // inside: not the sandbox's doing
		{"all good", ""},
	}
	for _, tt := range tests {
		if got := Explain(tt.out, "/proj", w, ro); got != tt.want {
			t.Errorf("Explain(%q) = %q, want %q", tt.out, got, tt.want)
		}
	}
}
