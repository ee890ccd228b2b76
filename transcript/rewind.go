package transcript

import (
	"errors"
	"fmt"

	"github.com/cohort-dev/cohort/llm"
)

// ErrRewritten: the transcript does not hold the place a rewind asks for.
var ErrRewritten = errors.New("the transcript does not hold that place in the conversation")

// At returns the lead transcript's history at a place: its first messages
// messages after its first boundaries boundaries (compactions and
// rewinds), as Load would have returned them when the file ended there,
// with their origins. A place that was compacted or rewound away is still
// in the file, so any earlier place can be had again.
func At(path string, boundaries, messages int) ([]llm.Message, []string, error) {
	t, err := at(path, boundaries, messages)
	if err != nil {
		return nil, nil, err
	}
	return t.Messages, t.Origins, nil
}

// at is At's transcript, its history cut at the place.
func at(path string, boundaries, messages int) (*Transcript, error) {
	t, err := load(path, boundaries)
	if err != nil {
		return nil, err
	}
	if t.Compactions != boundaries || len(t.Messages) < messages || messages < 0 {
		return nil, fmt.Errorf("%s: %w (it has %d boundaries and, after boundary %d, %d messages; the place is message %d after boundary %d)",
			path, ErrRewritten, t.Compactions, t.Compactions, len(t.Messages), messages, boundaries)
	}
	t.Messages, t.Origins = t.Messages[:messages], t.Origins[:messages]
	return t, nil
}

// Rewind takes the lead transcript at path back to a place (At): it
// appends a boundary and the place's messages, with their origins, so that
// the next Load, a resume, sends the same history bytes as the turn that
// began there and reads the prompt cache. Nothing is written when the file
// does not hold the place.
func Rewind(path string, boundaries, messages int) error {
	t, err := at(path, boundaries, messages)
	if err != nil {
		return err
	}
	w, err := Create(WriterConfig{Path: path, SessionID: t.SessionID})
	if err != nil {
		return err
	}
	note := fmt.Sprintf("the conversation was rewound to its first %d messages after boundary %d", messages, boundaries)
	err = w.Append(Entry{Type: TypeSystem, Subtype: SubtypeCompactBoundary, Content: note})
	for i := 0; i < len(t.Messages) && err == nil; i++ {
		m := t.Messages[i]
		err = w.Append(Entry{Type: string(m.Role), Message: &m, Origin: t.Origins[i]})
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}
