package mailbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Pending counts the messages in agent's inbox that its reader has not yet
// acknowledged, as seen from the files alone: it can be called from any
// process, without opening a Reader. A message is pending when its line lies
// past the cursor and its id is not among the ids acknowledged out of order
// or recently. Corrupt lines and a torn last line are not counted. The count
// is a snapshot: appends and acknowledgements may change it at once.
func (d *Dir) Pending(_ context.Context, agent string) (int, error) {
	if err := ValidateName(agent); err != nil {
		return 0, fmt.Errorf("mailbox pending: %w", err)
	}
	c, ok, err := loadCursor(d.cursorPath(agent))
	if err != nil {
		return 0, fmt.Errorf("mailbox pending %s: %w", agent, err)
	}
	f, err := os.OpenFile(d.inboxPath(agent), os.O_RDONLY|openFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("mailbox pending %s: %w", agent, ErrUnknownRecipient)
	}
	if err != nil {
		return 0, fmt.Errorf("mailbox pending %s: %w", agent, err)
	}
	defer f.Close()
	id, size, err := statFile(f)
	if err != nil {
		return 0, fmt.Errorf("mailbox pending %s: %w", agent, err)
	}
	var off int64
	switch {
	case !ok:
	case c.File == id:
		off = c.Offset
	case c.Prev != nil && c.Prev.File == id:
		off = c.Prev.Offset
	}
	if off > size {
		off = 0
	}
	done := map[string]bool{}
	for _, s := range c.Ahead {
		done[s] = true
	}
	for _, s := range c.Recent {
		done[s] = true
	}
	br := bufio.NewReaderSize(io.NewSectionReader(f, off, size-off), 64<<10)
	n := 0
	for {
		line, _, complete, tooLong, err := nextLine(br, d.cfg.MaxMessageBytes)
		if err != nil {
			return n, fmt.Errorf("mailbox pending %s: %w", agent, err)
		}
		if !complete {
			return n, nil
		}
		if tooLong {
			continue
		}
		m, err := ParseLine(line)
		if err != nil || m.To != agent || done[m.ID] {
			continue
		}
		done[m.ID] = true
		n++
	}
}
