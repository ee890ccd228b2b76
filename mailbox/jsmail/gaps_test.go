package jsmail

import (
	"testing"
	"time"
)

// TestDeliveriesCountWhatWentElsewhere: the consumer's delivery numbers
// the inbox never had are counted once, whether a later delivery shows
// the gap or the server's count at a check old enough does; deliveries
// still on the wire (made after that check) are not; a consumer made
// anew starts again from 1.
func TestDeliveriesCountWhatWentElsewhere(t *testing.T) {
	var d deliveries
	t0 := time.Unix(1000, 0)
	const grace = time.Second
	for seq := uint64(1); seq <= 3; seq++ {
		if missed, _, _ := d.handed(seq); missed != 0 {
			t.Fatalf("delivery %d in order counted %d missing", seq, missed)
		}
	}
	if missed, from, to := d.handed(6); missed != 2 || from != 4 || to != 5 {
		t.Fatalf("delivery 6 after 3: missed %d (%d to %d), want 2 (4 to 5)", missed, from, to)
	}
	if missed, _, _ := d.handed(5); missed != 0 {
		t.Fatal("a late delivery counted again")
	}
	// The server has made 8; 7 and 8 may be on the wire.
	if missed, _, _ := d.checked(8, t0, grace); missed != 0 {
		t.Fatalf("the first check counted %d missing", missed)
	}
	d.handed(7)
	if missed, _, _ := d.checked(9, t0.Add(grace/2), grace); missed != 0 {
		t.Fatalf("a check within the grace counted %d missing", missed)
	}
	if missed, from, to := d.checked(9, t0.Add(grace), grace); missed != 1 || from != 8 || to != 8 {
		t.Fatalf("8 never came: missed %d (%d to %d), want 1 (8 to 8)", missed, from, to)
	}
	if missed, _, _ := d.handed(9); missed != 0 {
		t.Fatal("9 after 8 was reported missing counted a gap")
	}
	if d.untold != 3 {
		t.Fatalf("untold = %d, want 3", d.untold)
	}
	d.reset()
	if missed, _, _ := d.handed(1); missed != 0 || d.untold != 3 {
		t.Fatalf("a consumer made anew: delivery 1 counted %d missing, untold %d", missed, d.untold)
	}
}
