package hazard

import (
	"fmt"
	"os"
)

var gstatsOn = os.Getenv("PTOASM_GSTATS") != ""

type gstat struct {
	batches, items, segs, segItems, runsBefore, groups, alone int
}

var gst gstat

func gstatsSeg(g *grouper, s, e int) {
	if e == s {
		return
	}
	gst.segs++
	gst.segItems += e - s
	gst.groups += int(max(g.ng, 1))
	for i := s; i < e; i++ {
		if i == s || g.grp[i] != g.grp[i-1] {
			gst.runsBefore++
		}
	}
}

func gstatsPrint() {
	if !gstatsOn {
		return
	}
	fmt.Fprintf(os.Stderr, "GSTATS batches %d items %d alone %d segs %d segItems %d (%.1f/seg) runsBefore %d (%.2f/run) groups %d (%.2f/group)\n",
		gst.batches, gst.items, gst.alone, gst.segs, gst.segItems, float64(gst.segItems)/float64(max(gst.segs, 1)), gst.runsBefore, float64(gst.segItems)/float64(max(gst.runsBefore, 1)), gst.groups, float64(gst.segItems)/float64(max(gst.groups, 1)))
}

var gstatsInOrder = os.Getenv("PTOASM_INORDER") != ""
