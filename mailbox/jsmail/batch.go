package jsmail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// readBatch reads up to n of the inbox's messages from stream sequence
// next on, in one request: the server's batched direct get (next_by_subj
// with a batch), answered by the messages and an end-of-batch status.
// nats.go has no call for it. It reads what the server holding the
// request has stored; drain confirms the end with the stream leader.
func (in *Inbox) readBatch(ctx context.Context, next uint64, n int) ([]*jetstream.RawStreamMsg, error) {
	nc := in.t.cfg.Conn
	req, err := json.Marshal(struct {
		Seq   uint64 `json:"seq"`
		Next  string `json:"next_by_subj"`
		Batch int    `json:"batch"`
	}{next, in.t.inbox(in.agent), n})
	if err != nil {
		return nil, err
	}
	reply := nc.NewRespInbox()
	sub, err := nc.SubscribeSync(reply)
	if err != nil {
		return nil, err
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest("$JS.API.DIRECT.GET."+in.t.names.stream, reply, req); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var out []*jetstream.RawStreamMsg
	for {
		msg, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return out, err
		}
		if len(msg.Data) == 0 && msg.Header.Get("Status") != "" {
			switch msg.Header.Get("Status") {
			case "204": // end of the batch
				return out, nil
			case "404":
				return out, nil
			default:
				return out, fmt.Errorf("direct get: %s %s", msg.Header.Get("Status"), msg.Header.Get("Description"))
			}
		}
		raw, err := directMsg(msg)
		if err != nil {
			return out, err
		}
		if raw.Sequence < next || raw.Subject != in.t.inbox(in.agent) {
			return out, fmt.Errorf("direct get: sequence %d on %s, asked for %s from %d", raw.Sequence, raw.Subject, in.t.inbox(in.agent), next)
		}
		next = raw.Sequence + 1
		out = append(out, raw)
		if len(out) > n {
			return out, errors.New("direct get: more messages than asked for")
		}
	}
}

// directMsg is a direct get's answer as the stream's message get gives
// it: the server's headers taken off, the sender's left.
func directMsg(msg *nats.Msg) (*jetstream.RawStreamMsg, error) {
	h := msg.Header
	seq, err := strconv.ParseUint(h.Get(jetstream.SequenceHeader), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("direct get: sequence %q: %v", h.Get(jetstream.SequenceHeader), err)
	}
	at, err := time.Parse(time.RFC3339Nano, h.Get(jetstream.TimeStampHeaer))
	if err != nil {
		return nil, fmt.Errorf("direct get: time %q: %v", h.Get(jetstream.TimeStampHeaer), err)
	}
	subj := h.Get(jetstream.SubjectHeader)
	header := nats.Header{}
	for k, v := range h {
		switch k {
		case jetstream.StreamHeader, jetstream.SequenceHeader, jetstream.TimeStampHeaer, jetstream.SubjectHeader,
			"Nats-Num-Pending", "Nats-Last-Sequence", "Nats-UpTo-Sequence":
		default:
			header[k] = v
		}
	}
	return &jetstream.RawStreamMsg{Subject: subj, Sequence: seq, Header: header, Data: msg.Data, Time: at}, nil
}
