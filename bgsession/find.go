package bgsession

import (
	"fmt"
	"strings"
)

// Find picks the one record query names among recs: an exact id or
// sessionId, else every record whose id or sessionId starts with query or
// whose name contains it (case-insensitive). None, or several, is an
// error that lists the candidates.
func Find(recs []Record, query string) (Record, error) {
	q := strings.TrimSpace(query)
	if q == "" {
		return Record{}, fmt.Errorf("no session named: give an id or a part of a name%s", candidates(recs))
	}
	for _, r := range recs {
		if r.ID == q || r.SessionID == q {
			return r, nil
		}
	}
	lq := strings.ToLower(q)
	var hits []Record
	for _, r := range recs {
		if strings.HasPrefix(r.ID, lq) || (r.SessionID != "" && strings.HasPrefix(r.SessionID, lq)) ||
			strings.Contains(strings.ToLower(r.Name), lq) {
			hits = append(hits, r)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return Record{}, fmt.Errorf("no background session matches %q%s", q, candidates(recs))
	}
	return Record{}, fmt.Errorf("%q matches %d sessions; give more of the id or name%s", q, len(hits), candidates(hits))
}

// candidates lists recs one a line, for an error.
func candidates(recs []Record) string {
	if len(recs) == 0 {
		return " (there are no background sessions; start one with cohort --bg)"
	}
	var b strings.Builder
	b.WriteString(":")
	for _, r := range recs {
		fmt.Fprintf(&b, "\n  %s  %-24s %s", r.ID, r.Name, r.State)
	}
	return b.String()
}
