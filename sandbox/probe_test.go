package sandbox

import "testing"

func TestReportProbe(t *testing.T) {
	e := newEnv(t, Config{})
	rep, err := e.sb.Report(t.Context(), e.project)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("landlock %d ns %v\n%s", rep.Landlock, rep.Namespaces, rep.Describe())
	out, _ := e.bash(e.project, `id; echo $$ $PPID; ls /proc | head -5; cat /proc/1/cmdline | tr '\0' ' '; echo; umount /proc 2>&1; grep Cap /proc/self/status; python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); print("unix ok")' 2>&1 | tail -1; kill -0 1 2>&1; echo x > /dev/null && echo devnull ok; echo hi > /dev/stdout; mount -t tmpfs x /tmp 2>&1`)
	t.Log(out)
}
