package team

import (
	"context"
	"errors"
	"strings"

	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/tasklist"
	"github.com/cohort-dev/cohort/tool"
)

// TaskLists is the store as the task-list tools reach it (tasklist.Tools):
// each team's list and members, with the store's errors the model can act
// on (the team is gone, its name cannot be one) worded for it.
func (s *Store) TaskLists() tasklist.Lists { return taskLists{s} }

type taskLists struct{ s *Store }

func (l taskLists) Tasks(team string) (*tasklist.List, error) {
	list, err := l.s.Tasks(team)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, tool.Failf("Your team no longer exists (%v).", err)
	case errors.Is(err, ErrInvalidName):
		msg := err.Error()
		return nil, tool.Failure(strings.ToUpper(msg[:1]) + msg[1:] + ".")
	}
	return list, err
}

// Notify appends a plain message from one member to another's inbox.
func (l taskLists) Notify(ctx context.Context, team, from, to, text string) error {
	mbox, err := l.s.Mailbox(team)
	if err != nil {
		return err
	}
	_, err = mbox.Append(ctx, mailbox.Message{From: from, To: to, Text: text, Summary: "task unblocked"})
	return err
}

func (l taskLists) ActiveMember(team, name string) (bool, error) {
	m, err := l.s.Member(team, name)
	if errors.Is(err, ErrNoMember) || errors.Is(err, ErrInvalidName) {
		return false, nil
	}
	return err == nil && m.IsActive, err
}
