package task

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
)

// killedTailBytes bounds how much of a killed task's output file its
// notification quotes.
const killedTailBytes = 4000

// NotifyKilled tells q about the tasks of an earlier process of this
// session that never reported (Undelivered): each still pending whose
// process is gone gets a killed notification quoting the end of its output
// file, released once drained into the conversation. A pending record
// stays until then, so a crash before the notification is delivered
// makes the next resume notify again, and one after never does: each
// killed task is reported exactly once. skip reports task ids the
// conversation already holds a notification for (they are released
// without another); it may be nil. describe, when set, gives the result
// of a task whose output it can read in words (an agent's transcript);
// otherwise, and when it returns false, the result quotes the end of the
// output file. It returns the ids notified.
func (r *Registry) NotifyKilled(q *Queue, skip func(taskID string) bool, describe func(Pending) (string, bool)) ([]string, error) {
	pend, err := r.Undelivered()
	var ids []string
	for _, p := range pend {
		if p.PID != 0 && p.PID != os.Getpid() && syscall.Kill(p.PID, 0) == nil {
			continue // another process of this session still runs it
		}
		if skip != nil && skip(p.TaskID) {
			_ = r.Release(p.TaskID)
			continue
		}
		result, ok := "", false
		if describe != nil {
			result, ok = describe(p)
		}
		if !ok {
			result = fileTail(p.OutputFile, killedTailBytes)
		}
		n := Notification{TaskID: p.TaskID, Kind: p.Kind, ToolUseID: p.ToolUseID, OutputFile: p.OutputFile,
			Status: StatusKilled, Result: result,
			Summary: fmt.Sprintf("%s %q was killed: the session's process ended while it ran, and it did not finish", p.Kind, p.Description)}
		if p.Kind == KindWorkflow && p.Name != "" {
			n.Summary += fmt.Sprintf(". Its journal keeps the steps that finished: to complete it, call Workflow with resumeFromRunId %q (only the unfinished steps run again)", p.Name)
		}
		id := p.TaskID
		q.Enqueue(Item{Kind: ItemNotification, Notification: &n, delivered: func() { _ = r.Release(id) }})
		ids = append(ids, id)
	}
	return ids, err
}

// fileTail is the last n bytes of the file at path (from a line start when
// it was cut), or a note saying why there is nothing.
func fileTail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(its output file cannot be read: %v)", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(its output file cannot be read: %v)", err)
	}
	start := max(fi.Size()-n, 0)
	data, err := io.ReadAll(io.NewSectionReader(f, start, fi.Size()-start))
	if err != nil {
		return fmt.Sprintf("(its output file cannot be read: %v)", err)
	}
	text := string(data)
	if start > 0 {
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text = text[i+1:]
		}
		text = fmt.Sprintf("(the last %d bytes of its output)\n%s", len(text), text)
	}
	if strings.TrimSpace(text) == "" {
		return "(its output file is empty)"
	}
	return text
}
